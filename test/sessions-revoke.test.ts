import { randomBytes } from "node:crypto";
import { eq } from "drizzle-orm";
import { toHex, type Address } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { beforeAll, describe, expect, it } from "vitest";
import { smartAccountAbi } from "@/contracts/artifacts";
import { getDb } from "@/lib/db/client";
import { credit } from "@/lib/sponsorship/ledger";
import { sessions, transactionIntents } from "@/lib/db/schema";
import { newId } from "@/lib/ids";
import { runOperation } from "@/lib/dashboard/operations";
import { sessionItems } from "@/lib/dashboard/sessions";
import type { ProjectWithKeys } from "@/lib/projects/service";
import { revokeSession } from "@/lib/sessions/operations";
import { createSession } from "@/lib/sessions/service";
import { call, expectError, newProject } from "./helpers/api";
import { clientOf, fundedWallet, mined } from "./helpers/chain";

let project: ProjectWithKeys;

const newKey = () => privateKeyToAccount(generatePrivateKey()).address;
const chainTime = async (chainId: number) => Number((await clientOf(chainId).getBlock()).timestamp);
const keyActive = async (account: string, sessionKey: string, chainId = 31337) =>
  (await clientOf(chainId).readContract({ address: account as Address, abi: smartAccountAbi, functionName: "getSessionKey", args: [sessionKey as Address] }))[4];
const intentStatus = async (id: string) => (await (await getDb()).select().from(transactionIntents).where(eq(transactionIntents.id, id)))[0]?.status;

async function setup(key: string, chainId: number) {
  const { body: policy } = await call("POST", "/v1/policies", { key, json: { name: "self calls", chainId, strategy: { sponsorSchema: "pay_for_user" } } });
  await call("POST", "/v1/policy_rules", { key, json: { policy: policy.id, type: "account_functions" } });
  const { body: player } = await call("POST", "/v1/players", { key, json: {} });
  return { policy: policy as { id: string }, player: player as { id: string } };
}

beforeAll(async () => {
  project = await newProject("session revocation");
  // Live mode starts with no sponsorship balance: these tests sponsor on the live chain 31339.
  await credit(await getDb(), { projectId: project.id, livemode: true }, { chainId: 31339, amount: 10n ** 18n, cause: "funding", note: "test" });
});

describe("revoking a session key", () => {
  it("on a custodial account: the revocation lands, isActive turns false, the chain holds the key inactive; a new session of the key may follow", async () => {
    const key = project.keys.test.secret;
    const { policy, player } = await setup(key, 31337);
    const sessionKey = newKey();
    const now = await chainTime(31337);
    const registered = await call("POST", "/v1/sessions", { key, json: { address: sessionKey, chainId: 31337, player: player.id, validAfter: now, validUntil: now + 3600, limit: 5, policy: policy.id, optimistic: true } });
    expect(registered.body.isActive, JSON.stringify(registered.body)).toBe(true);
    const { body: account } = await call("GET", `/v1/accounts/${registered.body.account.id}`, { key });

    const revoked = await call("POST", "/v1/sessions/revoke", { key, form: { address: sessionKey, chainId: "31337", player: player.id, policy: policy.id, optimistic: "true" } });
    expect(revoked.status, JSON.stringify(revoked.body)).toBe(200);
    expect(revoked.body).toMatchObject({ id: registered.body.id, isActive: false });
    expect(revoked.body.transactionIntents).toHaveLength(2);
    const [revocation] = revoked.body.transactionIntents;
    expect(await intentStatus(revocation.id)).toBe("successful");
    expect(await keyActive(account.address, sessionKey)).toBe(false);
    expect((await call("GET", `/v1/sessions/${registered.body.id}`, { key })).body.isActive).toBe(false);

    // Nothing live any more: a second revoke sends nothing and answers the session.
    const again = await call("POST", "/v1/sessions/revoke", { key, json: { address: sessionKey, chainId: 31337, player: player.id, policy: policy.id } });
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body.transactionIntents).toHaveLength(2);

    // The key may be registered again: a new session, and the old one stays revoked.
    const renewed = await call("POST", "/v1/sessions", { key, json: { address: sessionKey, chainId: 31337, player: player.id, validAfter: now, validUntil: now + 3600, policy: policy.id, optimistic: true } });
    expect(renewed.body).toMatchObject({ isActive: true });
    expect(renewed.body.id).not.toBe(registered.body.id);
    expect((await call("GET", `/v1/sessions/${registered.body.id}`, { key })).body.isActive).toBe(false);
  }, 90_000);

  it("on an owner-held account: the revocation needs the owner's signature (nextAction), then lands", async () => {
    const key = project.keys.test.secret;
    const { policy, player } = await setup(key, 31337);
    const owner = privateKeyToAccount(generatePrivateKey());
    const sessionKey = newKey();
    const now = await chainTime(31337);
    const created = await call("POST", "/v1/sessions", { key, json: { address: sessionKey, chainId: 31337, player: player.id, externalOwnerAddress: owner.address, validAfter: now, validUntil: now + 3600, policy: policy.id } });
    const sign = (hash: string) => owner.signMessage({ message: { raw: hash as `0x${string}` } });
    const active = await call("POST", `/v1/sessions/${created.body.id}/signature`, { key, json: { signature: await sign(created.body.nextAction.payload.userOperationHash), optimistic: true } });
    expect(active.body.isActive, JSON.stringify(active.body)).toBe(true);

    const revoking = await call("POST", "/v1/sessions/revoke", { key, json: { address: sessionKey, chainId: 31337, player: player.id, policy: policy.id } });
    expect(revoking.status, JSON.stringify(revoking.body)).toBe(200);
    expect(revoking.body.isActive).toBe(true);
    expect(revoking.body.nextAction).toMatchObject({ type: "sign_with_wallet" });
    // Asked again before signing: the same revocation, nothing new.
    const twice = await call("POST", "/v1/sessions/revoke", { key, json: { address: sessionKey, chainId: 31337, player: player.id, policy: policy.id } });
    expect(twice.body.nextAction.payload.userOperationHash).toBe(revoking.body.nextAction.payload.userOperationHash);

    const done = await call("POST", `/v1/sessions/${created.body.id}/signature`, { key, form: { signature: await sign(revoking.body.nextAction.payload.userOperationHash), optimistic: "true" } });
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    expect(done.body.isActive).toBe(false);
    expect(done.body.nextAction).toBeUndefined();
    const { body: account } = await call("GET", `/v1/accounts/${created.body.account.id}`, { key });
    expect(await keyActive(account.address, sessionKey)).toBe(false);
  }, 90_000);

  it("cancels a registration still awaiting the owner's signature instead of sending anything", async () => {
    const key = project.keys.test.secret;
    const { policy, player } = await setup(key, 31337);
    const sessionKey = newKey();
    const now = await chainTime(31337);
    const body = { address: sessionKey, chainId: 31337, player: player.id, externalOwnerAddress: newKey(), validAfter: now, validUntil: now + 3600, policy: policy.id };
    const created = await call("POST", "/v1/sessions", { key, json: body });
    const registration = created.body.transactionIntents[0].id;
    const revoked = await call("POST", "/v1/sessions/revoke", { key, json: { address: sessionKey, chainId: 31337, player: player.id } });
    expect(revoked.status, JSON.stringify(revoked.body)).toBe(200);
    expect(revoked.body.isActive).toBe(false);
    expect(revoked.body.nextAction).toBeUndefined();
    expect(await intentStatus(registration)).toBe("cancelled");
    expectError(await call("POST", `/v1/sessions/${created.body.id}/signature`, { key, json: { signature: `0x${"11".repeat(65)}` } }), 409);
    // The key is free again.
    expect((await call("POST", "/v1/sessions", { key, json: body })).status).toBe(200);
  }, 60_000);

  it("answers 409 while the registration is on its way (recorded, not landed yet)", async () => {
    const key = project.keys.test.secret;
    const ctx = { projectId: project.id, livemode: false };
    const { policy, player } = await setup(key, 31337);
    const now = await chainTime(31337);
    const sessionKey = newKey();
    // The service function records the signed registration; nothing hands it to the relay, so it stays pending.
    const { intent } = await createSession(await getDb(), ctx, { address: sessionKey, chainId: 31337, player: player.id, validAfter: now, validUntil: now + 3600, policy: policy.id });
    expect(intent.status).toBe("pending");
    const refused = expectError(await call("POST", "/v1/sessions/revoke", { key, json: { address: sessionKey, chainId: 31337, player: player.id, policy: policy.id } }), 409);
    expect(refused.message).toMatch(new RegExp(`${intent.id}.*wait until it lands`));
    // And it is live: no second session for the key meanwhile.
    expectError(await call("POST", "/v1/sessions", { key, json: { address: sessionKey, chainId: 31337, player: player.id, validAfter: now, validUntil: now + 600, policy: policy.id } }), 400);
  }, 60_000);

  it("answers 404 naming key, player and chain when there is nothing to revoke, and 400 for bad parameters", async () => {
    const key = project.keys.test.secret;
    const { player } = await setup(key, 31337);
    const sessionKey = newKey();
    const none = expectError(await call("POST", "/v1/sessions/revoke", { key, json: { address: sessionKey, chainId: 31338, player: player.id } }), 404);
    expect(none.message).toContain(sessionKey);
    expect(none.message).toContain(player.id);
    expect(none.message).toContain("31338");
    await call("POST", "/v1/accounts", { key, json: { chainId: 31337, player: player.id } });
    expect(expectError(await call("POST", "/v1/sessions/revoke", { key, json: { address: sessionKey, chainId: 31337, player: player.id } }), 404).message).toMatch(/No live session/);
    const missing = expectError(await call("POST", "/v1/sessions/revoke", { key, json: { chainId: 31337 } }), 400);
    expect(Object.keys(missing.details ?? {})).toEqual(expect.arrayContaining(["address", "player"]));
    expect(expectError(await call("POST", "/v1/sessions/revoke", { key, json: { address: sessionKey, chainId: 31337, player: "pla_nobody" } }), 400).details?.player).toBeDefined();
  });
});

// On the live chain 31339, whose clock tests move forward (see account-actions.test.ts).
describe("the chain decides isActive", () => {
  it("expires with the chain's clock, and a revoke then only marks it revoked", async () => {
    const key = project.keys.live.secret;
    const { policy, player } = await setup(key, 31339);
    const sessionKey = newKey();
    const now = await chainTime(31339);
    const created = await call("POST", "/v1/sessions", { key, json: { address: sessionKey, chainId: 31339, player: player.id, validAfter: now - 10, validUntil: now + 300, policy: policy.id, optimistic: true } });
    expect(created.body.isActive, JSON.stringify(created.body)).toBe(true);
    const client = clientOf(31339);
    await client.request({ method: "evm_increaseTime" as never, params: [toHex(600)] as never });
    await client.request({ method: "evm_mine" as never, params: [] as never });
    expect((await call("GET", `/v1/sessions/${created.body.id}`, { key })).body.isActive).toBe(false);

    const revoked = await call("POST", "/v1/sessions/revoke", { key, json: { address: sessionKey, chainId: 31339, player: player.id, policy: policy.id } });
    expect(revoked.status, JSON.stringify(revoked.body)).toBe(200);
    expect(revoked.body).toMatchObject({ isActive: false, transactionIntents: [{ id: created.body.transactionIntents[0].id }] });
  }, 60_000);

  it("is not active before validAfter, and is retired by a change of the account's owner", async () => {
    const key = project.keys.test.secret;
    const { policy, player } = await setup(key, 31337);
    const now = await chainTime(31337);
    const later = await call("POST", "/v1/sessions", { key, json: { address: newKey(), chainId: 31337, player: player.id, validAfter: now + 3000, validUntil: now + 6000, policy: policy.id, optimistic: true } });
    expect(later.body.isActive, JSON.stringify(later.body)).toBe(false);
    // Registered though: the key cannot get a second session meanwhile.
    expectError(await call("POST", "/v1/sessions", { key, json: { address: later.body.address, chainId: 31337, player: player.id, validAfter: now, validUntil: now + 600, policy: policy.id } }), 400);

    const sessionKey = newKey();
    const current = await call("POST", "/v1/sessions", { key, json: { address: sessionKey, chainId: 31337, player: player.id, validAfter: now, validUntil: now + 6000, policy: policy.id, optimistic: true } });
    expect(current.body.isActive).toBe(true);
    const { body: account } = await call("GET", `/v1/accounts/${current.body.account.id}`, { key });
    const transferee = await fundedWallet(31337);
    const requested = await call("POST", `/v1/accounts/${account.id}/request_transfer_ownership`, { key, json: { newOwnerAddress: transferee.account.address, policy: policy.id } });
    expect(requested.status, JSON.stringify(requested.body)).toBe(200);
    for (let i = 0; i < 300 && !(await call("GET", `/v1/transaction_intents/${requested.body.id}`, { key })).body.response; i++) await new Promise((r) => setTimeout(r, 50));
    await mined(31337, await transferee.writeContract({ address: account.address, abi: smartAccountAbi, functionName: "acceptOwnership", chain: transferee.chain, account: transferee.account }));
    expect(await keyActive(account.address, sessionKey)).toBe(false);
    expect((await call("GET", `/v1/sessions/${current.body.id}`, { key })).body.isActive).toBe(false);
  }, 90_000);
});

describe("the dashboard's sessions", () => {
  it("lists a player's and an account's sessions with status and uses left from the chain, and its Revoke runs the API's revoke", async () => {
    const key = project.keys.test.secret;
    const ctx = { projectId: project.id, livemode: false };
    const { policy, player } = await setup(key, 31337);
    const now = await chainTime(31337);
    const sessionKey = newKey();
    const active = await call("POST", "/v1/sessions", { key, json: { address: sessionKey, chainId: 31337, player: player.id, validAfter: now, validUntil: now + 3600, limit: 4, policy: policy.id, optimistic: true } });
    const { policy: other } = await setup(key, 31338);
    // Each chain's own clock: tests move some chains' time forward (test/sponsorship-rules.test.ts moves 31338's).
    const then = await chainTime(31338);
    const unsigned = await call("POST", "/v1/sessions", { key, json: { address: newKey(), chainId: 31338, player: player.id, externalOwnerAddress: newKey(), validAfter: then, validUntil: then + 3600, policy: other.id } });
    expect(unsigned.status, JSON.stringify(unsigned.body)).toBe(200);

    const { items, total } = await sessionItems(await getDb(), ctx, { player: player.id, skip: 0 });
    expect(total).toBe(2);
    expect(items.map((s) => [s.id, s.status, s.usesLeft, s.revocable])).toEqual([
      [unsigned.body.id, "awaiting_signature", null, true],
      [active.body.id, "active", 4, true],
    ]);
    expect(items[1]!.registrationIntentId).toBe(active.body.transactionIntents[0].id);
    const ofAccount = await sessionItems(await getDb(), ctx, { player: player.id, account: active.body.account.id, skip: 0 });
    expect(ofAccount.items.map((s) => s.id)).toEqual([active.body.id]);

    // The Revoke button's form, as the browser posts it.
    const form = new FormData();
    for (const [name, value] of Object.entries({ address: sessionKey, chainId: "31337", player: player.id, policy: policy.id, optimistic: "true" })) form.set(name, value);
    const outcome = await runOperation(ctx, revokeSession, form);
    expect(outcome, JSON.stringify(outcome)).toMatchObject({ ok: true, data: { id: active.body.id, isActive: false } });
    expect((await sessionItems(await getDb(), ctx, { player: player.id, skip: 0 })).items.map((s) => [s.status, s.revocable])).toEqual([
      ["awaiting_signature", true],
      ["revoked", false],
    ]);
  }, 90_000);

  it("shows a session whose chain does not answer as unknown, where the API answers 502", async () => {
    const key = project.keys.test.secret;
    const ctx = { projectId: project.id, livemode: false };
    process.env.CHAIN_31999_RPC_URL = "http://127.0.0.1:9/";
    process.env.CHAIN_31999_LIVE = "false";
    try {
      const { body: player } = await call("POST", "/v1/players", { key, json: {} });
      const { body: account } = await call("POST", "/v1/accounts", { key, json: { chainId: 31999, player: player.id } });
      // A session registered there earlier, as the relay left it (the node is down now).
      const db = await getDb();
      const sessionId = newId("session");
      const intentId = newId("transactionIntent");
      await db.insert(transactionIntents).values({
        id: intentId, ...ctx, chainId: 31999, playerId: player.id, accountId: account.id, status: "successful", sponsored: false, sessionId,
        interactions: [], userOperation: {}, userOperationHash: `0x${randomBytes(32).toString("hex")}`, maxCost: "1",
      });
      await db.insert(sessions).values({ id: sessionId, ...ctx, playerId: player.id, accountId: account.id, chainId: 31999, address: newKey(), validAfter: 0, validUntil: 2 ** 40, limit: 3, registrationIntentId: intentId });

      expectError(await call("GET", `/v1/sessions/${sessionId}`, { key }), 502);
      const { items } = await sessionItems(db, ctx, { player: player.id, skip: 0 });
      expect(items.map((s) => [s.id, s.status, s.revocable])).toEqual([[sessionId, "unknown", false]]);
    } finally {
      delete process.env.CHAIN_31999_RPC_URL;
      delete process.env.CHAIN_31999_LIVE;
    }
  });
});
