import fs from "node:fs";
import path from "node:path";
import Openfort from "@openfort/openfort-node";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, startServer, type RunningServer } from "./helpers/server";

let server: RunningServer;
beforeAll(async () => {
  server = await startServer();
}, 600_000);
afterAll(async () => {
  await server?.stop();
});

const TOKEN = "0x5FbDB2315678afecb367f032d93F642f64180aa3";
const erc20Abi = [
  { type: "function", name: "balanceOf", stateMutability: "view", inputs: [{ name: "owner", type: "address" }], outputs: [{ name: "", type: "uint256" }] },
  { type: "event", name: "Transfer", anonymous: false, inputs: [{ name: "from", type: "address", indexed: true }, { name: "to", type: "address", indexed: true }, { name: "value", type: "uint256", indexed: false }] },
];

describe("a running server", () => {
  it("prints a default project on first start, saves it, and its printed key works", async () => {
    const saved = JSON.parse(fs.readFileSync(path.join(server.dataDir, "default-project.json"), "utf8"));
    expect(server.output()).toContain(saved.keys.test.secret);
    expect(server.output()).toContain(saved.id);
    expect(fs.statSync(path.join(server.dataDir, "default-project.json")).mode & 0o777).toBe(0o600);
    const res = await fetch(`${server.url}/v1/players`, { headers: { authorization: `Bearer ${saved.keys.test.secret}` } });
    expect(res.status).toBe(200);
  });

  it("creates projects from the CLI while it runs, and their keys work at once", async () => {
    const created = JSON.parse(runCli(server, ["project", "create", "--name", "From CLI", "--json"]));
    expect(created).toMatchObject({ id: expect.stringMatching(/^pro_/), name: "From CLI" });
    for (const mode of ["test", "live"] as const) {
      expect(created.keys[mode].publishable).toMatch(new RegExp(`^pk_${mode}_`));
      expect(created.keys[mode].secret).toMatch(new RegExp(`^sk_${mode}_`));
    }
    const res = await fetch(`${server.url}/v1/players`, { method: "POST", headers: { authorization: `Bearer ${created.keys.live.secret}` }, body: new URLSearchParams({ name: "x" }) });
    expect((await res.json()).livemode).toBe(true);
    const list = runCli(server, ["project", "list"]);
    expect(list).toContain(created.id);
    expect(list).not.toContain(created.keys.test.secret);
    // The key in use (cached by the server) when another process rolls it: refused at once all the same.
    expect((await fetch(`${server.url}/v1/players`, { headers: { authorization: `Bearer ${created.keys.test.secret}` } })).status).toBe(200);
    const rolled = JSON.parse(runCli(server, ["keys", "roll", "--project", created.id, "--mode", "test", "--json"]));
    const old = await fetch(`${server.url}/v1/players`, { headers: { authorization: `Bearer ${created.keys.test.secret}` } });
    expect(old.status).toBe(401);
    const fresh = await fetch(`${server.url}/v1/players`, { headers: { authorization: `Bearer ${rolled.keys.test.secret}` } });
    expect(fresh.status).toBe(200);
  });

  it("serves the official Openfort SDK unchanged: players", async () => {
    const { keys } = JSON.parse(runCli(server, ["project", "create", "--name", "SDK", "--json"]));
    const openfort = new Openfort(keys.test.secret, server.url);
    const player = await openfort.players.create({ name: "SDK player", description: "from the SDK", metadata: { level: "1" } });
    expect(player.id).toMatch(/^pla_/);
    expect(player.name).toBe("SDK player");
    const got = await openfort.players.get({ id: player.id, expand: ["accounts" as never] });
    expect(got.id).toBe(player.id);
    expect(got.metadata).toEqual({ level: "1" });
    const updated = await openfort.players.update({ id: player.id, name: "Renamed", metadata: { level: "" } });
    expect(updated.name).toBe("Renamed");
    expect(updated.metadata ?? null).toBeNull();
    await openfort.players.create({ name: "second" });
    const list = await openfort.players.list({ limit: 1, order: "asc" as never });
    expect(list.total).toBe(2);
    expect(list.data.map((p) => p.id)).toEqual([player.id]);
    const byName = await openfort.players.list({ name: "second" });
    expect(byName.data).toHaveLength(1);
    const deleted = await openfort.players.delete(player.id);
    expect(deleted).toMatchObject({ id: player.id, deleted: true });
    await expect(openfort.players.get({ id: player.id })).rejects.toThrow(/No such player/);
  });

  it("serves the official Openfort SDK unchanged: contracts", async () => {
    const { keys } = JSON.parse(runCli(server, ["project", "create", "--name", "SDK contracts", "--json"]));
    const openfort = new Openfort(keys.test.secret, server.url);
    const contract = await openfort.contracts.create({ name: "Token", chainId: 31337, address: TOKEN.toLowerCase(), abi: erc20Abi as never, publicVerification: true });
    expect(contract).toMatchObject({ name: "Token", chainId: 31337, address: TOKEN, publicVerification: true, deleted: false });
    expect(contract.abi).toHaveLength(2);
    const got = await openfort.contracts.get({ id: contract.id });
    expect(got.address).toBe(TOKEN);
    const updated = await openfort.contracts.update({ id: contract.id, name: "Gold" });
    expect(updated.name).toBe("Gold");
    const list = await openfort.contracts.list({ chainId: 31337, address: TOKEN.toLowerCase() });
    expect(list.data.map((c) => c.id)).toEqual([contract.id]);
    // The SDK reports undeclared status codes as an ApiException carrying our error body.
    await expect(openfort.contracts.create({ name: "Bad", chainId: 1, address: TOKEN })).rejects.toThrow(/HTTP-Code: 400[\s\S]*Unsupported chainId 1/);
    const deleted = await openfort.contracts.delete(contract.id);
    expect(deleted).toMatchObject({ id: contract.id, deleted: true });
    expect((await openfort.contracts.list({ deleted: true })).data.map((c) => c.id)).toEqual([contract.id]);
  });

  it("brings up the chains with our contracts and says so at start", () => {
    expect(server.output()).toMatch(/Chains \(EntryPoint 0x5FF137D4b0FDCD49DcA30c7CF57E578a026d2789, account factory 0x[0-9a-fA-F]{40}, paymaster 0x[0-9a-fA-F]{40}\)/);
    for (const chainId of [31337, 31338, 31339]) expect(server.output()).toMatch(new RegExp(`${chainId} (test|live) .* ready, paymaster deposit \\d+`));
  });

  it("serves the official Openfort SDK unchanged: accounts, signatures and contract reads", async () => {
    const { keys } = JSON.parse(runCli(server, ["project", "create", "--name", "SDK accounts", "--json"]));
    const openfort = new Openfort(keys.test.secret, server.url);
    const player = await openfort.players.create({ name: "holder" });
    const account = await openfort.accounts.create({ chainId: 31337, player: player.id });
    expect(account).toMatchObject({ chainId: 31337, custodial: true, deployed: false, accountType: "Upgradeable_v06", player: { id: player.id } });
    const other = await openfort.accounts.create({ chainId: 31338, player: player.id });
    expect(other.address).toBe(account.address);
    const got = await openfort.accounts.get({ id: account.id, expand: ["player" as never] });
    expect(got.address).toBe(account.address);
    const list = await openfort.accounts.list({ player: player.id });
    expect(list.total).toBe(2);
    expect(list.data.map((a) => a.id)).toEqual([other.id, account.id]);
    const synced = await openfort.accounts.sync(account.id);
    expect(synced.deployed).toBe(false);
    await expect(openfort.accounts.create({ chainId: 31337, player: player.id })).rejects.toThrow(/409|already has an account/);

    const signed = await openfort.accounts.signPayload({
      id: account.id,
      domain: { name: "Game", version: "1", chainId: 31337, verifyingContract: TOKEN },
      types: { Score: [{ name: "points", type: "uint256" }] },
      primaryType: "Score",
      value: { points: 42 },
    });
    expect(signed).toMatchObject({ object: "signature", account: account.id, address: account.address });
    expect(signed.signature).toMatch(/^0x[0-9a-f]+$/);

    const entryPoint = await openfort.contracts.create({
      name: "EntryPoint",
      chainId: 31337,
      address: "0x5FF137D4b0FDCD49DcA30c7CF57E578a026d2789",
      abi: [{ type: "function", name: "getNonce", stateMutability: "view", inputs: [{ name: "sender", type: "address" }, { name: "key", type: "uint192" }], outputs: [{ name: "nonce", type: "uint256" }] }] as never,
    });
    const read = await openfort.contracts.read({ id: entryPoint.id, functionName: "getNonce", functionArgs: [account.id, "0"] });
    expect(read).toMatchObject({ id: entryPoint.id, functionName: "getNonce", result: { type: "BigNumber", hex: "0x00" } });
  });

  it("serves the official Openfort SDK unchanged: policies and policy rules", async () => {
    const { keys } = JSON.parse(runCli(server, ["project", "create", "--name", "SDK policies", "--json"]));
    const openfort = new Openfort(keys.test.secret, server.url);
    const game = await openfort.contracts.create({ name: "Game", chainId: 31337, address: TOKEN, abi: erc20Abi as never });
    const policy = await openfort.policies.create({ name: "Free", chainId: 31337, strategy: { sponsorSchema: "pay_for_user" } as never });
    expect(policy).toMatchObject({ name: "Free", chainId: 31337, enabled: true, deleted: false, strategy: { sponsorSchema: "pay_for_user" } });
    const rule = await openfort.policyRules.create({ type: "contract_functions" as never, policy: policy.id, contract: game.id, functionName: "balanceOf" } as never);
    expect(rule).toMatchObject({ type: "contract_functions", functionName: "balanceOf", contract: { id: game.id } });
    const limit = await openfort.policyRules.create({ type: "rate_limit" as never, policy: policy.id, functionName: "count_per_interval", countLimit: 5, timeIntervalType: "day", timeIntervalValue: 1 } as never);
    const rules = await openfort.policyRules.list({ policy: policy.id });
    expect(rules.data.map((r) => r.id)).toEqual([limit.id, rule.id]);
    const updated = await openfort.policyRules.update({ id: limit.id, type: "rate_limit" as never, countLimit: 10 } as never);
    expect(updated.countLimit).toBe(10);
    expect((await openfort.policies.get({ id: policy.id, expand: ["policyRules" as never] })).policyRules).toHaveLength(2);
    expect((await openfort.policies.disable(policy.id)).enabled).toBe(false);
    expect((await openfort.policies.enable(policy.id)).enabled).toBe(true);
    expect((await openfort.policies.update({ id: policy.id, name: "Renamed" })).name).toBe("Renamed");
    expect((await openfort.policies.list({ chainId: 31337 })).data.map((p) => p.id)).toEqual([policy.id]);
    await openfort.policyRules.delete(rule.id);
    expect((await openfort.policies.delete(policy.id)).deleted).toBe(true);
  });

  it("serves the official Openfort SDK unchanged: sponsored transaction intents land through the server's own runner", async () => {
    const { keys } = JSON.parse(runCli(server, ["project", "create", "--name", "SDK intents", "--json"]));
    const openfort = new Openfort(keys.test.secret, server.url);
    const entryPoint = await openfort.contracts.create({
      name: "EntryPoint",
      chainId: 31337,
      address: "0x5FF137D4b0FDCD49DcA30c7CF57E578a026d2789",
      abi: [{ type: "function", name: "depositTo", stateMutability: "payable", inputs: [{ name: "account", type: "address" }], outputs: [] }] as never,
    });
    const policy = await openfort.policies.create({ name: "Free", chainId: 31337, strategy: { sponsorSchema: "pay_for_user" } as never });
    await openfort.policyRules.create({ type: "contract_functions" as never, policy: policy.id, contract: entryPoint.id, functionName: "depositTo" } as never);
    const player = await openfort.players.create({ name: "sdk gamer" });
    const intent = await openfort.transactionIntents.create({
      chainId: 31337,
      player: player.id,
      policy: policy.id,
      interactions: [{ contract: entryPoint.id, functionName: "depositTo", functionArgs: [player.id] }],
    });
    expect(intent.id).toMatch(/^tin_/);
    let got = intent;
    const deadline = Date.now() + 30_000;
    while (!got.response && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      got = await openfort.transactionIntents.get({ id: intent.id });
    }
    expect(got.response).toMatchObject({ status: 1 });
    const list = await openfort.transactionIntents.list({ player: [player.id], status: 1 });
    expect(list.data.map((i) => i.id)).toEqual([intent.id]);

    // The policy's gas report and developer accounts, through the SDK too.
    const usage = await openfort.policies.getTotalGasUsage({ id: policy.id });
    expect(usage.data).toHaveLength(1);
    expect(usage.data[0]).toMatchObject({ totalTransactionFee: got.response!.gasFee, transactionIntents: [expect.objectContaining({ id: intent.id })] });
    const custodial = await openfort.settings.createDeveloperAccount({ name: "ops" });
    expect(custodial).toMatchObject({ object: "developerAccount", custodial: true, name: "ops" });
    const wallet = privateKeyToAccount(generatePrivateKey());
    const message = await openfort.settings.getVerificationPayload(wallet.address);
    const external = await openfort.settings.createDeveloperAccount({ address: wallet.address, signature: await wallet.signMessage({ message }) });
    expect(external).toMatchObject({ custodial: false, address: wallet.address });
    expect((await openfort.settings.getDeveloperAccounts()).data.map((a) => a.id)).toEqual([external.id, custodial.id]);
    expect((await openfort.settings.deleteDeveloperAccount(external.id)).deleted).toBe(true);
  });
});
