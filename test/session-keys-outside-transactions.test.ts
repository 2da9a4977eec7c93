import { parseEther, toHex, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { publicClient } from "@/lib/chain/clients";
import { findChain } from "@/lib/chain/registry";
import { getDb } from "@/lib/db/client";
import { takeRemoteCallsInTransactions } from "@/lib/db/transaction-guard";
import { call, newProject, waitForLanding } from "./helpers/api";
import { clientOf } from "./helpers/chain";

/**
 * The session-key checks read the chain (the key's state on the account, the chain's clock) and simulate the op:
 * those reads must come before the transaction that records or signs the intent under the key's lock, not inside
 * it. The guard (lib/db/transaction-guard.ts) records every chain or outbound call made inside a transaction.
 */
process.env.TRANSACTION_GUARD = "1"; // read when this process opens its database (first getDb)

let key: string;
let policy: string;
beforeAll(async () => {
  const project = await newProject("session keys outside transactions");
  key = project.keys.test.secret;
  policy = (await call("POST", "/v1/policies", { key, json: { name: "self calls", chainId: 31337, strategy: { sponsorSchema: "pay_for_user" } } })).body.id;
  await call("POST", "/v1/policy_rules", { key, json: { policy, type: "account_functions" } });
});
beforeEach(() => void takeRemoteCallsInTransactions());

describe("the transaction guard", () => {
  it("records a chain call made inside a transaction, and none made outside", async () => {
    const chain = findChain(31337)!;
    await publicClient(chain).getChainId();
    expect(takeRemoteCallsInTransactions()).toEqual([]);
    await (await getDb()).transaction(async () => void (await publicClient(chain).getBlockNumber()));
    const seen = takeRemoteCallsInTransactions();
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatch(/^chain 31337 eth_blockNumber inside a database transaction/);
  });
});

describe("intents signed by a session key", () => {
  it("are created and signed with no chain call inside a transaction", async () => {
    const { body: player } = await call("POST", "/v1/players", { key, json: { name: "session user" } });
    const sessionKey = privateKeyToAccount(generatePrivateKey());
    const now = Number((await clientOf(31337).getBlock()).timestamp);
    const registered = await call("POST", "/v1/sessions", {
      key,
      json: { address: sessionKey.address, chainId: 31337, player: player.id, validAfter: now - 60, validUntil: now + 3600, limit: 5, maxFeePerOp: parseEther("0.01").toString(), policy },
    });
    expect(registered.status, JSON.stringify(registered.body)).toBe(200);
    expect((await waitForLanding(key, registered.body.transactionIntents[0].id, 60_000)).response.status).toBe(1);
    const account = registered.body.account.id as string;
    const { body: accountBody } = await call("GET", `/v1/accounts/${account}`, { key });
    await clientOf(31337).request({ method: "anvil_setBalance" as never, params: [accountBody.address, toHex(parseEther("1"))] as never });
    takeRemoteCallsInTransactions(); // the registration's relay ran in the background meanwhile: not under test here

    const target = privateKeyToAccount(generatePrivateKey()).address as Address;
    const created = await call("POST", "/v1/transaction_intents", { key, json: { chainId: 31337, account, session: registered.body.id, interactions: [{ to: target, value: "1" }] } });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(takeRemoteCallsInTransactions(), "creating the intent").toEqual([]);

    const signature = await sessionKey.signMessage({ message: { raw: created.body.userOperationHash as Hex } });
    const signed = await call("POST", `/v1/transaction_intents/${created.body.id}/signature`, { key, json: { signature } });
    expect(signed.status, JSON.stringify(signed.body)).toBe(200);
    // Only what the signature request did: its relay (sent once it is recorded) is background work.
    expect(takeRemoteCallsInTransactions().filter((c) => c.includes("lib/intents/signature.ts")), "signing it").toEqual([]);
    expect((await waitForLanding(key, created.body.id, 60_000)).response.status).toBe(1);
  }, 120_000);
});
