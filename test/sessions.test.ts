import { eq } from "drizzle-orm";
import { toHex, type Address } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { beforeAll, describe, expect, it } from "vitest";
import { smartAccountAbi } from "@/contracts/artifacts";
import { accountSalt } from "@/lib/chain/accounts";
import { serviceDeployment } from "@/lib/chain/contracts";
import { getDb } from "@/lib/db/client";
import { accounts, transactionIntents } from "@/lib/db/schema";
import { newId } from "@/lib/ids";
import type { ProjectWithKeys } from "@/lib/projects/service";
import { openSigningLink } from "@/lib/signing/service";
import { call, expectError, newProject, waitForLanding } from "./helpers/api";
import { clientOf } from "./helpers/chain";

let project: ProjectWithKeys;
let key: string;
let policy: { id: string };

const UNLIMITED = 2 ** 48 - 1;
const newKey = () => privateKeyToAccount(generatePrivateKey()).address;
const chainTime = async (chainId = 31337) => Number((await clientOf(chainId).getBlock()).timestamp);
const onChainKey = (account: string, sessionKey: string, chainId = 31337) =>
  clientOf(chainId).readContract({ address: account as Address, abi: smartAccountAbi, functionName: "getSessionKey", args: [sessionKey as Address] });

async function newPlayer() {
  return (await call("POST", "/v1/players", { key, json: { name: "session holder" } })).body as { id: string };
}

beforeAll(async () => {
  project = await newProject("sessions");
  key = project.keys.test.secret;
  policy = (await call("POST", "/v1/policies", { key, json: { name: "self calls", chainId: 31337, strategy: { sponsorSchema: "pay_for_user" } } })).body;
  await call("POST", "/v1/policy_rules", { key, json: { policy: policy.id, type: "account_functions" } });
});

describe("registering a session key", () => {
  it("on a custodial account (form body with brackets): signed by the service, lands, isActive follows the chain; get, list, expand", async () => {
    const player = await newPlayer();
    const sessionKey = newKey();
    const now = await chainTime();
    const { body: contract } = await call("POST", "/v1/contracts", { key, json: { name: "EntryPoint", chainId: 31337, address: serviceDeployment().entryPoint, abi: [] } });
    const target = newKey();
    const res = await call("POST", "/v1/sessions", {
      key,
      form: { address: sessionKey, chainId: "31337", player: player.id, validAfter: String(now - 60), validUntil: String(now + 3600), limit: "3", policy: policy.id, optimistic: "true", whitelist: [target, contract.id] },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const session = res.body;
    expect(session).toMatchObject({
      object: "session",
      address: sessionKey,
      chainId: 31337,
      isActive: true,
      validAfter: String(now - 60),
      validUntil: String(now + 3600),
      limit: 3,
      whitelist: [target, serviceDeployment().entryPoint],
      player: { id: player.id },
    });
    expect(session.id).toMatch(/^ses_/);
    expect(session.nextAction).toBeUndefined();
    expect(session.transactionIntents).toHaveLength(1);
    const intent = await waitForLanding(key, session.transactionIntents[0].id);
    expect(intent).toMatchObject({ policy: { id: policy.id }, account: { id: session.account.id }, interactions: [{ functionName: "registerSessionKey" }] });
    expect(intent.response.status).toBe(1);

    const { body: account } = await call("GET", `/v1/accounts/${session.account.id}`, { key });
    const [validAfter, validUntil, limit, used, active, whitelist] = await onChainKey(account.address, sessionKey);
    expect({ validAfter, validUntil, limit, used, active, whitelist }).toEqual({ validAfter: now - 60, validUntil: now + 3600, limit: 3, used: 0, active: true, whitelist: [target, serviceDeployment().entryPoint] });

    const got = await call("GET", `/v1/sessions/${session.id}`, { key, query: { expand: ["transactionIntents"] } });
    expect(got.body).toMatchObject({ id: session.id, isActive: true, transactionIntents: [{ id: intent.id, object: "transactionIntent", response: { status: 1 } }] });

    // A second key of the same player: the list is newest first and paginated.
    const second = await call("POST", "/v1/sessions", { key, json: { address: newKey(), chainId: 31337, player: player.id, validAfter: 0, validUntil: now + 7200, policy: policy.id } });
    expect(second.status, JSON.stringify(second.body)).toBe(200);
    const page = await call("GET", "/v1/sessions", { key, query: { player: player.id, limit: 1 } });
    expect(page.body).toMatchObject({ object: "list", url: "/v1/sessions", start: 0, end: 1, total: 2, data: [{ id: second.body.id }] });
    const next = await call("GET", "/v1/sessions", { key, query: { player: player.id, limit: 1, skip: 1, expand: "transactionIntents" } });
    expect(next.body.data).toMatchObject([{ id: session.id, transactionIntents: [{ id: intent.id, object: "transactionIntent" }] }]);
    const ofAccount = await call("GET", "/v1/sessions", { key, query: { player: player.id, account: session.account.id, order: "asc" } });
    expect(ofAccount.body.data.map((s: { id: string }) => s.id)).toEqual([session.id, second.body.id]);
  }, 60_000);

  it("on an owner-held account (created by it, JSON body): nextAction with a signing link, a wrong signer refused, the owner's signature lands it", async () => {
    const player = await newPlayer();
    const owner = privateKeyToAccount(generatePrivateKey());
    const sessionKey = newKey();
    const now = await chainTime();
    const res = await call("POST", "/v1/sessions", {
      key,
      json: { address: sessionKey, chainId: 31337, player: player.id, externalOwnerAddress: owner.address, validAfter: now, validUntil: now + 600, policy: policy.id },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.isActive).toBe(false);
    expect(res.body.limit).toBeUndefined();
    const { nextAction } = res.body;
    expect(nextAction).toMatchObject({ type: "sign_with_wallet", payload: { userOperationHash: expect.stringMatching(/^0x[0-9a-f]{64}$/), userOperation: { signature: expect.any(String) } } });
    expect(nextAction.payload.signingUrl).toMatch(/\/sign\//);
    // The signing page says what the owner authorizes, in words.
    const page = await openSigningLink(await getDb(), new URL(nextAction.payload.signingUrl).searchParams.get("t") ?? undefined, res.body.transactionIntents[0].id);
    if (page.state !== "awaiting") throw new Error(JSON.stringify(page));
    expect(page.view.calls.map((c) => c.summary)).toContainEqual(
      `Lets the session key ${sessionKey} sign for your account from ${new Date(now * 1000).toISOString().slice(0, 16).replace("T", " ")} UTC until ${new Date((now + 600) * 1000).toISOString().slice(0, 16).replace("T", " ")} UTC, any number of operations, calling any contract but your account itself, only when a sponsor pays their fees`,
    );
    const { body: account } = await call("GET", `/v1/accounts/${res.body.account.id}`, { key });
    expect(account).toMatchObject({ custodial: false, ownerAddress: owner.address, player: { id: player.id } });

    // A different owner for the player's existing account is refused.
    const otherOwner = expectError(await call("POST", "/v1/sessions", { key, json: { address: newKey(), chainId: 31337, player: player.id, externalOwnerAddress: newKey(), validAfter: now, validUntil: now + 600 } }), 400);
    expect(otherOwner.details?.externalOwnerAddress).toBeDefined();

    const hash = nextAction.payload.userOperationHash;
    const stranger = privateKeyToAccount(generatePrivateKey());
    const wrong = expectError(await call("POST", `/v1/sessions/${res.body.id}/signature`, { key, json: { signature: await stranger.signMessage({ message: { raw: hash } }) } }), 400);
    expect(wrong.message).toContain(stranger.address);
    expect(wrong.details?.signature).toBeDefined();
    expectError(await call("POST", `/v1/sessions/${res.body.id}/signature`, { key, json: {} }), 400);

    const signed = await call("POST", `/v1/sessions/${res.body.id}/signature`, { key, form: { signature: await owner.signMessage({ message: { raw: hash } }), optimistic: "true" } });
    expect(signed.status, JSON.stringify(signed.body)).toBe(200);
    expect(signed.body).toMatchObject({ id: res.body.id, isActive: true });
    expect(signed.body.nextAction).toBeUndefined();
    expect((await onChainKey(account.address, sessionKey))[4]).toBe(true);
    // Nothing awaits a signature any more.
    expectError(await call("POST", `/v1/sessions/${res.body.id}/signature`, { key, json: { signature: await owner.signMessage({ message: { raw: hash } }) } }), 409);
  }, 60_000);

  it("with an Idempotency-Key, a repeated registration answers the same session (landed, when optimistic) and records nothing new", async () => {
    const player = await newPlayer();
    const now = await chainTime();
    const body = { address: newKey(), chainId: 31337, player: player.id, validAfter: now, validUntil: now + 600, policy: policy.id, optimistic: true };
    const headers = { "Idempotency-Key": `session-${player.id}` };
    const first = await call("POST", "/v1/sessions", { key, json: body, headers });
    expect(first.body.isActive, JSON.stringify(first.body)).toBe(true);
    const replay = await call("POST", "/v1/sessions", { key, json: body, headers });
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.body).toEqual(first.body);
    expect((await call("GET", "/v1/sessions", { key, query: { player: player.id } })).body.total).toBe(1);
  }, 60_000);

  it("without a policy the account pays, and without a limit the key has no use limit (2^48-1 on chain)", async () => {
    const player = await newPlayer();
    const { body: account } = await call("POST", "/v1/accounts", { key, json: { chainId: 31337, player: player.id } });
    await clientOf(31337).request({ method: "anvil_setBalance" as never, params: [account.address, toHex(10n ** 18n)] as never });
    const sessionKey = newKey();
    const now = await chainTime();
    const res = await call("POST", "/v1/sessions", { key, json: { address: sessionKey, chainId: 31337, player: player.id, validAfter: now, validUntil: now + 600, optimistic: true } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ account: { id: account.id }, isActive: true, whitelist: [] });
    expect(res.body.limit).toBeUndefined();
    const intent = (await call("GET", `/v1/transaction_intents/${res.body.transactionIntents[0].id}`, { key })).body;
    expect(intent.policy).toBeUndefined();
    expect(intent.userOperation.paymasterAndData).toBe("0x");
    expect((await onChainKey(account.address, sessionKey))[2]).toBe(UNLIMITED);
  }, 60_000);
});

describe("refusals", () => {
  it("answers each bad session with a 400 naming the parameter", async () => {
    const player = await newPlayer();
    const { body: account } = await call("POST", "/v1/accounts", { key, json: { chainId: 31337, player: player.id } });
    const now = await chainTime();
    const base = { address: newKey(), chainId: 31337, player: player.id, validAfter: now, validUntil: now + 600, policy: policy.id };
    const refused = async (body: Record<string, unknown>, param: string, message?: RegExp) => {
      const error = expectError(await call("POST", "/v1/sessions", { key, json: { ...base, ...body } }), 400, "invalid_request_error");
      expect(error.details?.[param], JSON.stringify(error)).toBeDefined();
      if (message) expect(error.message).toMatch(message);
    };
    await refused({ validUntil: now }, "validUntil", /after validAfter/);
    await refused({ validAfter: now - 600, validUntil: now - 10 }, "validUntil", /chain 31337's time/);
    await refused({ validUntil: 2 ** 48 }, "validUntil");
    await refused({ validAfter: -1 }, "validAfter");
    await refused({ limit: 0 }, "limit");
    await refused({ whitelist: Array.from({ length: 11 }, newKey) }, "whitelist", /at most 10/);
    await refused({ whitelist: [newKey(), "0x0000000000000000000000000000000000000000"] }, "whitelist[1]", /zero address/);
    await refused({ whitelist: [account.address] }, "whitelist[0]", /itself/);
    await refused({ whitelist: ["not an address"] }, "whitelist[0]");
    await refused({ whitelist: ["con_missing"] }, "whitelist[0]");
    await refused({ address: account.ownerAddress }, "address", /owner/);
    await refused({ address: account.address }, "address", /itself/);
    await refused({ address: "0x1234" }, "address");
    await refused({ player: undefined }, "player");
    await refused({ player: "pla_missing" }, "player");
    await refused({ chainId: 999 }, "chainId");
    await refused({ policy: "pol_missing" }, "policy");
    // The same rules hold for form bodies.
    const form = expectError(await call("POST", "/v1/sessions", { key, form: { ...base, chainId: "31337", validAfter: String(now), validUntil: String(now), "whitelist[0]": newKey() } }), 400);
    expect(form.details?.validUntil).toBeDefined();
  }, 60_000);

  it("refuses a second live session of a key on the account, but not one of another key", async () => {
    const player = await newPlayer();
    const now = await chainTime();
    const sessionKey = newKey();
    const body = { address: sessionKey, chainId: 31337, player: player.id, validAfter: now, validUntil: now + 600, policy: policy.id };
    const first = await call("POST", "/v1/sessions", { key, json: { ...body, optimistic: true } });
    expect(first.body.isActive, JSON.stringify(first.body)).toBe(true);
    const again = expectError(await call("POST", "/v1/sessions", { key, json: body }), 400);
    expect(again.message).toContain(first.body.id);
    expect(again.details?.address).toBeDefined();
    expect((await call("POST", "/v1/sessions", { key, json: { ...body, address: newKey() } })).status).toBe(200);

    // Sent at once for a fresh key: one registers, the other is refused, whichever order they reach the database.
    const racing = { ...body, address: newKey() };
    const answers = await Promise.all([call("POST", "/v1/sessions", { key, json: racing }), call("POST", "/v1/sessions", { key, form: { ...racing, chainId: "31337" } })]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 400]);
    expect((await call("GET", "/v1/sessions", { key, query: { player: player.id } })).body.data.filter((s: { address: string }) => s.address === racing.address)).toHaveLength(1);
  }, 60_000);

  it("registers on a managed account, and refuses an account type without session keys", async () => {
    const now = await chainTime();
    const managedPlayer = await newPlayer();
    const managed = await call("POST", "/v1/accounts", { key, json: { chainId: 31337, player: managedPlayer.id, accountType: "ManagedV5" } });
    expect(managed.status, JSON.stringify(managed.body)).toBe(200);
    const onManaged = await call("POST", "/v1/sessions", { key, json: { address: newKey(), chainId: 31337, player: managedPlayer.id, validAfter: now, validUntil: now + 600, policy: policy.id, optimistic: true } });
    expect(onManaged.body, JSON.stringify(onManaged.body)).toMatchObject({ account: { id: managed.body.id }, isActive: true });

    const player = await newPlayer();
    const db = await getDb();
    // A token-bound account follows its token's holder and has no session keys: its row as the type table describes it.
    await db.insert(accounts).values({
      id: newId("account"),
      projectId: project.id,
      livemode: false,
      playerId: player.id,
      chainId: 31337,
      address: newKey(),
      ownerAddress: newKey(),
      custodial: false,
      accountType: "ERC6551V1",
      salt: accountSalt(player.id),
    });
    const error = expectError(await call("POST", "/v1/sessions", { key, json: { address: newKey(), chainId: 31337, player: player.id, validAfter: now, validUntil: now + 600 } }), 400);
    expect(error.message).toMatch(/ERC6551V1, which has no session keys/);
  }, 60_000);

  it("X-Behalf-Of-Project must be the key's own project (header or query); another project's sessions are not found", async () => {
    const player = await newPlayer();
    const now = await chainTime();
    const body = { address: newKey(), chainId: 31337, player: player.id, validAfter: now, validUntil: now + 600, policy: policy.id };
    const other = await newProject("someone else");
    expectError(await call("POST", "/v1/sessions", { key, json: body, headers: { "X-Behalf-Of-Project": other.id } }), 403, "permission_error");
    expectError(await call("POST", "/v1/sessions", { key, json: body, query: { "X-Behalf-Of-Project": other.id } }), 403, "permission_error");
    expectError(await call("POST", "/v1/sessions/revoke", { key, json: { address: body.address, chainId: 31337, player: player.id }, headers: { "X-Behalf-Of-Project": other.id } }), 403, "permission_error");
    // The official SDK sends the text "undefined" when its caller gave no project.
    const ok = await call("POST", "/v1/sessions", { key, json: body, headers: { "X-Behalf-Of-Project": "undefined" }, query: { "X-Behalf-Of-Project": project.id } });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);

    const otherKey = other.keys.test.secret;
    expectError(await call("GET", `/v1/sessions/${ok.body.id}`, { key: otherKey }), 404);
    expectError(await call("GET", "/v1/sessions", { key: otherKey, query: { player: player.id } }), 404);
    expectError(await call("GET", `/v1/sessions/${ok.body.id}`, { key: project.keys.live.secret }), 404);
    expectError(await call("POST", `/v1/sessions/${ok.body.id}/signature`, { key: otherKey, json: { signature: "0x12" } }), 404);
    expectError(await call("GET", "/v1/sessions", { key }), 400);
    // The registration intent belongs to the session.
    const [intent] = await (await getDb()).select().from(transactionIntents).where(eq(transactionIntents.id, ok.body.transactionIntents[0].id));
    expect(intent?.sessionId).toBe(ok.body.id);
  }, 60_000);
});
