import { decodeEventLog, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { entryPointAbi } from "@/contracts/artifacts";
import { serviceDeployment } from "@/lib/chain/contracts";
import type { ProjectWithKeys } from "@/lib/projects/service";
import { call, expectError, newProject, waitForLanding } from "./helpers/api";
import { clientOf, entryPointHistory } from "./helpers/chain";

let project: ProjectWithKeys;
let key: string;
let entryPoint: { id: string };

const ENTRY_POINT_ABI = entryPointAbi.filter((item) => item.type === "function" && ["depositTo", "balanceOf", "withdrawTo"].includes(item.name));

async function sponsoringPolicy(rules: Record<string, unknown>[] = [{ type: "contract_functions", contract: entryPoint.id, functionName: "depositTo" }]) {
  const { body: policy } = await call("POST", "/v1/policies", { key, json: { name: "sponsor", chainId: 31337, strategy: { sponsorSchema: "pay_for_user" } } });
  for (const rule of rules) {
    const res = await call("POST", "/v1/policy_rules", { key, json: { policy: policy.id, ...rule } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  }
  return policy as { id: string };
}

/** depositTo(<the player's account>) on the EntryPoint: a real call that emits a Deposited event. */
const deposit = (who: string) => ({ contract: entryPoint.id, functionName: "depositTo", functionArgs: [who] });

const landed = (id: string, timeoutMs?: number) => waitForLanding(key, id, timeoutMs);

beforeAll(async () => {
  // One key sends 50 concurrent intents and polls them every 50 ms: the per-key API rate limit
  // (tested in auth.test.ts) is not what this file is about.
  vi.stubEnv("RATE_LIMIT_PER_SECOND", "0");
  project = await newProject("intents");
  key = project.keys.test.secret;
  const res = await call("POST", "/v1/contracts", { key, json: { name: "EntryPoint", chainId: 31337, address: serviceDeployment().entryPoint, abi: ENTRY_POINT_ABI } });
  entryPoint = res.body;
});

describe("sponsored custodial intents", () => {
  it("land with status 1, the paymaster paying: the account still holds no ETH", async () => {
    const policy = await sponsoringPolicy();
    const { body: player } = await call("POST", "/v1/players", { key, json: { name: "gamer" } });
    const res = await call("POST", "/v1/transaction_intents", {
      key,
      form: { chainId: "31337", player: player.id, policy: policy.id, interactions: [deposit(player.id)] },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const intent = res.body;
    expect(intent).toMatchObject({
      object: "transactionIntent",
      chainId: 31337,
      abstractionType: "accountAbstractionV6",
      player: { id: player.id },
      policy: { id: policy.id },
      interactions: [{ contract: entryPoint.id, functionName: "depositTo", functionArgs: [player.id], value: "0" }],
    });
    expect(intent.id).toMatch(/^tin_/);
    expect(intent.userOperationHash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(intent.userOperation.paymasterAndData.slice(0, 42).toLowerCase()).toBe(serviceDeployment().paymaster.toLowerCase());
    expect(intent.nextAction).toBeUndefined();

    const done = await landed(intent.id);
    expect(done.response).toMatchObject({ status: 1, blockNumber: expect.any(Number), transactionHash: expect.stringMatching(/^0x/), to: serviceDeployment().entryPoint });
    expect(BigInt(done.response.gasUsed)).toBeGreaterThan(0n);
    const { body: account } = await call("GET", `/v1/accounts/${intent.account.id}`, { key });
    // The op deployed the account (its first), and the paymaster paid: the account has no ETH.
    expect(await clientOf(31337).getCode({ address: account.address })).toMatch(/^0x[0-9a-f]+/);
    expect(await clientOf(31337).getBalance({ address: account.address })).toBe(0n);
    const deposited = done.response.logs.map((log: { topics: Hex[]; data: Hex }) => decodeEventLog({ abi: entryPointAbi, topics: log.topics as [Hex], data: log.data }));
    expect(deposited).toEqual([expect.objectContaining({ eventName: "Deposited", args: expect.objectContaining({ account: account.address }) })]);

    // Player, account and policy embed it; lists filter by status, player and policy.
    expect((await call("GET", `/v1/players/${player.id}`, { key })).body.transactionIntents).toEqual([{ id: intent.id }]);
    const inList = (await call("GET", "/v1/players", { key, query: { limit: 100 } })).body.data.find((p: { id: string }) => p.id === player.id);
    expect(inList).toMatchObject({ transactionIntents: [{ id: intent.id }], accounts: [{ id: account.id }] });
    expect((await call("GET", `/v1/accounts/${account.id}`, { key })).body.transactionIntents).toEqual([{ id: intent.id }]);
    expect((await call("GET", `/v1/policies/${policy.id}`, { key })).body.transactionIntents).toEqual([{ id: intent.id }]);
    const listed = await call("GET", "/v1/transaction_intents", { key, query: { status: 1, player: [player.id], policy: policy.id, expand: ["account"] } });
    expect(listed.body.data.map((i: { id: string }) => i.id)).toEqual([intent.id]);
    expect(listed.body.data[0].account).toMatchObject({ id: account.id, object: "account" });
    expect((await call("GET", "/v1/transaction_intents", { key, query: { status: 0, player: [player.id] } })).body.total).toBe(0);
  });

  it("answers optimistic requests with the op already on chain", async () => {
    const policy = await sponsoringPolicy();
    const { body: player } = await call("POST", "/v1/players", { key, json: {} });
    const res = await call("POST", "/v1/transaction_intents", { key, json: { chainId: 31337, player: player.id, policy: policy.id, optimistic: true, interactions: [deposit(player.id)] } });
    expect(res.body.response).toMatchObject({ status: 1 });
  });

  it("lands 50 concurrent intents of one account, each with its own nonce, the paymaster paying for all", async () => {
    const policy = await sponsoringPolicy();
    const { body: account } = await call("POST", "/v1/accounts", { key, json: { chainId: 31337 } });
    const first = await call("POST", "/v1/transaction_intents", { key, json: { chainId: 31337, account: account.id, policy: policy.id, interactions: [deposit(account.id)] } });
    const deployed = await landed(first.body.id);
    const created = await Promise.all(
      Array.from({ length: 50 }, () => call("POST", "/v1/transaction_intents", { key, json: { chainId: 31337, account: account.id, policy: policy.id, interactions: [deposit(account.id)] } })),
    );
    for (const res of created) expect(res.status, JSON.stringify(res.body)).toBe(200);
    const done = await Promise.all(created.map((res) => landed(res.body.id, 90_000)));
    for (const intent of done) expect(intent.response, intent.id).toMatchObject({ status: 1 });
    // 2D nonces: 50 distinct keys, each op the first (sequence 0) of its key
    const nonces = done.map((i) => BigInt(i.userOperation.nonce));
    expect(new Set(nonces.map((n) => n >> 64n)).size).toBe(50);
    expect(nonces.every((n) => (n & (2n ** 64n - 1n)) === 0n)).toBe(true);
    // On chain, after the deploying op: each op executed exactly once, paid by our paymaster, and depositTo ran 50 times.
    const history = await entryPointHistory(31337, account.address, BigInt(deployed.response.blockNumber) + 1n);
    expect(history.operations).toHaveLength(50);
    expect([...history.timesByHash.keys()].sort()).toEqual(done.map((i) => i.userOperationHash).sort());
    for (const op of history.operations) expect(op).toMatchObject({ success: true, paymaster: serviceDeployment().paymaster });
    expect(history.deposits).toBe(50);
    expect(await clientOf(31337).getBalance({ address: account.address })).toBe(0n);
  }, 180_000);
});

describe("refusals: nothing is sent", () => {
  it("refuses calls no rule allows, disabled and deleted policies, naming the reason", async () => {
    const { body: player } = await call("POST", "/v1/players", { key, json: {} });
    const countIntents = async () => (await call("GET", "/v1/transaction_intents", { key, query: { player: [player.id] } })).body.total;
    const bare = await sponsoringPolicy([]);
    const noRule = expectError(await call("POST", "/v1/transaction_intents", { key, json: { chainId: 31337, player: player.id, policy: bare.id, interactions: [deposit(player.id)] } }), 402, "sponsorship_declined");
    expect(noRule.message).toMatch(/no rule allows depositTo/);
    expect(noRule).toMatchObject({ code: "no_matching_rule", details: { policy: bare.id } });

    const policy = await sponsoringPolicy();
    await call("PUT", `/v1/policies/${policy.id}/disable`, { key });
    expect(expectError(await call("POST", "/v1/transaction_intents", { key, json: { chainId: 31337, player: player.id, policy: policy.id, interactions: [deposit(player.id)] } }), 402)).toMatchObject({
      code: "policy_disabled",
      message: expect.stringMatching(/disabled/),
    });
    // A deleted policy is a wrong parameter, not a refusal to sponsor: 400 naming it.
    await call("DELETE", `/v1/policies/${policy.id}`, { key });
    expect(expectError(await call("POST", "/v1/transaction_intents", { key, json: { chainId: 31337, player: player.id, policy: policy.id, interactions: [deposit(player.id)] } }), 400).message).toMatch(/deleted/);
    expect(await countIntents()).toBe(0);
  });

  it("holds a count limit of 1 under 20 concurrent requests", async () => {
    const policy = await sponsoringPolicy([
      { type: "contract_functions", contract: entryPoint.id, functionName: "depositTo" },
      { type: "rate_limit", functionName: "count_per_interval", countLimit: 1, timeIntervalType: "hour", timeIntervalValue: 1 },
    ]);
    const { body: account } = await call("POST", "/v1/accounts", { key, json: { chainId: 31337 } });
    const results = await Promise.all(
      Array.from({ length: 20 }, () => call("POST", "/v1/transaction_intents", { key, json: { chainId: 31337, account: account.id, policy: policy.id, interactions: [deposit(account.id)] } })),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    for (const refused of results.filter((r) => r.status !== 200)) {
      const error = expectError(refused, 402, "sponsorship_declined");
      expect(error).toMatchObject({ code: "rate_limited", details: { policy: policy.id, rule: expect.stringMatching(/^afu_/), remaining: "0", resetsAt: expect.any(Number) } });
      expect(error.message).toMatch(/1 sponsored transaction/);
    }
    // another player has a budget of its own
    const { body: other } = await call("POST", "/v1/accounts", { key, json: { chainId: 31337 } });
    expect((await call("POST", "/v1/transaction_intents", { key, json: { chainId: 31337, account: other.id, policy: policy.id, interactions: [deposit(other.id)] } })).status).toBe(200);
  }, 60_000);

  it("refuses a per-transaction gas limit below the op's cost, unpaid ops from empty accounts, reverting calls and bad input", async () => {
    const policy = await sponsoringPolicy([
      { type: "contract_functions", contract: entryPoint.id, functionName: "All functions" },
      { type: "rate_limit", functionName: "gas_per_transaction", gasLimit: "1000" },
    ]);
    const { body: player } = await call("POST", "/v1/players", { key, json: {} });
    const body = (extra: Record<string, unknown>) => ({ chainId: 31337, player: player.id, interactions: [deposit(player.id)], ...extra });
    expect(expectError(await call("POST", "/v1/transaction_intents", { key, json: body({ policy: policy.id }) }), 402)).toMatchObject({
      code: "max_cost_exceeded",
      message: expect.stringMatching(/\(\d+ gas at up to \d+ wei per gas\), over the 1000 wei per transaction/),
      details: { remaining: "1000" },
    });
    expect(expectError(await call("POST", "/v1/transaction_intents", { key, json: body({}) }), 400).message).toMatch(/ETH|funds|balance/i);
    const reverting = { contract: entryPoint.id, functionName: "withdrawTo", functionArgs: [player.id, "1000000000000000000000"] };
    const allPolicy = await sponsoringPolicy([{ type: "contract_functions", contract: entryPoint.id, functionName: "All functions" }]);
    expect(expectError(await call("POST", "/v1/transaction_intents", { key, json: body({ policy: allPolicy.id, interactions: [reverting] }) }), 400).message).toMatch(/revert/i);
    expectError(await call("POST", "/v1/transaction_intents", { key, json: body({ interactions: [] }) }), 400);
    expectError(await call("POST", "/v1/transaction_intents", { key, json: body({ interactions: [{ contract: entryPoint.id }] }) }), 400);
    expectError(await call("POST", "/v1/transaction_intents", { key, json: body({ interactions: [{ contract: entryPoint.id, functionName: "nope" }] }) }), 400);
    expectError(await call("POST", "/v1/transaction_intents", { key, json: body({ interactions: [{ functionName: "depositTo" }] }) }), 400);
    expectError(await call("POST", "/v1/transaction_intents", { key, json: body({ policy: "pol_missing" }) }), 400);
    expectError(await call("POST", "/v1/transaction_intents", { key, json: body({ chainId: 31339 }) }), 400);
    // A player or account the body names that does not exist: a 400 naming the parameter.
    for (const [param, id] of [["player", "pla_missing"], ["account", "acc_missing"]] as const) {
      const refused = expectError(await call("POST", "/v1/transaction_intents", { key, json: { ...body({}), player: undefined, [param]: id } }), 400);
      expect(refused).toMatchObject({ message: `No such ${param}: '${id}'`, details: { [param]: { value: id, message: `No such ${param}: '${id}'` } } });
    }
    expectError(await call("GET", "/v1/transaction_intents/tin_missing", { key }), 404);
  });
});

describe("POST /v1/accounts/{id}/deploy", () => {
  it("deploys a custodial account with a sponsored operation allowed by an account_functions rule, making the service its guardian when asked", async () => {
    const { body: account } = await call("POST", "/v1/accounts", { key, json: { chainId: 31337, defaultGuardian: true } });
    const contractOnly = await sponsoringPolicy();
    expect(expectError(await call("POST", `/v1/accounts/${account.id}/deploy`, { key, json: { policy: contractOnly.id } }), 402)).toMatchObject({
      code: "no_matching_rule",
      message: expect.stringMatching(/account_functions/),
    });
    expect(await clientOf(31337).getCode({ address: account.address })).toBeUndefined();
    expect(expectError(await call("POST", `/v1/accounts/${account.id}/deploy`, { key, json: {} }), 400).details?.policy).toBeDefined();

    const selfPolicy = await sponsoringPolicy([{ type: "account_functions" }]);
    const deployed = await call("POST", `/v1/accounts/${account.id}/deploy`, { key, form: { policy: selfPolicy.id } });
    expect(deployed.status, JSON.stringify(deployed.body)).toBe(200);
    expect(deployed.body).toMatchObject({ id: account.id, deployed: true, custodial: true });
    expect(await clientOf(31337).getBalance({ address: account.address })).toBe(0n);
    const { smartAccountAbi } = await import("@/contracts/artifacts");
    const { serviceAccount } = await import("@/lib/keys/service-keys");
    const guardians = await clientOf(31337).readContract({ address: account.address, abi: smartAccountAbi, functionName: "getGuardians" });
    expect(guardians).toEqual([serviceAccount("guardian").address]);
    // deploying again changes nothing
    expect((await call("POST", `/v1/accounts/${account.id}/deploy`, { key, json: { policy: selfPolicy.id } })).body.deployed).toBe(true);

    const { body: external } = await call("POST", "/v1/accounts", { key, json: { chainId: 31337, externalOwnerAddress: privateKeyToAccount(generatePrivateKey()).address } });
    expect(expectError(await call("POST", `/v1/accounts/${external.id}/deploy`, { key, json: { policy: selfPolicy.id } }), 400).message).toMatch(/not custodial/);
  });
});

describe("non-custodial intents", () => {
  it("wait for the owner's signature, refuse a wrong one, and land after the right one", async () => {
    const owner = privateKeyToAccount(generatePrivateKey());
    const policy = await sponsoringPolicy();
    const res = await call("POST", "/v1/transaction_intents", {
      key,
      json: { chainId: 31337, externalOwnerAddress: owner.address, policy: policy.id, interactions: [deposit(serviceDeployment().paymaster)] },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const intent = res.body;
    expect(intent.nextAction).toMatchObject({ type: "sign_with_wallet", payload: { userOperationHash: intent.userOperationHash } });
    expect(intent.userOperation.signature).toBe("0x");

    const stranger = privateKeyToAccount(generatePrivateKey());
    const wrong = await stranger.signMessage({ message: { raw: intent.userOperationHash as Hex } });
    const refused = expectError(await call("POST", `/v1/transaction_intents/${intent.id}/signature`, { key, json: { signature: wrong } }), 400);
    expect(refused.message).toContain(stranger.address);
    expectError(await call("POST", `/v1/transaction_intents/${intent.id}/signature`, { key, json: { signature: "0x1234" } }), 400);
    expect((await call("GET", `/v1/transaction_intents/${intent.id}`, { key })).body.nextAction).toBeDefined();

    const signature = await owner.signMessage({ message: { raw: intent.userOperationHash as Hex } });
    const accepted = await call("POST", `/v1/transaction_intents/${intent.id}/signature`, { key, form: { signature } });
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(200);
    expect(accepted.body.nextAction).toBeUndefined();
    const done = await landed(intent.id);
    expect(done.response.status).toBe(1);
    expectError(await call("POST", `/v1/transaction_intents/${intent.id}/signature`, { key, json: { signature } }), 409);
    const { body: account } = await call("GET", `/v1/accounts/${intent.account.id}`, { key });
    expect(account).toMatchObject({ custodial: false, ownerAddress: owner.address as Address });
  });
});
