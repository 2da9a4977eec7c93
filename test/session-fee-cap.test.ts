import { encodeFunctionData, parseEther, toHex, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { beforeAll, describe, expect, it } from "vitest";
import { GET as openapi } from "@/app/v1/openapi.json/route";
import { entryPointAbi, smartAccountAbi } from "@/contracts/artifacts";
import { serviceDeployment } from "@/lib/chain/contracts";
import { sessionItems } from "@/lib/dashboard/sessions";
import { getDb } from "@/lib/db/client";
import { describeRevert, revertDataOf, toEntryPointOp } from "@/lib/chain/userop";
import { deserializeUserOp } from "@/lib/intent-records/userop-json";
import type { ProjectWithKeys } from "@/lib/projects/service";
import { call, expectError, newProject, waitForLanding } from "./helpers/api";
import { clientOf } from "./helpers/chain";

// The fee a session key may make its account pay (SmartAccount's maxFeePerOp), as the sessions API registers it.

let key: string;
let project: ProjectWithKeys;
let policy: { id: string };

const client = () => clientOf(31337);
const newAddress = () => privateKeyToAccount(generatePrivateKey()).address;
const chainTime = async () => Number((await client().getBlock()).timestamp);
const onChainKey = (account: string, sessionKey: string) =>
  client().readContract({ address: account as Address, abi: smartAccountAbi, functionName: "getSessionKey", args: [sessionKey as Address] });
const signHash = (signer: PrivateKeyAccount, intent: { userOperationHash: string }) => signer.signMessage({ message: { raw: intent.userOperationHash as Hex } });
const submit = (id: string, signature: Hex) => call("POST", `/v1/transaction_intents/${id}/signature`, { key, json: { signature } });

/** The op signed by `signature`, sent straight to the EntryPoint (handleOps as eth_call): the chain's verdict. */
async function chainVerdict(intent: { userOperation: Record<string, string> }, signature: Hex): Promise<string> {
  const bundler = newAddress();
  const op = toEntryPointOp(deserializeUserOp({ ...intent.userOperation, signature }));
  try {
    await client().call({ account: bundler, to: serviceDeployment().entryPoint, data: encodeFunctionData({ abi: entryPointAbi, functionName: "handleOps", args: [[op], bundler] }) });
  } catch (err) {
    const data = revertDataOf(err);
    if (data) return describeRevert(data);
    throw err;
  }
  return "accepted";
}

/** A session registered (landed, sponsored) on a new player's account held by `owner`, the account then holding 1 ETH. */
async function registered(owner: PrivateKeyAccount, extra: Record<string, unknown> = {}) {
  const { body: player } = await call("POST", "/v1/players", { key, json: { name: "fee cap" } });
  const sessionKey = privateKeyToAccount(generatePrivateKey());
  const now = await chainTime();
  const res = await call("POST", "/v1/sessions", {
    key,
    json: { address: sessionKey.address, chainId: 31337, player: player.id, externalOwnerAddress: owner.address, validAfter: now - 60, validUntil: now + 3600, policy: policy.id, ...extra },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const signed = await call("POST", `/v1/sessions/${res.body.id}/signature`, { key, json: { signature: await owner.signMessage({ message: { raw: res.body.nextAction.payload.userOperationHash } }) } });
  expect(signed.status, JSON.stringify(signed.body)).toBe(200);
  const registration = res.body.transactionIntents[0].id as string;
  expect((await waitForLanding(key, registration)).response.status).toBe(1);
  const { body: account } = await call("GET", `/v1/accounts/${res.body.account.id}`, { key });
  await client().request({ method: "anvil_setBalance" as never, params: [account.address, toHex(parseEther("1"))] as never });
  return { session: res.body, registration, sessionKey, account: account as { id: string; address: Address } };
}

const intentTo = (accountId: string, target: Address, extra: Record<string, unknown> = {}) =>
  call("POST", "/v1/transaction_intents", { key, json: { chainId: 31337, account: accountId, interactions: [{ to: target, value: "1" }], ...extra } });

beforeAll(async () => {
  project = await newProject("session fee cap");
  key = project.keys.test.secret;
  ({ body: policy } = await call("POST", "/v1/policies", { key, json: { name: "sponsor all", chainId: 31337, strategy: { sponsorSchema: "pay_for_user" } } }));
  await call("POST", "/v1/policy_rules", { key, json: { policy: policy.id, type: "account_functions" } });
  // Any call (raw native transfers included): the sponsored session-key intents below.
  const rule = await call("POST", "/v1/policy_rules", { key, json: { policy: policy.id, type: "contract_functions", wildcard: true } });
  expect(rule.status, JSON.stringify(rule.body)).toBe(200);
});

describe("a session key's fee cap (maxFeePerOp)", () => {
  it("is carried by the registration (calldata, chain, answer), as JSON or form; bad values are 400s naming it", async () => {
    const owner = privateKeyToAccount(generatePrivateKey());
    const cap = parseEther("0.002");
    const r = await registered(owner, { maxFeePerOp: cap.toString() });
    expect(r.session.maxFeePerOp).toBe(cap.toString());
    const { body: intent } = await call("GET", `/v1/transaction_intents/${r.registration}`, { key });
    expect(intent.interactions[0].functionArgs.at(-1)).toBe(cap.toString());
    expect((await onChainKey(r.account.address, r.sessionKey.address))[6]).toBe(cap);
    expect((await call("GET", `/v1/sessions/${r.session.id}`, { key })).body.maxFeePerOp).toBe(cap.toString());
    // The dashboard's session rows (player and account pages) carry it too.
    const { items } = await sessionItems(await getDb(), { projectId: project.id, livemode: false }, { player: r.session.player.id, skip: 0 });
    expect(items.map((s) => s.maxFeePerOp)).toEqual([cap.toString()]);

    const { body: player } = await call("POST", "/v1/players", { key, json: { name: "form" } });
    const now = await chainTime();
    const base = { address: newAddress(), chainId: "31337", player: player.id, validAfter: String(now), validUntil: String(now + 600), policy: policy.id };
    const viaForm = await call("POST", "/v1/sessions", { key, form: { ...base, maxFeePerOp: "12345" } });
    expect(viaForm.status, JSON.stringify(viaForm.body)).toBe(200);
    expect(viaForm.body.maxFeePerOp).toBe("12345");

    // The OpenAPI document shows the field as the wei string it is, not as the coercion that also takes a number.
    const doc = await openapi(new Request("http://127.0.0.1:3000/v1/openapi.json")).json();
    expect(doc.paths["/v1/sessions"].post.requestBody.content["application/json"].schema.properties.maxFeePerOp).toMatchObject({ type: "string", pattern: "^\\d{1,39}$" });

    for (const bad of ["-1", "1.5", "0x10", "abc", (2n ** 128n).toString(), -1]) {
      const error = expectError(await call("POST", "/v1/sessions", { key, json: { ...base, chainId: 31337, validAfter: now, validUntil: now + 600, address: newAddress(), maxFeePerOp: bad } }), 400);
      expect(error.details?.maxFeePerOp, `${bad}: ${JSON.stringify(error)}`).toBeDefined();
    }
  }, 90_000);

  it("omitted: 0, sponsored operations only. An unsponsored op the key signed is a 400 and the chain refuses it (AA24); a sponsored one lands", async () => {
    const owner = privateKeyToAccount(generatePrivateKey());
    const r = await registered(owner);
    expect(r.session.maxFeePerOp).toBe("0");
    expect((await onChainKey(r.account.address, r.sessionKey.address))[6]).toBe(0n);
    const target = newAddress();

    const unsponsored = (await intentTo(r.account.id, target)).body;
    expect(unsponsored.userOperation.paymasterAndData).toBe("0x");
    const signature = await signHash(r.sessionKey, unsponsored);
    const refused = expectError(await submit(unsponsored.id, signature), 400);
    expect(refused.message).toMatch(/signs only operations a paymaster pays for/);
    expect(await chainVerdict(unsponsored, signature)).toMatch(/AA24 signature error/);
    // With `session`, refused at creation, naming the session.
    const atCreation = expectError(await intentTo(r.account.id, target, { session: r.session.id }), 400);
    expect(atCreation.details?.session?.message).toMatch(/paymaster pays for/);

    const sponsored = await intentTo(r.account.id, target, { session: r.session.id, policy: policy.id });
    expect(sponsored.status, JSON.stringify(sponsored.body)).toBe(200);
    const balance = await client().getBalance({ address: r.account.address });
    expect((await submit(sponsored.body.id, await signHash(r.sessionKey, sponsored.body))).status).toBe(200);
    expect((await waitForLanding(key, sponsored.body.id)).response.status).toBe(1);
    expect(await client().getBalance({ address: target })).toBe(1n);
    expect(await client().getBalance({ address: r.account.address })).toBe(balance - 1n);
  }, 90_000);

  it("an op that may cost more than the cap is refused before it is recorded; within the cap it lands, paid by the account", async () => {
    const owner = privateKeyToAccount(generatePrivateKey());
    const tiny = await registered(owner, { maxFeePerOp: "1" });
    const over = expectError(await intentTo(tiny.account.id, newAddress(), { session: tiny.session.id }), 400);
    expect(over.details?.session?.message).toMatch(/over session key .* cap of 1 wei per operation \(maxFeePerOp\)/);

    const r = await registered(owner, { maxFeePerOp: parseEther("0.01").toString() });
    const target = newAddress();
    const created = await intentTo(r.account.id, target, { session: r.session.id });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect((await submit(created.body.id, await signHash(r.sessionKey, created.body))).status).toBe(200);
    expect((await waitForLanding(key, created.body.id)).response.status).toBe(1);
    expect(await client().getBalance({ address: target })).toBe(1n);
  }, 90_000);
});
