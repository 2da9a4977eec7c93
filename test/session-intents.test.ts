import Openfort from "@openfort/openfort-node";
import { eq } from "drizzle-orm";
import { encodeFunctionData, parseEther, toHex, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { entryPointAbi, smartAccountAbi } from "@/contracts/artifacts";
import { ensureRunner } from "@/inngest/jobs";
import { serviceDeployment } from "@/lib/chain/contracts";
import { describeRevert, revertDataOf, toEntryPointOp } from "@/lib/chain/userop";
import { getDb } from "@/lib/db/client";
import { transactionIntents } from "@/lib/db/schema";
import { deserializeUserOp } from "@/lib/intent-records/userop-json";
import type { ProjectWithKeys } from "@/lib/projects/service";
import { call, expectError, newProject, waitForLanding } from "./helpers/api";
import { clientOf } from "./helpers/chain";
import { routeServer } from "./helpers/sdk-server";

let project: ProjectWithKeys;
let key: string;
let policy: { id: string };
let sdkServer: Awaited<ReturnType<typeof routeServer>>;

const client = () => clientOf(31337);
const newAddress = () => privateKeyToAccount(generatePrivateKey()).address;
const chainTime = async () => Number((await client().getBlock()).timestamp);
const sessionKeyOf = (account: string, sessionKey: string) =>
  client().readContract({ address: account as Address, abi: smartAccountAbi, functionName: "getSessionKey", args: [sessionKey as Address] });

async function moveChainTime(seconds: number) {
  await client().request({ method: "evm_increaseTime" as never, params: [toHex(seconds)] as never });
  await client().request({ method: "evm_mine" as never, params: [] as never });
}

interface Registered {
  session: { id: string; address: Address };
  sessionKey: PrivateKeyAccount;
  account: { id: string; address: Address; ownerAddress: Address };
  owner?: PrivateKeyAccount;
}

/**
 * A session key registered through the sessions API on a new player's account (custodial, or owned by `owner`, who
 * signs the registration), landed; the account then holds 1 ETH to pay its own gas (the intents here are not sponsored,
 * so the key is registered with a fee cap: 0.01 ETH per op).
 */
async function registered(options: { owner?: PrivateKeyAccount; limit?: number; whitelist?: Address[]; validAfter?: number; validUntil?: number } = {}): Promise<Registered> {
  const { body: player } = await call("POST", "/v1/players", { key, json: { name: "session user" } });
  const sessionKey = privateKeyToAccount(generatePrivateKey());
  const now = await chainTime();
  const res = await call("POST", "/v1/sessions", {
    key,
    json: {
      address: sessionKey.address,
      chainId: 31337,
      player: player.id,
      validAfter: options.validAfter ?? now - 60,
      validUntil: options.validUntil ?? now + 3600,
      ...(options.limit !== undefined && { limit: options.limit }),
      ...(options.whitelist && { whitelist: options.whitelist }),
      ...(options.owner && { externalOwnerAddress: options.owner.address }),
      maxFeePerOp: parseEther("0.01").toString(),
      policy: policy.id,
    },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  if (options.owner) {
    const signature = await options.owner.signMessage({ message: { raw: res.body.nextAction.payload.userOperationHash } });
    const signed = await call("POST", `/v1/sessions/${res.body.id}/signature`, { key, json: { signature } });
    expect(signed.status, JSON.stringify(signed.body)).toBe(200);
  }
  expect((await waitForLanding(key, res.body.transactionIntents[0].id)).response.status).toBe(1);
  const { body: account } = await call("GET", `/v1/accounts/${res.body.account.id}`, { key });
  await client().request({ method: "anvil_setBalance" as never, params: [account.address, toHex(parseEther("1"))] as never });
  return { session: res.body, sessionKey, account, owner: options.owner };
}

/** An intent sending `wei` to each target from the account, with `session` when given (JSON, or form). */
async function intentTo(r: Registered, targets: Address[], options: { session?: boolean; form?: boolean; wei?: number } = {}) {
  const interactions = targets.map((to) => ({ to, value: String(options.wei ?? 1) }));
  const body = { chainId: 31337, account: r.account.id, interactions, ...(options.session && { session: r.session.id }) };
  return options.form
    ? call("POST", "/v1/transaction_intents", { key, form: { ...body, chainId: "31337" } })
    : call("POST", "/v1/transaction_intents", { key, json: body });
}

const signHash = (signer: PrivateKeyAccount, intent: { userOperationHash: string }) => signer.signMessage({ message: { raw: intent.userOperationHash as Hex } });

const submit = (intentId: string, signature: Hex, form = false) =>
  call("POST", `/v1/transaction_intents/${intentId}/signature`, form ? { key, form: { signature } } : { key, json: { signature } });

/**
 * The same op, signed by `signature`, sent straight to the EntryPoint (handleOps, as eth_call), bypassing the API:
 * the FailedOp reason the chain gives, or "accepted".
 */
async function chainVerdict(intent: { userOperation: Record<string, string> }, signature: Hex): Promise<string> {
  const op = deserializeUserOp({ ...intent.userOperation, signature });
  const bundler = newAddress();
  try {
    await client().call({ account: bundler, to: serviceDeployment().entryPoint, data: encodeFunctionData({ abi: entryPointAbi, functionName: "handleOps", args: [[toEntryPointOp(op)], bundler] }) });
  } catch (err) {
    const data = revertDataOf(err);
    if (data) return describeRevert(data);
    throw err;
  }
  return "accepted";
}

const storedIntent = async (id: string) => (await (await getDb()).select().from(transactionIntents).where(eq(transactionIntents.id, id)))[0]!;
const intentCount = async (accountId: string) => (await (await getDb()).select({ id: transactionIntents.id }).from(transactionIntents).where(eq(transactionIntents.accountId, accountId))).length;

beforeAll(async () => {
  project = await newProject("session intents");
  key = project.keys.test.secret;
  ({ body: policy } = await call("POST", "/v1/policies", { key, json: { name: "self calls", chainId: 31337, strategy: { sponsorSchema: "pay_for_user" } } }));
  await call("POST", "/v1/policy_rules", { key, json: { policy: policy.id, type: "account_functions" } });
  sdkServer = await routeServer();
});

afterAll(() => sdkServer?.close());

describe("intents signed by a session key", () => {
  it("on a custodial account: created with `session` they wait for the key's signature (JSON and form), then land and use the key", async () => {
    const target = newAddress();
    const r = await registered({ limit: 5, whitelist: [target] });

    const created = await intentTo(r, [target], { session: true });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    // Custodial, but the service did not sign: the session's key does.
    expect(created.body.nextAction).toMatchObject({ type: "sign_with_wallet", payload: { userOperationHash: created.body.userOperationHash } });
    expect((await storedIntent(created.body.id)).status).toBe("awaiting_signature");
    const keySignature = await signHash(r.sessionKey, created.body);
    // The helper that shows the chain refusing the ops below accepts this one.
    expect(await chainVerdict(created.body, keySignature)).toBe("accepted");
    const signed = await submit(created.body.id, keySignature);
    expect(signed.status, JSON.stringify(signed.body)).toBe(200);
    expect((await waitForLanding(key, created.body.id)).response.status).toBe(1);
    expect(await storedIntent(created.body.id)).toMatchObject({ sessionId: r.session.id, status: "successful" });

    const viaForm = await intentTo(r, [target], { session: true, form: true });
    expect(viaForm.status, JSON.stringify(viaForm.body)).toBe(200);
    expect((await submit(viaForm.body.id, await signHash(r.sessionKey, viaForm.body), true)).status).toBe(200);
    expect((await waitForLanding(key, viaForm.body.id)).response.status).toBe(1);

    expect(await client().getBalance({ address: target })).toBe(2n);
    expect((await sessionKeyOf(r.account.address, r.sessionKey.address))[3]).toBe(2); // used
    // Without `session` the service signs as before.
    const plain = await intentTo(r, [target]);
    expect(plain.body.nextAction).toBeUndefined();
    expect((await waitForLanding(key, plain.body.id)).response.status).toBe(1);
  }, 90_000);

  it("on an owner-held account: the key's signature lands an intent (with or without `session`), and the owner's still does", async () => {
    const owner = privateKeyToAccount(generatePrivateKey());
    const r = await registered({ owner });
    const target = newAddress();

    const plain = await intentTo(r, [target], { form: true });
    expect(plain.body.nextAction).toMatchObject({ type: "sign_with_wallet" });
    expect((await submit(plain.body.id, await signHash(r.sessionKey, plain.body), true)).status).toBe(200);
    expect((await waitForLanding(key, plain.body.id)).response.status).toBe(1);
    expect((await storedIntent(plain.body.id)).sessionId).toBe(r.session.id);

    const withSession = await intentTo(r, [target], { session: true });
    expect(withSession.status, JSON.stringify(withSession.body)).toBe(200);
    expect((await submit(withSession.body.id, await signHash(r.sessionKey, withSession.body))).status).toBe(200);
    expect((await waitForLanding(key, withSession.body.id)).response.status).toBe(1);

    // The official SDK's transactionIntents.signature, unchanged, with the key's signature.
    const viaSdk = await intentTo(r, [target]);
    const openfort = new Openfort(key, sdkServer.url);
    const sdkSigned = await openfort.transactionIntents.signature({ id: viaSdk.body.id, signature: await signHash(r.sessionKey, viaSdk.body) });
    expect(sdkSigned.id).toBe(viaSdk.body.id);
    expect((await waitForLanding(key, viaSdk.body.id)).response.status).toBe(1);

    const byOwner = await intentTo(r, [target]);
    expect((await submit(byOwner.body.id, await signHash(owner, byOwner.body))).status).toBe(200);
    expect((await waitForLanding(key, byOwner.body.id)).response.status).toBe(1);
    expect((await storedIntent(byOwner.body.id)).sessionId).toBeNull();

    expect(await client().getBalance({ address: target })).toBe(4n);
    expect((await sessionKeyOf(r.account.address, r.sessionKey.address))[3]).toBe(3);
  }, 90_000);
});

describe("refused before anything is sent, and by the chain as well", () => {
  it("a call outside the whitelist, or to the account itself: 400 at signature and at creation; the EntryPoint refuses it (AA24)", async () => {
    const allowed = newAddress();
    const r = await registered({ owner: privateKeyToAccount(generatePrivateKey()), whitelist: [allowed] });
    const outsider = newAddress();

    const intent = (await intentTo(r, [allowed, outsider])).body;
    const signature = await signHash(r.sessionKey, intent);
    const refused = expectError(await submit(intent.id, signature), 400);
    expect(refused.message).toMatch(new RegExp(`target ${outsider} is not in session key ${r.sessionKey.address}'s whitelist`));
    expect(refused.details?.signature?.message).toMatch(/not in session key .* whitelist/);
    expect((await storedIntent(intent.id)).status).toBe("awaiting_signature");
    expect(await chainVerdict(intent, signature)).toMatch(/AA24 signature error/);

    // The account itself, even in an owner-held account's intent.
    const selfCall = encodeFunctionData({ abi: smartAccountAbi, functionName: "addGuardian", args: [outsider] });
    const own = (await call("POST", "/v1/transaction_intents", { key, json: { chainId: 31337, account: r.account.id, interactions: [{ to: r.account.address, data: selfCall }] } })).body;
    const ownSignature = await signHash(r.sessionKey, own);
    expect(expectError(await submit(own.id, ownSignature), 400).message).toMatch(/may not call the account itself/);
    expect(await chainVerdict(own, ownSignature)).toMatch(/AA24 signature error/);

    // With `session`, the same refusal at creation, naming the session, and nothing recorded.
    const before = await intentCount(r.account.id);
    const atCreation = expectError(await intentTo(r, [outsider], { session: true, form: true }), 400);
    expect(atCreation.details?.session).toMatchObject({ value: r.session.id, message: expect.stringMatching(new RegExp(`target ${outsider} is not in`)) });
    expect(await intentCount(r.account.id)).toBe(before);
  }, 90_000);

  it("a key not valid yet, then expired by the chain's clock: 400s, and the EntryPoint refuses (AA22)", async () => {
    const now = await chainTime();
    const r = await registered({ validAfter: now + 600, validUntil: now + 1200 });
    const target = newAddress();
    // Custodial: built for the key at creation would be refused already; an intent is built before, with the key valid later.
    const early = expectError(await intentTo(r, [target], { session: true }), 400);
    expect(early.details?.session?.message).toMatch(/is not valid yet: valid from/);

    const ownerHeld = await registered({ owner: privateKeyToAccount(generatePrivateKey()), validAfter: now + 600, validUntil: now + 1200 });
    const intent = (await intentTo(ownerHeld, [target])).body;
    const signature = await signHash(ownerHeld.sessionKey, intent);
    expect(expectError(await submit(intent.id, signature), 400).details?.signature?.message).toMatch(/is not valid yet/);
    expect(await chainVerdict(intent, signature)).toMatch(/AA22 expired or not due/);

    // Inside the window it would pass: the custodial one is created for the key now, then the window closes.
    await moveChainTime(700);
    const inWindow = (await intentTo(r, [target], { session: true })).body;
    expect(inWindow.nextAction).toBeDefined();
    await moveChainTime(600);
    const late = await signHash(r.sessionKey, inWindow);
    const expired = expectError(await submit(inWindow.id, late), 400);
    expect(expired.message).toMatch(/expired at/);
    expect(expired.details?.signature?.message).toMatch(/expired at/);
    expect(await chainVerdict(inWindow, late)).toMatch(/AA22 expired or not due/);
    expect(await chainVerdict(intent, signature)).toMatch(/AA22 expired or not due/);
  }, 90_000);

  it("uses: with limit 1 and one intent in flight a second signature is refused; once it landed the chain refuses the second op (AA24)", async () => {
    const r = await registered({ owner: privateKeyToAccount(generatePrivateKey()), limit: 1 });
    const target = newAddress();
    const first = (await intentTo(r, [target])).body;
    const second = (await intentTo(r, [target])).body;
    const runner = (await ensureRunner())!;
    await runner.stop();
    try {
      expect((await submit(first.id, await signHash(r.sessionKey, first))).status).toBe(200);
      const refused = expectError(await submit(second.id, await signHash(r.sessionKey, second)), 400);
      expect(refused.message).toMatch(/no uses left: 0 of its 1 used on chain and 1 more signed and in flight/);
    } finally {
      await runner.start();
    }
    expect((await waitForLanding(key, first.id)).response.status).toBe(1);
    const signature = await signHash(r.sessionKey, second);
    expect(expectError(await submit(second.id, signature), 400).message).toMatch(/no uses left: 1 of its 1 used on chain and 0 more/);
    expect(await chainVerdict(second, signature)).toMatch(/AA24 signature error/);
    // The owner may still sign it.
    expect((await submit(second.id, await signHash(r.owner!, second))).status).toBe(200);
    expect((await waitForLanding(key, second.id)).response.status).toBe(1);
  }, 90_000);

  it("two signatures racing for a key's last use: one is taken, the other refused", async () => {
    const r = await registered({ owner: privateKeyToAccount(generatePrivateKey()), limit: 1 });
    const target = newAddress();
    const intents = [(await intentTo(r, [target])).body, (await intentTo(r, [target])).body];
    const signatures = await Promise.all(intents.map((i) => signHash(r.sessionKey, i)));
    const runner = (await ensureRunner())!;
    await runner.stop();
    let answers;
    try {
      answers = await Promise.all(intents.map((i, k) => submit(i.id, signatures[k]!)));
    } finally {
      await runner.start();
    }
    expect(answers.map((a) => a.status).sort()).toEqual([200, 400]);
    expect(answers.find((a) => a.status === 400)!.body.error.message).toMatch(/no uses left/);
    expect((await waitForLanding(key, answers.find((a) => a.status === 200)!.body.id)).response.status).toBe(1);
    expect(await client().getBalance({ address: target })).toBe(1n);
  }, 90_000);

  it("an op the key signed that the chain refuses when sent (the key expired meanwhile) fails: the service's owner key does not sign it again", async () => {
    const now = await chainTime();
    const r = await registered({ validUntil: now + 300 });
    const target = newAddress();
    const created = (await intentTo(r, [target], { session: true })).body;
    const runner = (await ensureRunner())!;
    await runner.stop();
    try {
      expect((await submit(created.id, await signHash(r.sessionKey, created))).status).toBe(200);
      await moveChainTime(400);
    } finally {
      await runner.start();
    }
    const deadline = Date.now() + 30_000;
    let row = await storedIntent(created.id);
    while (row.status === "pending" || row.status === "broadcast") {
      if (Date.now() > deadline) throw new Error(`intent ${created.id} still ${row.status}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
      row = await storedIntent(created.id);
    }
    expect(row).toMatchObject({ status: "failed", error: expect.stringMatching(/AA22/) });
    expect(row.userOperationHash).toBe(created.userOperationHash);
    expect(await client().getBalance({ address: target })).toBe(0n);
  }, 90_000);

  it("a revoked key: 400, and the EntryPoint refuses it (AA24)", async () => {
    const r = await registered({ owner: privateKeyToAccount(generatePrivateKey()) });
    const target = newAddress();
    const intent = (await intentTo(r, [target])).body;
    // The owner revokes the key with a call to its account (what POST /v1/sessions/revoke sends).
    const revokeCall = encodeFunctionData({ abi: smartAccountAbi, functionName: "revokeSessionKey", args: [r.sessionKey.address] });
    const revocation = (await call("POST", "/v1/transaction_intents", { key, json: { chainId: 31337, account: r.account.id, interactions: [{ to: r.account.address, data: revokeCall }] } })).body;
    expect((await submit(revocation.id, await signHash(r.owner!, revocation))).status).toBe(200);
    expect((await waitForLanding(key, revocation.id)).response.status).toBe(1);
    expect((await sessionKeyOf(r.account.address, r.sessionKey.address))[4]).toBe(false);

    const signature = await signHash(r.sessionKey, intent);
    expect(expectError(await submit(intent.id, signature), 400).message).toMatch(/was revoked/);
    expect(await chainVerdict(intent, signature)).toMatch(/AA24 signature error/);
  }, 90_000);

  it("a key that is neither the owner nor a session key: 400 naming the signer", async () => {
    const r = await registered({ owner: privateKeyToAccount(generatePrivateKey()) });
    const intent = (await intentTo(r, [newAddress()])).body;
    const stranger = privateKeyToAccount(generatePrivateKey());
    const signature = await signHash(stranger, intent);
    const refused = expectError(await submit(intent.id, signature), 400);
    expect(refused.message).toMatch(new RegExp(`recovers to ${stranger.address}, which is neither the owner`));
    expect(refused.details?.signature?.message).toBe(`signed by ${stranger.address}`);
    expect(await chainVerdict(intent, signature)).toMatch(/AA24 signature error/);
  }, 60_000);

  it("a session that is not the account's, or unknown: 400 naming session; without account the session's is used", async () => {
    const a = await registered();
    const b = await registered();
    const other = expectError(await call("POST", "/v1/transaction_intents", { key, json: { chainId: 31337, account: b.account.id, session: a.session.id, interactions: [{ to: newAddress() }] } }), 400);
    expect(other.details?.session?.message).toMatch(new RegExp(`a session of account ${a.account.id}, not ${b.account.id}`));
    expectError(await call("POST", "/v1/transaction_intents", { key, json: { chainId: 31337, session: "ses_nope", interactions: [{ to: newAddress() }] } }), 400);
    expect(expectError(await call("POST", "/v1/transaction_intents", { key, json: { chainId: 31337, session: "sess", interactions: [{ to: newAddress() }] } }), 400).details).toHaveProperty("session");
    // Without account, the session's account is the intent's.
    const inferred = await call("POST", "/v1/transaction_intents", { key, json: { chainId: 31337, session: a.session.id, interactions: [{ to: newAddress() }] } });
    expect(inferred.status, JSON.stringify(inferred.body)).toBe(200);
    expect(inferred.body.account.id).toBe(a.account.id);
  }, 90_000);
});
