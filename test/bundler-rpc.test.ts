import { eq } from "drizzle-orm";
import { createPublicClient, http as viemHttp, parseEther, toHex, zeroAddress, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { createBundlerClient, createPaymasterClient, type UserOperation } from "viem/account-abstraction";
import { foundry } from "viem/chains";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GET } from "@/app/v1/openapi.json/route";
import { serviceDeployment } from "@/lib/chain/contracts";
import { getDb } from "@/lib/db/client";
import { sponsoredOperations, sponsorshipHolds } from "@/lib/db/schema";
import type { ProjectWithKeys } from "@/lib/projects/service";
import { serializeUserOp } from "@/lib/intent-records/userop-json";
import { intentHold } from "@/lib/sponsorship/ledger";
import { call, newProject } from "./helpers/api";
import { ourAccount, rpc, rpcFees, rpcServer, settledByFollower, wildcardPolicy } from "./helpers/bundler-fixtures";
import { chainOf, clientOf } from "./helpers/chain";

/**
 * The bundler RPC (POST /rpc/{chainId}) driven by viem's own bundler and paymaster clients: ops of the project's
 * accounts sponsored under a policy (or paid by the account) land through the service's relay, become intents of the
 * project, and are read back in the ERC-4337 shapes viem parses; refusals carry the bundler error codes.
 */
let server: Awaited<ReturnType<typeof rpcServer>>;
let project: ProjectWithKeys;
let other: ProjectWithKeys;
const d = () => serviceDeployment();
const url = (p: ProjectWithKeys = project, chainId = 31337) => `${server.url}/rpc/${chainId}?apiKey=${p.keys.test.publishable}`;

beforeAll(async () => {
  [project, other] = await Promise.all([newProject("bundler RPC"), newProject("bundler RPC, another project")]);
  server = await rpcServer();
}, 60_000);
afterAll(async () => {
  await server?.close();
});

const openPolicy = () => wildcardPolicy(project.keys.test.secret, "bundler");

// A v0.6 op as JSON-RPC carries it: viem's type leaves initCode and paymasterAndData optional, the wire has both.
const rpcOp = (op: UserOperation<"0.6">) => serializeUserOp({ ...op, initCode: op.initCode ?? "0x", paymasterAndData: op.paymasterAndData ?? "0x" });

describe("viem's bundler and paymaster clients against /rpc/31337", () => {
  let sponsoredHash: Hex;

  it("land a sponsored operation of the project's account: an intent of the project, read back, its hold settled once", async () => {
    const policy = await openPolicy();
    const { account, id } = await ourAccount(project.keys.test.secret);
    const bundler = createBundlerClient({
      account,
      client: account.client,
      transport: viemHttp(url()),
      paymaster: createPaymasterClient({ transport: viemHttp(url()) }),
      paymasterContext: { policy },
      userOperation: rpcFees(url),
    });
    const to = privateKeyToAccount(generatePrivateKey()).address;
    const hash = await bundler.sendUserOperation({ calls: [{ to, value: 0n, data: "0x" }] });
    sponsoredHash = hash;
    const receipt = await bundler.waitForUserOperationReceipt({ hash, timeout: 60_000, pollingInterval: 200 });
    expect(receipt).toMatchObject({ success: true, userOpHash: hash, paymaster: d().paymaster, entryPoint: d().entryPoint, sender: account.address });
    expect(receipt.receipt.status).toBe("success");
    expect(receipt.actualGasCost).toBeGreaterThan(0n);

    const byHash = await bundler.getUserOperation({ hash });
    expect(byHash).toMatchObject({ transactionHash: receipt.receipt.transactionHash, blockNumber: receipt.receipt.blockNumber, entryPoint: d().entryPoint });
    expect(byHash.userOperation.sender).toBe(account.address);

    // An object of the project: an intent of the account, under the policy whose sponsorship it carries.
    const list = await call("GET", "/v1/transaction_intents", { key: project.keys.test.secret, query: { account: [id] } });
    expect(list.status).toBe(200);
    expect(list.body.data).toHaveLength(1);
    const intent = list.body.data[0];
    expect(intent).toMatchObject({ source: "rpc", userOperationHash: hash, policy: { id: policy }, account: { id }, interactions: [{ to, value: "0", data: "0x" }] });
    expect(intent.response).toMatchObject({ transactionHash: receipt.receipt.transactionHash, status: 1, gasFee: receipt.actualGasCost.toString() });

    // Sent again: the same hash, no second intent.
    const again = await rpc(url(), "eth_sendUserOperation", [rpcOp(byHash.userOperation as UserOperation<"0.6">), d().entryPoint]);
    expect(again.body).toMatchObject({ result: hash });
    const after = await call("GET", "/v1/transaction_intents", { key: project.keys.test.secret, query: { account: [id] } });
    expect(after.body.data).toHaveLength(1);

    // The ledger: the ERC-7677 hold of the op, settled once at its actual cost when it landed (the one attribution point); none for the intent.
    expect(await intentHold(await getDb(), intent.id)).toBeNull();
    const [record] = await (await getDb()).select().from(sponsoredOperations).where(eq(sponsoredOperations.userOperationHash, hash.toLowerCase()));
    expect(record).toBeDefined();
    await settledByFollower();
    const holds = await (await getDb()).select().from(sponsorshipHolds).where(eq(sponsorshipHolds.sponsoredOperationId, record!.id));
    expect(holds.map((h) => ({ status: h.status, cause: h.cause }))).toEqual([{ status: "settled", cause: "erc7677" }]);
    expect(BigInt(holds[0]!.settledAmount!)).toBe(receipt.actualGasCost);
    expect(await settledByFollower()).toBe(0);
  }, 120_000);

  it("land an operation the account pays for itself", async () => {
    const { account, id } = await ourAccount(project.keys.test.secret);
    await clientOf(31337).request({ method: "anvil_setBalance" as never, params: [account.address, toHex(parseEther("1"))] as never });
    const bundler = createBundlerClient({ account, client: account.client, transport: viemHttp(url()), userOperation: rpcFees(url) });
    const to = privateKeyToAccount(generatePrivateKey()).address;
    const hash = await bundler.sendUserOperation({ calls: [{ to, value: 1000n, data: "0x" }] });
    const receipt = await bundler.waitForUserOperationReceipt({ hash, timeout: 60_000, pollingInterval: 200 });
    expect(receipt).toMatchObject({ success: true, paymaster: zeroAddress });
    expect(await clientOf(31337).getBalance({ address: to })).toBe(1000n);
    const intent = await call("GET", "/v1/transaction_intents", { key: project.keys.test.secret, query: { account: [id] } });
    expect(intent.body.data[0]).toMatchObject({ source: "rpc", userOperationHash: hash });
    expect(intent.body.data[0].policy).toBeUndefined();
  }, 120_000);

  it("counts a sponsored operation once in the policy's rate limits", async () => {
    const policy = await openPolicy();
    const key = project.keys.test.secret;
    const rule = await call("POST", "/v1/policy_rules", {
      key,
      json: { policy, type: "rate_limit", functionName: "count_per_interval", countLimit: 2, timeIntervalType: "hour", timeIntervalValue: 1 },
    });
    expect(rule.status, JSON.stringify(rule.body)).toBe(200);
    const { account } = await ourAccount(key);
    const bundler = createBundlerClient({ account, client: account.client, transport: viemHttp(url()), paymaster: createPaymasterClient({ transport: viemHttp(url()) }), paymasterContext: { policy }, userOperation: rpcFees(url) });
    // Two ops within a limit of two: the intent of the first is not counted beside its ERC-7677 record.
    for (let i = 0; i < 2; i++) {
      const hash = await bundler.sendUserOperation({ calls: [{ to: zeroAddress, value: 0n, data: "0x" }] });
      expect((await bundler.waitForUserOperationReceipt({ hash, timeout: 60_000, pollingInterval: 200 })).success).toBe(true);
    }
    const third = await bundler.sendUserOperation({ calls: [{ to: zeroAddress, value: 0n, data: "0x" }] }).catch((e: Error) => e);
    expect(String(third)).toMatch(/2 sponsored transaction\(s\) per 1 hours? reached/);
  }, 120_000);

  it("takes the owner's signature of an intent the API built, and relays it", async () => {
    const policy = await openPolicy();
    const key = project.keys.test.secret;
    const owner = privateKeyToAccount(generatePrivateKey());
    const created = await call("POST", "/v1/transaction_intents", {
      key,
      json: { chainId: 31337, externalOwnerAddress: owner.address, policy, interactions: [{ to: zeroAddress, value: "0" }] },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body.nextAction.type).toBe("sign_with_wallet");
    const op = { ...created.body.userOperation, signature: await owner.signMessage({ message: { raw: created.body.userOperationHash } }) };
    const sent = await rpc(url(), "eth_sendUserOperation", [op, d().entryPoint]);
    expect(sent.body).toMatchObject({ result: created.body.userOperationHash });
    const bundler = createBundlerClient({ client: createPublicClient({ chain: { ...foundry, id: 31337 }, transport: viemHttp(chainOf(31337).rpcUrl) }), transport: viemHttp(url()) });
    const receipt = await bundler.waitForUserOperationReceipt({ hash: created.body.userOperationHash, timeout: 60_000, pollingInterval: 200 });
    expect(receipt.success).toBe(true);
    const intent = await call("GET", `/v1/transaction_intents/${created.body.id}`, { key });
    expect(intent.body.source).toBeUndefined();
    expect(intent.body.response.transactionHash).toBe(receipt.receipt.transactionHash);
  }, 120_000);

  it("another project's key reads nothing of this project's operations", async () => {
    expect(sponsoredHash).toBeDefined();
    expect((await rpc(url(other), "eth_getUserOperationByHash", [sponsoredHash])).body).toMatchObject({ result: null });
    expect((await rpc(url(other), "eth_getUserOperationReceipt", [sponsoredHash])).body).toMatchObject({ result: null });
    expect((await rpc(url(), "eth_getUserOperationReceipt", [`0x${"ab".repeat(32)}`])).body).toMatchObject({ result: null });
  });
});

describe("the bundler RPC's answers and refusals", () => {
  it("authenticates by the publishable key, Bearer or ?apiKey, before reading the body", async () => {
    const bare = `${server.url}/rpc/31337`;
    const missing = await rpc(bare, "eth_chainId");
    expect(missing.status).toBe(401);
    expect((missing.body as any).error.type).toBe("authentication_error");
    const bad = await rpc(`${bare}?apiKey=pk_test_nothing`, "eth_chainId");
    expect(bad.status).toBe(401);
    const secret = await rpc(bare, "eth_chainId", [], { authorization: `Bearer ${project.keys.test.secret}` });
    expect(secret.status).toBe(401);
    expect((secret.body as any).error.message).toMatch(/publishable key/);
    const bearer = await rpc(bare, "eth_chainId", [], { authorization: `Bearer ${project.keys.test.publishable}` });
    expect(bearer.body).toMatchObject({ result: "0x7a69" });
    const notJson = await fetch(bare, { method: "POST", headers: { "content-type": "application/json" }, body: "{not json" });
    expect(notJson.status).toBe(401);
  });

  it("is in the OpenAPI document", async () => {
    const doc = { body: await (await GET(new Request("http://127.0.0.1:3000/v1/openapi.json"))).json() };
    expect(doc.body.paths["/rpc/{chainId}"].post.operationId).toBe("bundlerRpc");
  });

  it("serves the chain, its entry points and fees; refuses unknown methods and chains", async () => {
    expect((await rpc(url(), "eth_supportedEntryPoints")).body).toMatchObject({ result: [d().entryPoint, d().entryPointV08] });
    expect((await rpc(url(), "pm_supportedEntryPoints")).body).toMatchObject({ result: [d().entryPoint, d().entryPointV08] });
    const fees = (await rpc(url(), "pimlico_getUserOperationGasPrice")).body.result;
    for (const level of ["slow", "standard", "fast"]) {
      expect(BigInt(fees[level].maxFeePerGas)).toBeGreaterThanOrEqual(BigInt(fees[level].maxPriorityFeePerGas));
    }
    expect(BigInt(fees.fast.maxFeePerGas)).toBeGreaterThan(BigInt(fees.slow.maxFeePerGas));
    expect((await rpc(url(), "rundler_maxPriorityFeePerGas")).body.result).toBe(fees.standard.maxPriorityFeePerGas);
    expect((await rpc(url(), "eth_sendTransaction")).body.error).toMatchObject({ code: -32601, message: expect.stringContaining("eth_sendUserOperation") });
    const chain = (await rpc(url(project, 999), "eth_chainId")).body.error;
    expect(chain).toMatchObject({ code: -32602 });
    expect(chain!.message).toMatch(/31337/);
  });

  it("names the field of a malformed operation (-32602) and refuses an unsupported entry point", async () => {
    const { account } = await ourAccount(project.keys.test.secret);
    const op = {
      sender: account.address,
      nonce: "0x0",
      initCode: "0x",
      callData: "0xzz",
      callGasLimit: "0x1",
      verificationGasLimit: "0x1",
      preVerificationGas: "0x1",
      maxFeePerGas: "0x1",
      maxPriorityFeePerGas: "0x1",
      paymasterAndData: "0x",
      signature: "0x",
    };
    const malformed = (await rpc(url(), "eth_sendUserOperation", [op, d().entryPoint])).body.error;
    expect(malformed).toMatchObject({ code: -32602, data: { field: "userOperation.callData" } });
    const { signature: _signature, ...unsigned } = op;
    const missing = (await rpc(url(), "eth_sendUserOperation", [{ ...unsigned, callData: "0x" }, d().entryPoint])).body.error;
    expect(missing).toMatchObject({ code: -32602, data: { field: "userOperation.signature" } });
    const entryPoint = (await rpc(url(), "eth_sendUserOperation", [{ ...op, callData: "0x" }, d().paymaster])).body.error;
    expect(entryPoint).toMatchObject({ code: -32602, data: { field: "entryPoint" } });
    expect(entryPoint!.message).toContain(d().entryPoint);
  });

  it("refuses a bad signature with the EntryPoint's AA24 (-32500), and a sender that is not the project's", async () => {
    const { account } = await ourAccount(project.keys.test.secret);
    await clientOf(31337).request({ method: "anvil_setBalance" as never, params: [account.address, toHex(parseEther("1"))] as never });
    const bundler = createBundlerClient({ account, client: account.client, transport: viemHttp(url()), userOperation: rpcFees(url) });
    const prepared = await bundler.prepareUserOperation({ calls: [{ to: zeroAddress, value: 0n, data: "0x" }] });
    const stranger = privateKeyToAccount(generatePrivateKey());
    const forged = { ...prepared, signature: await stranger.signMessage({ message: "not the userOpHash" }) } as UserOperation<"0.6">;
    const refused = (await rpc(url(), "eth_sendUserOperation", [rpcOp(forged), d().entryPoint])).body.error;
    expect(refused).toMatchObject({ code: -32500, data: { code: "AA24" } });

    // The same account is not the other project's: its key may neither estimate nor send for it.
    const signed = { ...prepared, signature: await account.signUserOperation(prepared) } as UserOperation<"0.6">;
    for (const method of ["eth_sendUserOperation", "eth_estimateUserOperationGas"]) {
      const foreign = (await rpc(url(other), method, [rpcOp(signed), d().entryPoint])).body.error;
      expect(foreign).toMatchObject({ code: -32602, data: { field: "userOperation.sender" } });
      expect(foreign!.message).toMatch(/not an account of this project/);
    }
  }, 60_000);
});
