import { decodeJwt } from "jose";
import { encodeFunctionData, parseEther, toHex, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { GET as statusRoute } from "@/app/sign/[id]/status/route";
import { POST as signatureRoute } from "@/app/sign/[id]/signature/route";
import { entryPointAbi } from "@/contracts/artifacts";
import { serviceDeployment } from "@/lib/chain/contracts";
import { getDb } from "@/lib/db/client";
import { getIntent, SPONSORSHIP_SECONDS } from "@/lib/intents/service";
import { openSigningLink } from "@/lib/signing/service";
import { linkExpiry, signingToken, UNSPONSORED_LINK_SECONDS, verifySigningToken } from "@/lib/intents/signing-link";
import { call, expectError, newProject, waitForLanding } from "./helpers/api";
import { clientOf } from "./helpers/chain";

const ENTRY_POINT_ABI = entryPointAbi.filter((item) => item.type === "function" && item.name === "depositTo");

let key: string;
let projectId: string;
let entryPoint: { id: string };
let policy: { id: string; name: string };

/** A sponsored depositTo(paymaster) intent of a fresh non-custodial account: it awaits `owner`'s signature. */
async function awaitingIntent(owner = privateKeyToAccount(generatePrivateKey())) {
  const res = await call("POST", "/v1/transaction_intents", {
    key,
    json: { chainId: 31337, externalOwnerAddress: owner.address, policy: policy.id, interactions: [{ contract: entryPoint.id, functionName: "depositTo", functionArgs: [serviceDeployment().paymaster] }] },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return { owner, intent: res.body };
}

const tokenOfUrl = (url: string) => new URL(url).searchParams.get("t")!;

async function signRoute(id: string, body: Record<string, unknown>) {
  const res = await signatureRoute(new Request(`http://127.0.0.1:3000/sign/${id}/signature`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) }), {
    params: Promise.resolve({ id }),
  });
  return { status: res.status, body: await res.json(), headers: res.headers };
}

async function statusOf(id: string, token: string) {
  const res = await statusRoute(new Request(`http://127.0.0.1:3000/sign/${id}/status?t=${encodeURIComponent(token)}`), { params: Promise.resolve({ id }) });
  return { status: res.status, body: await res.json(), headers: res.headers };
}

beforeAll(async () => {
  // waitForLanding polls the intent with this key every 50 ms: the per-key API rate limit
  // (tested in auth.test.ts) is not what this file is about.
  vi.stubEnv("RATE_LIMIT_PER_SECOND", "0");
  const project = await newProject("signing");
  key = project.keys.test.secret;
  projectId = project.id;
  entryPoint = (await call("POST", "/v1/contracts", { key, json: { name: "EntryPoint", chainId: 31337, address: serviceDeployment().entryPoint, abi: ENTRY_POINT_ABI } })).body;
  policy = (await call("POST", "/v1/policies", { key, json: { name: "sign page sponsor", chainId: 31337, strategy: { sponsorSchema: "pay_for_user" } } })).body;
  const rule = await call("POST", "/v1/policy_rules", { key, json: { policy: policy.id, type: "contract_functions", contract: entryPoint.id, functionName: "depositTo" } });
  expect(rule.status, JSON.stringify(rule.body)).toBe(200);
});

describe("signing tokens", () => {
  const intent = { id: "tin_signing", projectId: "pro_signing", livemode: false, sponsored: true, createdAt: new Date() };

  it("round-trip to the intent's project and mode", async () => {
    const token = await signingToken(intent);
    expect(await verifySigningToken(token, intent.id)).toEqual({ projectId: "pro_signing", livemode: false });
    expect(decodeJwt(token)).toMatchObject({ sub: intent.id, exp: linkExpiry(intent) });
  });

  it("expire with the sponsorship, or an hour after issue when unsponsored", async () => {
    const now = Date.now();
    expect(linkExpiry(intent, now)).toBe(Math.floor(intent.createdAt.getTime() / 1000) + SPONSORSHIP_SECONDS);
    expect(linkExpiry({ ...intent, sponsored: false }, now)).toBe(Math.floor(now / 1000) + UNSPONSORED_LINK_SECONDS);
    const token = await signingToken(intent, now);
    await expect(verifySigningToken(token, intent.id, now + (SPONSORSHIP_SECONDS + 5) * 1000)).rejects.toMatchObject({ problem: "expired", status: 401 });
    const old = await signingToken({ ...intent, createdAt: new Date(now - (SPONSORSHIP_SECONDS + 60) * 1000) }, now);
    await expect(verifySigningToken(old, intent.id, now)).rejects.toMatchObject({ problem: "expired" });
  });

  it("refuse another intent, an altered token and garbage", async () => {
    const token = await signingToken(intent);
    await expect(verifySigningToken(token, "tin_other")).rejects.toMatchObject({ problem: "wrong_intent", status: 401 });
    const [header, payload, signature] = token.split(".");
    const forged = Buffer.from(JSON.stringify({ ...decodeJwt(token), sub: "tin_other" })).toString("base64url");
    await expect(verifySigningToken(`${header}.${forged}.${signature}`, "tin_other")).rejects.toMatchObject({ problem: "invalid" });
    const flipped = signature!.slice(0, -2) + (signature!.endsWith("AA") ? "BB" : "AA");
    await expect(verifySigningToken(`${header}.${payload}.${flipped}`, intent.id)).rejects.toMatchObject({ problem: "invalid" });
    await expect(verifySigningToken("not-a-token", intent.id)).rejects.toMatchObject({ problem: "invalid" });
  });
});

describe("signing links", () => {
  it("point to the origin the request came to, a trusted proxy's forwarded host, or PUBLIC_URL when set", async () => {
    const { intent } = await awaitingIntent();
    const forwarded = { "x-forwarded-host": "wallet.example.com", "x-forwarded-proto": "https" };
    // Without TRUST_PROXY a forged X-Forwarded-Host cannot send the link (and its token) elsewhere.
    const forged = await call("GET", `/v1/transaction_intents/${intent.id}`, { key, headers: forwarded });
    expect(forged.body.nextAction.payload.signingUrl).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:3000/sign/${intent.id}\\?t=`));
    vi.stubEnv("TRUST_PROXY", "1");
    try {
      const viaProxy = await call("GET", `/v1/transaction_intents/${intent.id}`, { key, headers: forwarded });
      expect(viaProxy.body.nextAction.payload.signingUrl).toMatch(new RegExp(`^https://wallet\\.example\\.com/sign/${intent.id}\\?t=`));
    } finally {
      vi.stubEnv("TRUST_PROXY", "");
    }
    vi.stubEnv("PUBLIC_URL", "https://pay.example.org/");
    try {
      const listed = await call("GET", "/v1/transaction_intents", { key, query: { account: [intent.account.id] } });
      expect(listed.body.data[0].nextAction.payload.signingUrl).toMatch(new RegExp(`^https://pay\\.example\\.org/sign/${intent.id}\\?t=`));
    } finally {
      // empty is unset (publicOrigin trims it), for the tests after this one
      vi.stubEnv("PUBLIC_URL", "");
    }
  });
});

describe("the signing page", () => {
  it("shows what will be executed, lands the owner's signature, then stops working", async () => {
    const { owner, intent } = await awaitingIntent();
    const url: string = intent.nextAction.payload.signingUrl;
    expect(url).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:3000/sign/${intent.id}\\?t=`));
    const token = tokenOfUrl(url);
    // GET and list show the link too.
    expect((await call("GET", `/v1/transaction_intents/${intent.id}`, { key })).body.nextAction.payload.signingUrl).toMatch(/\/sign\/tin_/);

    const db = await getDb();
    const page = await openSigningLink(db, token, intent.id);
    if (page.state !== "awaiting") throw new Error(`not awaiting: ${JSON.stringify(page)}`);
    const { body: account } = await call("GET", `/v1/accounts/${intent.account.id}`, { key });
    expect(page.view).toMatchObject({
      intentId: intent.id,
      chainId: 31337,
      accountId: account.id,
      accountAddress: account.address,
      ownerAddress: owner.address,
      userOperationHash: intent.userOperationHash,
      policy: { id: policy.id, name: "sign page sponsor" },
      interactions: [{ to: serviceDeployment().entryPoint, contract: { id: entryPoint.id, name: "EntryPoint" }, functionName: "depositTo", args: JSON.stringify([serviceDeployment().paymaster]), value: "0 ETH" }],
    });
    expect((await statusOf(intent.id, token)).body).toMatchObject({ status: "awaiting_signature", final: false });

    const signature = await owner.signMessage({ message: { raw: intent.userOperationHash as Hex } });
    const accepted = await signRoute(intent.id, { token, signature });
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(200);
    expect(accepted.body.status).toBe("pending");
    const done = await waitForLanding(key, intent.id);
    expect(done.response.status).toBe(1);
    const receipt = await clientOf(31337).getTransactionReceipt({ hash: done.response.transactionHash });
    expect(receipt.status).toBe("success");

    // Signed: the page says so, a second signature is refused, the status still reads.
    expect(await openSigningLink(db, token, intent.id)).toMatchObject({ state: "not_awaiting", status: { status: expect.stringMatching(/broadcast|successful/) } });
    expect(expectError(await signRoute(intent.id, { token, signature }), 409).message).toMatch(/no longer awaits a signature/);
    expect((await statusOf(intent.id, token)).body).toMatchObject({ status: expect.stringMatching(/broadcast|successful/), transactionHash: done.response.transactionHash });
  });

  it("refuses a wrong signer, a malformed signature and bad tokens with 4xx, and the intent keeps waiting", async () => {
    const { intent } = await awaitingIntent();
    const token = tokenOfUrl(intent.nextAction.payload.signingUrl);
    const stranger = privateKeyToAccount(generatePrivateKey());
    const wrong = await stranger.signMessage({ message: { raw: intent.userOperationHash as Hex } });
    expect(expectError(await signRoute(intent.id, { token, signature: wrong }), 400).message).toContain(stranger.address);
    expectError(await signRoute(intent.id, { token, signature: "0x1234" }), 400);
    expectError(await signRoute(intent.id, { token, signature: "not hex" }), 400);
    expectError(await signRoute(intent.id, { token }), 400);
    expectError(await signRoute(intent.id, { signature: wrong }), 400);
    expectError(await signRoute(intent.id, { token: `${token}x`, signature: wrong }), 401, "authentication_error");
    const other = await awaitingIntent();
    const otherToken = tokenOfUrl(other.intent.nextAction.payload.signingUrl);
    expect(expectError(await signRoute(intent.id, { token: otherToken, signature: wrong }), 401).message).toMatch(/another transaction intent/);
    expectError(await statusOf(intent.id, "garbage"), 401);
    const bad = await signatureRoute(new Request(`http://127.0.0.1:3000/sign/${intent.id}/signature`, { method: "POST", headers: { "content-type": "application/json" }, body: "{" }), {
      params: Promise.resolve({ id: intent.id }),
    });
    expect(bad.status).toBe(400);
    expect((await getIntent(await getDb(), { projectId, livemode: false }, intent.id)).status).toBe("awaiting_signature");
    expect((await openSigningLink(await getDb(), `${token}x`, intent.id)).state).toBe("invalid");
    expect((await openSigningLink(await getDb(), undefined, intent.id)).state).toBe("invalid");
  });

  it("decodes a raw call to a registered contract, and shows an unsponsored intent as paid by the account", async () => {
    const owner = privateKeyToAccount(generatePrivateKey());
    const data = encodeFunctionData({ abi: ENTRY_POINT_ABI, functionName: "depositTo", args: [owner.address] });
    // Unsponsored, the account pays its gas: fund it first.
    const { body: account } = await call("POST", "/v1/accounts", { key, json: { chainId: 31337, externalOwnerAddress: owner.address } });
    await clientOf(31337).request({ method: "anvil_setBalance" as never, params: [account.address, toHex(parseEther("1"))] as never });
    const res = await call("POST", "/v1/transaction_intents", {
      key,
      json: { chainId: 31337, account: account.id, interactions: [{ to: serviceDeployment().entryPoint, data, value: "1000" }] },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const page = await openSigningLink(await getDb(), tokenOfUrl(res.body.nextAction.payload.signingUrl), res.body.id);
    if (page.state !== "awaiting") throw new Error(JSON.stringify(page));
    expect(page.view.policy).toBeNull();
    expect(page.view.interactions).toEqual([{ to: serviceDeployment().entryPoint, contract: { id: entryPoint.id, name: "EntryPoint" }, functionName: "depositTo", args: JSON.stringify([owner.address]), data: null, value: "0.000000000000001 ETH" }]);
  });
});
