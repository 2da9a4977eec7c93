import http from "node:http";
import type { AddressInfo } from "node:net";
import Openfort from "@openfort/openfort-node";
import { concat, encodeAbiParameters, getAbiItem, getContractAddress, parseEther, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { entryPointAbi, verifyingPaymasterAbi, verifyingPaymasterBytecode } from "@/contracts/artifacts";
import { serviceDeployment } from "@/lib/chain/contracts";
import { DUMMY_SIGNATURE, paymasterHash, type UserOp } from "@/lib/chain/userop";
import type { ProjectWithKeys } from "@/lib/projects/service";
import { call, expectError, newProject, waitForLanding } from "./helpers/api";
import { getDb } from "@/lib/db/client";
import { rebuildIntent, signingSender } from "@/lib/intents/rebuild";
import { chainOf, clientOf, fundedWallet, mined } from "./helpers/chain";
import { intentRow } from "./helpers/relay-fixtures";
import { routeServer } from "./helpers/sdk-server";

/**
 * Registered paymasters, a policy's paymaster, sponsorship through ERC-7677 services (ours at
 * /v1/paymaster_service/{publishableKey}, served by the real route handlers, and an independent peer signing for a
 * VerifyingPaymaster of its own), and our service's JSON-RPC answers.
 */
let server: Awaited<ReturnType<typeof routeServer>>;
let project: ProjectWithKeys;
let key: string;
let entryPointContract: string;

const d = () => serviceDeployment();
const json = (path: string, body: unknown, k = key) => call("POST", path, { key: k, json: body });
const form = (path: string, body: Record<string, unknown>, k = key) => call("POST", path, { key: k, form: body });
const serviceUrl = (pk = project.keys.test.publishable) => `${server.url}/v1/paymaster_service/${pk}`;
const deposit = () => ({ contract: entryPointContract, functionName: "depositTo", functionArgs: [d().paymaster] });

/** A pay_for_user policy on 31337 allowing EntryPoint.depositTo, optionally sponsoring through `paymaster`. */
async function depositPolicy(name: string, paymaster?: string) {
  const policy = await json("/v1/policies", { name, chainId: 31337, strategy: { sponsorSchema: "pay_for_user" }, ...(paymaster && { paymaster }) });
  expect(policy.status, JSON.stringify(policy.body)).toBe(200);
  const rule = await json("/v1/policy_rules", { policy: policy.body.id, type: "contract_functions", contract: entryPointContract, functionName: "depositTo" });
  expect(rule.status, JSON.stringify(rule.body)).toBe(200);
  return policy.body as { id: string; paymaster?: { id: string } };
}

const rpc = (method: string, params: unknown[], pk = project.keys.test.publishable) =>
  call("POST", `/v1/paymaster_service/${pk}`, { json: { jsonrpc: "2.0", id: 7, method, params } });

/**
 * An independent ERC-7677 peer over node:http: signs for its own VerifyingPaymaster with its own signer key, the
 * contract's hash (address ++ window ++ signature). `refuse` makes it answer a JSON-RPC error instead.
 */
async function peerService(paymaster: Address, signerKey: Hex) {
  const signer = privateKeyToAccount(signerKey);
  const seen: { method: string; context: unknown }[] = [];
  const state = { refuse: false };
  const window = (now: number) => encodeAbiParameters([{ type: "uint48" }, { type: "uint48" }], [now + 3600, 0]);
  const peer = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", async () => {
      const { id, method, params } = JSON.parse(body) as { id: number; method: string; params: [Record<string, Hex>, Address, Hex, unknown] };
      seen.push({ method, context: params?.[3] });
      const answer = (payload: Record<string, unknown>) => res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", id, ...payload }));
      if (state.refuse) return answer({ error: { code: -32003, message: "sponsorship denied by the peer" } });
      const now = Math.floor(Date.now() / 1000);
      if (method === "pm_getPaymasterStubData") return answer({ result: { paymasterAndData: concat([paymaster, window(now), DUMMY_SIGNATURE]) } });
      if (method !== "pm_getPaymasterData") return answer({ error: { code: -32601, message: "no such method" } });
      const [raw, , chainId] = params;
      const op = Object.fromEntries(Object.entries(raw).map(([k, v]) => [k, ["sender", "initCode", "callData"].includes(k) ? v : BigInt(v)])) as unknown as UserOp;
      const validity = { validUntil: now + 3600, validAfter: 0 };
      const signature = await signer.signMessage({ message: { raw: paymasterHash(Number(chainId), paymaster, op, validity) } });
      answer({ result: { paymasterAndData: concat([paymaster, window(now), signature]) } });
    });
  });
  await new Promise<void>((resolve) => peer.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(peer.address() as AddressInfo).port}/rpc`, seen, state, close: () => new Promise<void>((r) => peer.close(() => r())) };
}

beforeAll(async () => {
  project = await newProject("paymasters");
  key = project.keys.test.secret;
  server = await routeServer();
  const abi = entryPointAbi.filter((i) => i.type === "function" && i.name === "depositTo");
  entryPointContract = (await json("/v1/contracts", { name: "EntryPoint", chainId: 31337, address: d().entryPoint, abi })).body.id;
});
afterAll(() => server?.close());

describe("/v1/paymasters", () => {
  it("registers, reads, lists, updates and deletes paymasters in JSON and form encoding, checked against the chain, per project and mode", async () => {
    const created = await json("/v1/paymasters", { address: d().paymaster, url: serviceUrl(), context: { policy: "pol_x", nested: { a: 1 } }, name: "ours" });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body).toMatchObject({ id: expect.stringMatching(/^pay_/), object: "paymaster", address: d().paymaster, url: serviceUrl(), context: { policy: "pol_x", nested: { a: 1 } }, name: "ours", deleted: false });
    const id = created.body.id as string;

    const byForm = await form("/v1/paymasters", { address: d().paymaster.toLowerCase(), url: serviceUrl(), "context[policy]": "pol_form", name: "form", chainId: "31338" });
    expect(byForm.status, JSON.stringify(byForm.body)).toBe(200);
    expect(byForm.body).toMatchObject({ address: d().paymaster, context: { policy: "pol_form" }, name: "form" });

    // Deployed where it was found: every test chain has our paymaster; a single answer says so.
    expect(created.body.deployedOn).toEqual(expect.arrayContaining([31337, 31338]));
    expect(created.body).not.toHaveProperty("notice");
    // No contract at the address yet: registered all the same (a paymaster is often deployed after), and the answer says so.
    const nowhere = privateKeyToAccount(generatePrivateKey()).address;
    const early = await json("/v1/paymasters", { address: nowhere, name: "not yet" });
    expect(early.status, JSON.stringify(early.body)).toBe(200);
    expect(early.body).toMatchObject({ address: nowhere, deployedOn: [], notice: expect.stringMatching(/^No code at this address yet on any test chain/) });
    const earlyForm = await form("/v1/paymasters", { address: nowhere, chainId: "31337" });
    expect(earlyForm.status, JSON.stringify(earlyForm.body)).toBe(200);
    expect(earlyForm.body).toMatchObject({ deployedOn: [], notice: expect.stringMatching(/^No code at this address yet on chain 31337/) });
    expect((await call("GET", `/v1/paymasters/${early.body.id}`, { key })).body).toMatchObject({ deployedOn: [], notice: expect.any(String) });
    for (const pm of [early.body.id, earlyForm.body.id]) expect((await call("DELETE", `/v1/paymasters/${pm}`, { key })).status).toBe(200);
    expect(expectError(await json("/v1/paymasters", { address: d().paymaster, chainId: 31339 }), 400).details).toHaveProperty("chainId");
    expect(expectError(await json("/v1/paymasters", { url: serviceUrl() }), 400).details).toHaveProperty("address");
    expect(expectError(await json("/v1/paymasters", { address: d().paymaster, context: "nope" }), 400).details).toHaveProperty("context");
    expect(expectError(await json("/v1/paymasters", { address: d().paymaster, url: "ftp://example.com" }), 400).details).toHaveProperty("url");

    expect((await call("GET", `/v1/paymasters/${id}`, { key })).body).toMatchObject({ id, name: "ours", deployedOn: expect.arrayContaining([31337]) });
    // The list is a bare array (what the SDK's generated client reads), paged and ordered as every list: newest first by default.
    const listed = await call("GET", "/v1/paymasters", { key, query: { limit: 1 } });
    expect(listed.body).toEqual([expect.objectContaining({ id: byForm.body.id, object: "paymaster", name: "form" })]);
    expect((await call("GET", "/v1/paymasters", { key, query: { limit: 1, skip: 1 } })).body.map((p: { id: string }) => p.id)).toEqual([id]);
    expect((await call("GET", "/v1/paymasters", { key, query: { order: "asc" } })).body.map((p: { id: string }) => p.id)).toEqual([id, byForm.body.id]);
    expect((await call("GET", "/v1/paymasters", { key, query: { deleted: true } })).body).toHaveLength(2);
    expect(expectError(await call("GET", "/v1/paymasters", { key, query: { limit: 0 } }), 400).details).toHaveProperty("limit");

    const updated = await form(`/v1/paymasters/${id}`, { name: "renamed", "context[policy]": "pol_y" });
    expect(updated.body).toMatchObject({ id, name: "renamed", context: { policy: "pol_y" } });
    expect((await json(`/v1/paymasters/${id}`, { url: "", context: "" })).body).not.toHaveProperty("url");
    // Moved to an address with no code yet: allowed while no policy sponsors through it, and said.
    const moved = await json(`/v1/paymasters/${id}`, { address: nowhere, chainId: 31337 });
    expect(moved.body).toMatchObject({ address: nowhere, deployedOn: [], notice: expect.stringMatching(/on chain 31337/) });
    expect((await json(`/v1/paymasters/${id}`, { address: d().paymaster })).body).toMatchObject({ address: d().paymaster, deployedOn: expect.arrayContaining([31337]) });
    expect((await json(`/v1/paymasters/${id}`, { address: d().paymaster })).body).not.toHaveProperty("notice");

    // Other projects and the live mode see nothing of it.
    const other = await newProject("paymasters other");
    expectError(await call("GET", `/v1/paymasters/${id}`, { key: other.keys.test.secret }), 404);
    expectError(await call("GET", `/v1/paymasters/${id}`, { key: project.keys.live.secret }), 404);
    expectError(await json(`/v1/paymasters/${id}`, { name: "theirs" }, other.keys.test.secret), 404);
    expectError(await call("DELETE", `/v1/paymasters/${id}`, { key: other.keys.test.secret }), 404);
    expect((await call("GET", "/v1/paymasters", { key: project.keys.live.secret })).body).toEqual([]);

    // Live keys: https to public addresses only, checked when the URL is saved.
    for (const url of [`http://127.0.0.1:1/x`, "https://localhost/x", "https://10.0.0.1/x"]) {
      expect(expectError(await json("/v1/paymasters", { address: d().paymaster, url }, project.keys.live.secret), 400).details, url).toHaveProperty("url");
    }

    // A policy naming it: refused while the paymaster has no url, from another project, or without code on the policy's chain.
    const policyBody = { name: "via", chainId: 31337, strategy: { sponsorSchema: "pay_for_user" } };
    expect(expectError(await json("/v1/policies", { ...policyBody, paymaster: id }), 400).message).toMatch(/has no url/);
    expect(expectError(await json("/v1/policies", { ...policyBody, paymaster: "pay_nope" }), 400).details).toHaveProperty("paymaster");
    expect(expectError(await json("/v1/policies", { ...policyBody, paymaster: byForm.body.id }, other.keys.test.secret), 400).details).toHaveProperty("paymaster");
    const policy = await form("/v1/policies", { name: "via", chainId: "31337", "strategy[sponsorSchema]": "pay_for_user", paymaster: byForm.body.id });
    expect(policy.body).toMatchObject({ paymaster: { id: byForm.body.id } });

    // In use: its address moves only to a contract on the policy's chain, and it is not deleted until the policy lets go of it.
    expect(expectError(await json(`/v1/paymasters/${byForm.body.id}`, { address: nowhere }), 400).message).toMatch(/No contract is deployed at .* on chain 31337 yet/);
    expectError(await call("DELETE", `/v1/paymasters/${byForm.body.id}`, { key }), 409);
    expect((await form(`/v1/policies/${policy.body.id}`, { paymaster: "" })).body).not.toHaveProperty("paymaster");
    expect((await call("DELETE", `/v1/paymasters/${byForm.body.id}`, { key })).body).toEqual({ id: byForm.body.id, object: "paymaster", deleted: true });
    expect((await call("GET", `/v1/paymasters/${byForm.body.id}`, { key })).body).toMatchObject({ deleted: true });
    expect((await call("GET", "/v1/paymasters", { key, query: { deleted: true } })).body.map((p: { id: string }) => p.id)).toContain(byForm.body.id);
    expect(expectError(await json("/v1/policies", { ...policyBody, paymaster: byForm.body.id }), 400).message).toMatch(/deleted/);
  }, 60_000);

  it("works through the official SDK's paymasters", async () => {
    const openfort = new Openfort(key, server.url);
    const created = await openfort.paymasters.create({ address: d().paymaster, url: serviceUrl(), context: { policy: "pol_sdk" }, name: "sdk" });
    expect(created).toMatchObject({ id: expect.stringMatching(/^pay_/), object: "paymaster", address: d().paymaster, context: { policy: "pol_sdk" } });
    expect(await openfort.paymasters.get({ id: created.id })).toMatchObject({ id: created.id, url: serviceUrl() });
    expect(await openfort.paymasters.update({ id: created.id, address: d().paymaster, name: "sdk 2" })).toMatchObject({ id: created.id });
    expect(await openfort.paymasters.delete(created.id)).toMatchObject({ id: created.id, object: "paymaster", deleted: true });
    // An address with no code yet registers through the SDK too (it reads the fields it knows).
    const early = await openfort.paymasters.create({ address: privateKeyToAccount(generatePrivateKey()).address, name: "sdk early" });
    expect(early).toMatchObject({ id: expect.stringMatching(/^pay_/), object: "paymaster" });
    await expect(openfort.paymasters.create({ address: "0x1234" })).rejects.toMatchObject({ code: 400 });
    // The wrapper has no list method; the SDK's generated client (PaymasterApi.listPaymasters) reads a bare array.
    const generated = (openfort.paymasters as unknown as { api: { listPaymasters(limit?: number, skip?: number, order?: string): Promise<{ id: string; address: string; createdAt: number }[]> } }).api;
    const page = await generated.listPaymasters(1, 0, "desc");
    expect(page).toHaveLength(1);
    expect(page[0]).toMatchObject({ id: early.id, object: "paymaster", createdAt: expect.any(Number) });
    const all = await generated.listPaymasters(100, 0, "asc");
    expect(all.map((p) => p.id)).toEqual(expect.arrayContaining([early.id]));
    expect(all.map((p) => p.id)).not.toContain(created.id); // deleted
    expect(all.at(-1)!.id).toBe(early.id);
  }, 30_000);

  it("registers a paymaster before its contract is deployed; a policy can sponsor through it once it is, not before", async () => {
    const wallet = await fundedWallet(31337);
    // The address its deployment will have (a fresh deployer's first contract).
    const future = getContractAddress({ from: wallet.account.address, nonce: 0n });
    const registered = await form("/v1/paymasters", { address: future, url: serviceUrl(), chainId: "31337", name: "deployed later" });
    expect(registered.status, JSON.stringify(registered.body)).toBe(200);
    expect(registered.body).toMatchObject({ address: future, deployedOn: [], notice: expect.stringMatching(/^No code at this address yet on chain 31337/) });
    const policyBody = { name: "too early", chainId: 31337, strategy: { sponsorSchema: "pay_for_user" }, paymaster: registered.body.id };
    const refused = expectError(await json("/v1/policies", policyBody), 400);
    expect(refused.message).toMatch(new RegExp(`No contract is deployed at ${future} on chain 31337 yet`));
    expect(refused.details).toHaveProperty("paymaster");
    expect(expectError(await form("/v1/policies", { name: "too early", chainId: "31337", "strategy[sponsorSchema]": "pay_for_user", paymaster: registered.body.id }), 400).details).toHaveProperty("paymaster");

    const hash = await wallet.deployContract({ abi: verifyingPaymasterAbi, bytecode: verifyingPaymasterBytecode, args: [d().entryPoint, wallet.account.address, wallet.account.address] });
    expect((await mined(31337, hash)).contractAddress!.toLowerCase()).toBe(future.toLowerCase());
    const now = await call("GET", `/v1/paymasters/${registered.body.id}`, { key });
    expect(now.body.deployedOn).toContain(31337);
    expect(now.body).not.toHaveProperty("notice");
    const policy = await json("/v1/policies", policyBody);
    expect(policy.status, JSON.stringify(policy.body)).toBe(200);
    expect(policy.body.paymaster).toEqual({ id: registered.body.id });
  }, 60_000);
});

describe("sponsoring through a registered ERC-7677 paymaster", () => {
  it("our own VerifyingPaymaster served at /v1/paymaster_service sponsors a custodial intent that lands", async () => {
    const rules = await depositPolicy("service rules");
    const paymaster = (await json("/v1/paymasters", { address: d().paymaster, url: serviceUrl(), context: { policy: rules.id }, name: "ours over ERC-7677" })).body;
    const policy = await depositPolicy("through our service", paymaster.id);
    expect(policy.paymaster).toEqual({ id: paymaster.id });
    const created = await json("/v1/transaction_intents", { chainId: 31337, policy: policy.id, interactions: [deposit()] });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body.userOperation.paymasterAndData.slice(0, 42).toLowerCase()).toBe(d().paymaster.toLowerCase());
    const landed = await waitForLanding(key, created.body.id, 60_000);
    expect(landed.response).toMatchObject({ status: 1 });
    const [event] = await clientOf(31337).getLogs({
      address: d().entryPoint,
      event: getAbiItem({ abi: entryPointAbi, name: "UserOperationEvent" }),
      args: { userOpHash: landed.userOperationHash },
      fromBlock: 0n,
    });
    expect(event!.args).toMatchObject({ paymaster: d().paymaster, success: true });
  }, 90_000);

  it("an independent ERC-7677 peer signing for its own paymaster sponsors an intent; its refusal is a 400 naming the policy and nothing is recorded", async () => {
    const wallet = await fundedWallet(31337);
    const signerKey = generatePrivateKey();
    const hash = await wallet.deployContract({
      abi: verifyingPaymasterAbi,
      bytecode: verifyingPaymasterBytecode,
      args: [d().entryPoint, wallet.account.address, privateKeyToAccount(signerKey).address],
    });
    const address = (await mined(31337, hash)).contractAddress!;
    await mined(31337, await wallet.writeContract({ address, abi: verifyingPaymasterAbi, functionName: "deposit", value: parseEther("1") }));
    const peer = await peerService(address, signerKey);
    try {
      const registered = (await json("/v1/paymasters", { address, url: peer.url, context: { sponsorship: "game-1" } })).body;
      const policy = await depositPolicy("through the peer", registered.id);
      const depositBefore = await clientOf(31337).readContract({ address: d().entryPoint, abi: entryPointAbi, functionName: "balanceOf", args: [address] });

      const created = await json("/v1/transaction_intents", { chainId: 31337, policy: policy.id, interactions: [deposit()] });
      expect(created.status, JSON.stringify(created.body)).toBe(200);
      expect(created.body.userOperation.paymasterAndData.slice(0, 42).toLowerCase()).toBe(address.toLowerCase());
      expect(peer.seen.map((s) => s.method)).toEqual(["pm_getPaymasterStubData", "pm_getPaymasterData"]);
      expect(peer.seen[1]!.context).toEqual({ sponsorship: "game-1" });
      const landed = await waitForLanding(key, created.body.id, 60_000);
      expect(landed.response).toMatchObject({ status: 1 });
      const depositAfter = await clientOf(31337).readContract({ address: d().entryPoint, abi: entryPointAbi, functionName: "balanceOf", args: [address] });
      // The peer's paymaster paid the operation's gas from its own EntryPoint deposit.
      expect(depositBefore - depositAfter).toBe(BigInt(landed.response.gasFee));

      // A rebuild (new fees or sponsorship window) asks the same peer again, not our paymaster.
      const row = await intentRow(created.body.id);
      const seen = peer.seen.length;
      expect(await rebuildIntent(await getDb(), { ...row, status: "pending" }, chainOf(31337), (await signingSender(await getDb(), row))!, { deploy: false })).toBe(false);
      expect(peer.seen.slice(seen).map((s) => s.method)).toEqual(["pm_getPaymasterStubData", "pm_getPaymasterData"]);

      peer.state.refuse = true;
      const before = (await call("GET", "/v1/transaction_intents", { key, query: { policy: [policy.id] } })).body.total;
      const refused = expectError(await json("/v1/transaction_intents", { chainId: 31337, policy: policy.id, interactions: [deposit()] }), 400);
      expect(refused.message).toMatch(/refused to sponsor: sponsorship denied by the peer/);
      expect(refused.details).toHaveProperty("policy");
      expect(refused.message).not.toContain("/rpc");
      expect((await call("GET", "/v1/transaction_intents", { key, query: { policy: [policy.id] } })).body.total).toBe(before);

      // Gone (nothing listens): a 502 naming the policy.
      await peer.close();
      const gone = expectError(await json("/v1/transaction_intents", { chainId: 31337, policy: policy.id, interactions: [deposit()] }), 502);
      expect(gone.details).toHaveProperty("policy");
    } finally {
      await peer.close().catch(() => {});
    }
  }, 90_000);
});

describe("our ERC-7677 service (JSON-RPC)", () => {
  it("answers pm_ calls under the named policy's rules with JSON-RPC errors, and 401 for a bad key", async () => {
    expectError(await rpc("pm_supportedEntryPoints", [], "pk_nope"), 401);
    expectError(await rpc("pm_supportedEntryPoints", [], project.keys.test.secret), 401);
    expect((await rpc("pm_supportedEntryPoints", [])).body).toEqual({ jsonrpc: "2.0", id: 7, result: [d().entryPoint, d().entryPointV08] });
    expect((await rpc("eth_sendTransaction", [])).body.error).toMatchObject({ code: -32601 });
    expect((await call("POST", `/v1/paymaster_service/${project.keys.test.publishable}`, { json: { id: 1, method: 3 } })).body.error).toMatchObject({ code: -32600 });

    const rules = await depositPolicy("rpc rules");
    const owner = privateKeyToAccount(generatePrivateKey());
    const account = (await json("/v1/accounts", { chainId: 31337, externalOwnerAddress: owner.address })).body as { address: Address; player: { id: string } };
    const { accountFactoryCall, accountSalt } = await import("@/lib/chain/accounts");
    const { initCode } = accountFactoryCall(owner.address, accountSalt(account.player.id));
    const { encodeFunctionData } = await import("viem");
    const { smartAccountAbi } = await import("@/contracts/artifacts");
    const callData = (to: Address, data: Hex) => encodeFunctionData({ abi: smartAccountAbi, functionName: "execute", args: [to, 0n, data] });
    const depositData = encodeFunctionData({ abi: entryPointAbi, functionName: "depositTo", args: [d().paymaster] });
    // Gas as a client's bundler would estimate it (the service signs nothing over its own estimate's bounds).
    const { estimateUserOperation } = await import("@/lib/chain/userop");
    const { toHex } = await import("viem");
    const { op: estimated } = await estimateUserOperation(chainOf(31337), { sender: account.address, initCode, callData: callData(d().entryPoint, depositData), sponsored: true });
    const op = (data: Hex) => ({
      sender: account.address,
      nonce: "0x0",
      initCode,
      callData: data,
      callGasLimit: toHex(estimated.callGasLimit),
      verificationGasLimit: toHex(estimated.verificationGasLimit),
      preVerificationGas: toHex(estimated.preVerificationGas),
      maxFeePerGas: toHex(estimated.maxFeePerGas),
      maxPriorityFeePerGas: toHex(estimated.maxPriorityFeePerGas),
    });
    const allowed = op(callData(d().entryPoint, depositData));
    const stub = await rpc("pm_getPaymasterStubData", [allowed, d().entryPoint, "0x7a69", { policy: rules.id }]);
    expect(stub.body.result).toMatchObject({ paymasterAndData: expect.stringMatching(new RegExp(`^${d().paymaster.toLowerCase()}`, "i")), isFinal: false });
    const final = await rpc("pm_getPaymasterData", [allowed, d().entryPoint, "0x7a69", { policy: rules.id }]);
    expect(final.body.error).toBeUndefined();
    expect(final.body.result.paymasterAndData).toHaveLength(stub.body.result.paymasterAndData.length);

    const other = op(callData(d().paymaster, "0x12345678"));
    expect((await rpc("pm_getPaymasterData", [other, d().entryPoint, "0x7a69", { policy: rules.id }])).body.error).toMatchObject({ code: -32003, message: expect.stringMatching(/no rule allows/) });
    expect((await rpc("pm_getPaymasterData", [allowed, d().entryPoint, "0x7a69", {}])).body.error).toMatchObject({ code: -32602 });
    expect((await rpc("pm_getPaymasterData", [allowed, d().paymaster, "0x7a69", { policy: rules.id }])).body.error.message).toMatch(/Unsupported entryPoint/);
    expect((await rpc("pm_getPaymasterData", [allowed, d().entryPoint, "0x7a6b", { policy: rules.id }])).body.error.message).toMatch(/live chain/);
    expect((await rpc("pm_getPaymasterData", [{ ...allowed, nonce: "zz" }, d().entryPoint, "0x7a69", { policy: rules.id }])).body.error).toMatchObject({ code: -32602, message: expect.stringMatching(/userOperation\.nonce/) });
    expect((await rpc("pm_getPaymasterData", [op("0xdeadbeef"), d().entryPoint, "0x7a69", { policy: rules.id }])).body.error.message).toMatch(/not an execute or executeBatch/);

    // Interval limits count what the service signed over ERC-7677: the op signed above (the same nonce asked again is
    // the same operation, not a second one), so another nonce is over a limit of one.
    await json("/v1/policy_rules", { policy: rules.id, type: "rate_limit", functionName: "count_per_interval", countLimit: 1, timeIntervalType: "minute", timeIntervalValue: 1 });
    expect((await rpc("pm_getPaymasterData", [allowed, d().entryPoint, "0x7a69", { policy: rules.id }])).body.result).toBeDefined();
    expect((await rpc("pm_getPaymasterData", [{ ...allowed, nonce: "0x1" }, d().entryPoint, "0x7a69", { policy: rules.id }])).body.error).toMatchObject({ code: -32003, message: expect.stringMatching(/1 sponsored transaction/) });
  }, 60_000);
});
