import { eq } from "drizzle-orm";
import { concat, http as viemHttp, parseEther, toHex, zeroAddress, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { createBundlerClient, createPaymasterClient, formatUserOperationRequest, type UserOperation } from "viem/account-abstraction";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serviceDeployment } from "@/lib/chain/contracts";
import { getDb } from "@/lib/db/client";
import { sponsoredOperations, sponsorshipHolds } from "@/lib/db/schema";
import type { ProjectWithKeys } from "@/lib/projects/service";
import { intentHold } from "@/lib/sponsorship/ledger";
import { call, newProject } from "./helpers/api";
import { rpc, rpcFees, rpcServer, settledByFollower, wildcardPolicy } from "./helpers/bundler-fixtures";
import { clientOf, fundedWallet, mined } from "./helpers/chain";
import { delegationAuthorization, viemDelegatedAccount, viemSmartAccountV08 } from "./helpers/viem-account";

/**
 * The bundler and paymaster RPC on EntryPoint v0.8, proved with viem's own clients: a player's EOA registered as a
 * Delegated_v08 account and driven by viem's toSimple7702SmartAccount (our DelegatedAccountV8 as its implementation)
 * delegates in its first sponsored op (eip7702Auth) and lands a second; an Upgradeable_v08 account deploys in its
 * first; each is an intent of the project, its ERC-7677 hold (keyed by the v0.8 userOpHash) settled once. Refusals
 * carry the bundler codes: a v0.8 op at the v0.6 EntryPoint, a bad signature (AA24), a foreign delegation.
 */
let server: Awaited<ReturnType<typeof rpcServer>>;
let project: ProjectWithKeys;
const d = () => serviceDeployment();
const url = () => `${server.url}/rpc/31337?apiKey=${project.keys.test.publishable}`;

beforeAll(async () => {
  project = await newProject("bundler RPC v0.8");
  server = await rpcServer();
}, 60_000);
afterAll(async () => {
  await server?.close();
});

const openPolicy = () => wildcardPolicy(project.keys.test.secret, "bundler v0.8");

/** The ERC-7677 holds of the op's sponsorship record (by its v0.8 userOpHash). */
async function holdsOf(hash: Hex) {
  const db = await getDb();
  const [record] = await db.select().from(sponsoredOperations).where(eq(sponsoredOperations.userOperationHash, hash.toLowerCase()));
  expect(record, `a sponsorship record for ${hash}`).toBeDefined();
  return db.select().from(sponsorshipHolds).where(eq(sponsorshipHolds.sponsoredOperationId, record!.id));
}

/** viem's bundler client with fees from pimlico_getUserOperationGasPrice (test/helpers/bundler-fixtures.ts rpcFees). */
const bundlerFor = (account: Parameters<typeof createBundlerClient>[0]["account"] & object, policy?: string) =>
  createBundlerClient({
    account,
    client: account.client,
    transport: viemHttp(url()),
    userOperation: rpcFees(url),
    ...(policy && { paymaster: createPaymasterClient({ transport: viemHttp(url()) }), paymasterContext: { policy } }),
  });

describe("viem's clients on EntryPoint v0.8 against /rpc/31337", () => {
  it("list the v0.8 EntryPoint beside v0.6, as bundler and as paymaster", async () => {
    for (const method of ["eth_supportedEntryPoints", "pm_supportedEntryPoints"]) {
      expect((await rpc(url(), method)).body.result).toEqual([d().entryPoint, d().entryPointV08]);
    }
  });

  it("a player's EOA (Delegated_v08, toSimple7702SmartAccount): its first sponsored op delegates it (eip7702Auth) and lands; a second lands; each an intent, each hold settled once", async () => {
    const policy = await openPolicy();
    const owner = privateKeyToAccount(generatePrivateKey());
    const account = await viemDelegatedAccount(project.keys.test.secret, { owner });
    const bundler = bundlerFor(account, policy);
    const to = privateKeyToAccount(generatePrivateKey()).address;

    const authorization = await delegationAuthorization(owner);
    const first = await bundler.sendUserOperation({ calls: [{ to, value: 0n, data: "0x" }], authorization });
    const receipt = await bundler.waitForUserOperationReceipt({ hash: first, timeout: 60_000, pollingInterval: 200 });
    expect(receipt).toMatchObject({ success: true, userOpHash: first, paymaster: d().paymasterV08, entryPoint: d().entryPointV08, sender: owner.address });
    expect(receipt.receipt.status).toBe("success");
    // The EOA now delegates to our DelegatedAccountV8, and paid nothing.
    expect((await clientOf(31337).getCode({ address: owner.address }))?.toLowerCase()).toBe(concat(["0xef0100", d().delegatedAccountV08]).toLowerCase());
    expect(await clientOf(31337).getBalance({ address: owner.address })).toBe(0n);

    const byHash = await bundler.getUserOperation({ hash: first });
    expect(byHash).toMatchObject({ entryPoint: d().entryPointV08, transactionHash: receipt.receipt.transactionHash });
    expect(byHash.userOperation).toMatchObject({ sender: owner.address, factory: "0x7702", paymaster: d().paymasterV08 });
    // viem's formatter keeps only the fields it knows: the raw answer carries the authorization (ERC-7769's eip7702Auth).
    const raw = (await rpc(url(), "eth_getUserOperationByHash", [first])).body.result;
    expect(raw.userOperation.eip7702Auth).toMatchObject({ address: d().delegatedAccountV08, r: authorization.r, s: authorization.s });
    expect(raw.userOperation.entryPointVersion).toBeUndefined();

    const second = await bundler.sendUserOperation({ calls: [{ to, value: 0n, data: "0x" }, { to: zeroAddress, value: 0n, data: "0x" }] });
    expect((await bundler.waitForUserOperationReceipt({ hash: second, timeout: 60_000, pollingInterval: 200 })).success).toBe(true);

    const list = await call("GET", "/v1/transaction_intents", { key: project.keys.test.secret, query: { account: [account.record.id] } });
    expect(list.status).toBe(200);
    expect(list.body.data.map((i: { userOperationHash: string }) => i.userOperationHash).sort()).toEqual([first, second].sort());
    for (const intent of list.body.data) {
      expect(intent).toMatchObject({ source: "rpc", policy: { id: policy }, response: { status: 1 } });
      expect(await intentHold(await getDb(), intent.id)).toBeNull();
    }
    const secondIntent = list.body.data.find((i: { userOperationHash: string }) => i.userOperationHash === second);
    expect(secondIntent.interactions).toEqual([
      { to, value: "0", data: "0x" },
      { to: zeroAddress, value: "0", data: "0x" },
    ]);

    await settledByFollower();
    for (const hash of [first, second]) {
      const holds = await holdsOf(hash);
      expect(holds.map((h) => ({ status: h.status, cause: h.cause }))).toEqual([{ status: "settled", cause: "erc7677" }]);
    }
    expect(BigInt((await holdsOf(first))[0]!.settledAmount!)).toBe(receipt.actualGasCost);
    expect(await settledByFollower()).toBe(0);
  }, 120_000);

  it("an Upgradeable_v08 account (toSmartAccount on v0.8): its first sponsored op deploys it through AccountFactoryV8 and lands", async () => {
    const policy = await openPolicy();
    const account = await viemSmartAccountV08(project.keys.test.secret);
    const bundler = bundlerFor(account, policy);
    const hash = await bundler.sendUserOperation({ calls: [{ to: zeroAddress, value: 0n, data: "0x" }] });
    const receipt = await bundler.waitForUserOperationReceipt({ hash, timeout: 60_000, pollingInterval: 200 });
    expect(receipt).toMatchObject({ success: true, paymaster: d().paymasterV08, entryPoint: d().entryPointV08, sender: account.address });
    expect(await clientOf(31337).getCode({ address: account.address })).not.toBe(undefined);
    const intent = await call("GET", "/v1/transaction_intents", { key: project.keys.test.secret, query: { account: [account.record.id] } });
    expect(intent.body.data[0]).toMatchObject({ source: "rpc", userOperationHash: hash });
  }, 120_000);

  it("an account that pays for itself (no paymaster) estimates and lands", async () => {
    const owner = privateKeyToAccount(generatePrivateKey());
    const account = await viemDelegatedAccount(project.keys.test.secret, { owner });
    await clientOf(31337).request({ method: "anvil_setBalance" as never, params: [owner.address, toHex(parseEther("1"))] as never });
    const bundler = bundlerFor(account);
    const to = privateKeyToAccount(generatePrivateKey()).address;
    const hash = await bundler.sendUserOperation({ calls: [{ to, value: 1000n, data: "0x" }], authorization: await delegationAuthorization(owner) });
    const receipt = await bundler.waitForUserOperationReceipt({ hash, timeout: 60_000, pollingInterval: 200 });
    expect(receipt).toMatchObject({ success: true, paymaster: zeroAddress });
    expect(await clientOf(31337).getBalance({ address: to })).toBe(1000n);
  }, 120_000);
});

describe("the v0.8 RPC's refusals", () => {
  it("a v0.8 op sent with the v0.6 EntryPoint is -32602 naming its v0.8 field; the reverse too", async () => {
    const owner = privateKeyToAccount(generatePrivateKey());
    const account = await viemDelegatedAccount(project.keys.test.secret, { owner });
    const op = {
      sender: owner.address,
      nonce: "0x0",
      factory: "0x7702",
      factoryData: "0x",
      callData: "0x",
      callGasLimit: "0x1",
      verificationGasLimit: "0x1",
      preVerificationGas: "0x1",
      maxFeePerGas: "0x1",
      maxPriorityFeePerGas: "0x1",
      signature: "0x",
    };
    const at06 = (await rpc(url(), "eth_sendUserOperation", [op, d().entryPoint])).body.error;
    expect(at06).toMatchObject({ code: -32602, data: { field: "userOperation.factory" } });
    expect(at06!.message).toContain(d().entryPointV08);
    const stub = (await rpc(url(), "pm_getPaymasterStubData", [op, d().entryPoint, "0x7a69", { policy: "pol_x" }])).body.error;
    expect(stub).toMatchObject({ code: -32602, data: { field: "userOperation.factory" } });
    const { factory: _f, factoryData: _fd, ...plain } = op;
    const at08 = (await rpc(url(), "eth_sendUserOperation", [{ ...plain, initCode: "0x1234", paymasterAndData: "0x" }, d().entryPointV08])).body.error;
    expect(at08).toMatchObject({ code: -32602, data: { field: "userOperation.initCode" } });
    // The account is a v0.8 one: its op in v0.6's shape at v0.6's EntryPoint names the entry point it uses.
    const wrongVersion = (await rpc(url(), "eth_estimateUserOperationGas", [{ ...plain, initCode: "0x" }, d().entryPoint])).body.error;
    expect(wrongVersion).toMatchObject({ code: -32602, data: { field: "entryPoint" } });
    expect(wrongVersion!.message).toContain(d().entryPointV08);
    expect(account.address).toBe(owner.address);
  });

  it("a bad signature is the EntryPoint's AA24 (-32500)", async () => {
    const owner = privateKeyToAccount(generatePrivateKey());
    const account = await viemDelegatedAccount(project.keys.test.secret, { owner });
    await clientOf(31337).request({ method: "anvil_setBalance" as never, params: [owner.address, toHex(parseEther("1"))] as never });
    const bundler = bundlerFor(account);
    const authorization = await delegationAuthorization(owner);
    const prepared = await bundler.prepareUserOperation({ account, calls: [{ to: zeroAddress, value: 0n, data: "0x" }], authorization });
    const stranger = privateKeyToAccount(generatePrivateKey());
    const forged = { ...prepared, signature: await stranger.sign({ hash: `0x${"11".repeat(32)}` }) } as UserOperation<"0.8">;
    const refused = (await rpc(url(), "eth_sendUserOperation", [formatUserOperationRequest(forged), d().entryPointV08])).body.error;
    expect(refused).toMatchObject({ code: -32500, data: { code: "AA24" } });
  }, 60_000);

  it("an authorization the chain would skip (a stale nonce, another signer) is -32602 on eip7702Auth, before anything is relayed", async () => {
    const policy = await openPolicy();
    const owner = privateKeyToAccount(generatePrivateKey());
    const account = await viemDelegatedAccount(project.keys.test.secret, { owner });
    const bundler = bundlerFor(account, policy);
    const current = await delegationAuthorization(owner);
    const stale = await owner.signAuthorization({ address: d().delegatedAccountV08, chainId: 31337, nonce: current.nonce + 1 });
    const refused = await bundler.sendUserOperation({ calls: [{ to: zeroAddress, value: 0n, data: "0x" }], authorization: stale }).catch((e: Error) => e);
    expect(String(refused)).toMatch(/has nonce 1, but the account's nonce is 0/);
    const byOther = await privateKeyToAccount(generatePrivateKey()).signAuthorization({ address: d().delegatedAccountV08, chainId: 31337, nonce: 0 });
    const other = await bundler.sendUserOperation({ calls: [{ to: zeroAddress, value: 0n, data: "0x" }], authorization: byOther }).catch((e: Error) => e);
    expect(String(other)).toMatch(/signed by 0x[0-9a-fA-F]{40}, not by the account/);
    const list = await call("GET", "/v1/transaction_intents", { key: project.keys.test.secret, query: { account: [account.record.id] } });
    expect(list.body.data).toEqual([]);
  }, 60_000);

  it("an EOA delegated elsewhere is refused, never re-delegated by a sponsored op; an authorization for another implementation too", async () => {
    const policy = await openPolicy();
    const owner = privateKeyToAccount(generatePrivateKey());
    const account = await viemDelegatedAccount(project.keys.test.secret, { owner });
    const bundler = bundlerFor(account, policy);

    // An authorization for the reference Simple7702Account instead of ours: refused by the paymaster and the bundler.
    const foreignAuth = await delegationAuthorization(owner, { implementation: d().simple7702Account });
    const elsewhere = await bundler.sendUserOperation({ calls: [{ to: zeroAddress, value: 0n, data: "0x" }], authorization: foreignAuth }).catch((e: Error) => e);
    expect(String(elsewhere)).toMatch(/DelegatedAccountV8/);

    // The owner delegates the EOA to Simple7702Account itself (a type-4 transaction a funded wallet sends).
    const wallet = await fundedWallet(31337);
    await mined(31337, await wallet.sendTransaction({ to: owner.address, data: "0x", authorizationList: [foreignAuth] }));
    expect((await clientOf(31337).getCode({ address: owner.address }))?.toLowerCase()).toBe(concat(["0xef0100", d().simple7702Account]).toLowerCase());
    const refused = await bundler.sendUserOperation({ calls: [{ to: zeroAddress, value: 0n, data: "0x" }] }).catch((e: Error) => e);
    expect(String(refused)).toMatch(/changed outside this service/);
    const estimate = (
      await rpc(url(), "eth_estimateUserOperationGas", [
        { sender: owner.address, nonce: "0x0", callData: "0x", maxFeePerGas: "0x1", maxPriorityFeePerGas: "0x1", signature: "0x" },
        d().entryPointV08,
      ])
    ).body.error;
    expect(estimate).toMatchObject({ code: -32602, data: { field: "userOperation.sender" } });
  }, 60_000);
});
