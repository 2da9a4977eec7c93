import { and, eq } from "drizzle-orm";
import { encodeFunctionData, toHex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { createPaymasterClient, formatUserOperationRequest, getUserOperationHash } from "viem/account-abstraction";
import { http as viemHttp } from "viem";
import { beforeAll, describe, expect, it } from "vitest";
import { entryPointV08Abi, simple7702AccountAbi } from "@/contracts/artifacts";
import { accountSalt } from "@/lib/chain/accounts";
import { accountFactoryCallV08, counterfactualAddressV08 } from "@/lib/chain/accounts-v08";
import { serviceDeployment } from "@/lib/chain/contracts";
import { estimateUserOperationV08, requiredPrefundV08, signUserOperationV08, toPackedOp, type UserOpV08 } from "@/lib/chain/userop";
import { getDb } from "@/lib/db/client";
import { sponsoredOperations, sponsorshipHolds } from "@/lib/db/schema";
import type { ProjectWithKeys } from "@/lib/projects/service";
import { followed } from "./helpers/follow";
import { call, newProject } from "./helpers/api";
import { chainOf, fundedWallet, mined } from "./helpers/chain";

/**
 * Our ERC-7677 service for EntryPoint v0.8, asked by viem's own paymaster client: an Upgradeable_v08 first op (its
 * AccountFactoryV8 initCode for an owner of the project) gets VerifyingPaymasterV8's data in ERC-7677's v0.8 shape,
 * bounded like v0.6's (the paymaster's own two limits too), held by its v0.8 userOpHash, and that hold is settled when
 * the op lands in a handleOps of the v0.8 EntryPoint.
 */
let project: ProjectWithKeys;
const d = () => serviceDeployment();
const chain = () => chainOf(31337);
const serviceUrl = () => `/v1/paymaster_service/${project.keys.test.publishable}`;
const rpc = (method: string, params: unknown[]) => call("POST", serviceUrl(), { json: { jsonrpc: "2.0", id: 1, method, params } });

beforeAll(async () => {
  project = await newProject("paymaster v0.8");
}, 60_000);

async function openPolicy() {
  const key = project.keys.test.secret;
  const policy = await call("POST", "/v1/policies", { key, json: { name: "open v0.8", chainId: 31337, strategy: { sponsorSchema: "pay_for_user" } } });
  expect(policy.status, JSON.stringify(policy.body)).toBe(200);
  const rule = await call("POST", "/v1/policy_rules", { key, json: { policy: policy.body.id, type: "contract_functions", wildcard: true, functionName: "All functions" } });
  expect(rule.status, JSON.stringify(rule.body)).toBe(200);
  return policy.body.id as string;
}

/**
 * A v0.8 first op deploying a SmartAccountV8 for the owner of a project account (created as a v0.6 account, so the
 * owner is the project's), its gas as a well-behaved client would estimate it, unsponsored and unsigned.
 */
async function firstOpV08() {
  const owner = privateKeyToAccount(generatePrivateKey());
  const res = await call("POST", "/v1/accounts", { key: project.keys.test.secret, json: { chainId: 31337, externalOwnerAddress: owner.address } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const salt = accountSalt(res.body.player.id);
  const sender = counterfactualAddressV08(owner.address, salt);
  const { factory, data } = accountFactoryCallV08(owner.address, salt);
  const callData = encodeFunctionData({ abi: simple7702AccountAbi, functionName: "execute", args: [privateKeyToAccount(generatePrivateKey()).address, 0n, "0x"] });
  const { op } = await estimateUserOperationV08(chain(), { sender, factory, factoryData: data, callData, sponsored: true });
  const { paymaster: _p, paymasterData: _d, paymasterVerificationGasLimit: _v, paymasterPostOpGasLimit: _o, ...unsponsored } = op;
  return { owner, op: unsponsored as UserOpV08 };
}

describe("the ERC-7677 service on EntryPoint v0.8", () => {
  it("viem's paymaster client gets VerifyingPaymasterV8's stub and data; the op lands in a v0.8 handleOps and its hold (by v0.8 userOpHash) settles once", async () => {
    const policy = await openPolicy();
    const paymaster = createPaymasterClient({ transport: viemHttp(`http://127.0.0.1${serviceUrl()}`, { fetchFn: (input, init) => routed(input, init) }) });
    const { owner, op } = await firstOpV08();
    const ask = { ...op, chainId: 31337, entryPointAddress: d().entryPointV08, context: { policy } };

    const stub = await paymaster.getPaymasterStubData(ask);
    expect(stub).toMatchObject({ paymaster: d().paymasterV08, paymasterPostOpGasLimit: 0n, isFinal: false, sponsor: { name: expect.any(String) } });
    expect(stub.paymasterData).toMatch(/^0x[0-9a-f]{258}$/i);

    const data = await paymaster.getPaymasterData(ask);
    expect(data.paymaster).toBe(d().paymasterV08);
    expect(data.paymasterVerificationGasLimit).toBeGreaterThan(0n);
    expect(data.paymasterPostOpGasLimit).toBe(0n);
    const sponsored: UserOpV08 = { ...op, ...data };
    const hash = getUserOperationHash({ userOperation: sponsored, entryPointAddress: d().entryPointV08, entryPointVersion: "0.8", chainId: 31337 });
    const [record] = await (await getDb()).select().from(sponsoredOperations).where(eq(sponsoredOperations.userOperationHash, hash.toLowerCase()));
    expect(record).toBeDefined();
    expect(BigInt(record!.maxCost)).toBe(requiredPrefundV08(sponsored));

    // A bundle of our own: handleOps on the v0.8 EntryPoint from a funded wallet (the paymaster's signature is what counts).
    const signed = await signUserOperationV08(chain(), sponsored, owner);
    const wallet = await fundedWallet(31337);
    await mined(31337, await wallet.writeContract({ address: d().entryPointV08, abi: entryPointV08Abi, functionName: "handleOps", args: [[toPackedOp(signed)], wallet.account!.address] }));
    await followed(31337);
    const holds = await (await getDb()).select().from(sponsorshipHolds).where(eq(sponsorshipHolds.sponsoredOperationId, record!.id));
    expect(holds.map((h) => ({ status: h.status, cause: h.cause }))).toEqual([{ status: "settled", cause: "erc7677" }]);
    expect(BigInt(holds[0]!.settledAmount!)).toBeGreaterThan(0n);
    expect(BigInt(holds[0]!.settledAmount!)).toBeLessThanOrEqual(requiredPrefundV08(sponsored));
  }, 120_000);

  it("bounds every gas field it signs, the paymaster's two limits included", async () => {
    const policy = await openPolicy();
    const { op } = await firstOpV08();
    const ask = (o: UserOpV08) => rpc("pm_getPaymasterData", [formatUserOperationRequest(o), d().entryPointV08, toHex(31337), { policy }]);
    for (const [field, value] of [
      ["callGasLimit", 10_000_000n],
      ["verificationGasLimit", 10_000_000n],
      ["preVerificationGas", 5_000_000n],
      ["paymasterVerificationGasLimit", 5_000_000n],
      ["paymasterPostOpGasLimit", 1n],
      ["maxFeePerGas", op.maxFeePerGas * 100n],
    ] as const) {
      const res = await ask({ ...op, [field]: value });
      expect(res.body.error, field).toMatchObject({ code: -32602, data: { field } });
    }
    // Nothing was held for the refused ones: the nonce's record, if any, is of an accepted ask only.
    const db = await getDb();
    const records = await db.select().from(sponsoredOperations).where(and(eq(sponsoredOperations.sender, op.sender.toLowerCase()), eq(sponsoredOperations.projectId, project.id)));
    expect(records).toEqual([]);
  }, 60_000);

  it("refuses a v0.8 op of a sender that is not the project's, and an unsupported entry point", async () => {
    const policy = await openPolicy();
    const stranger = privateKeyToAccount(generatePrivateKey());
    const sender = counterfactualAddressV08(stranger.address, accountSalt("pla_x"));
    const { factory, data } = accountFactoryCallV08(stranger.address, accountSalt("pla_x"));
    const op = { sender, nonce: "0x0", factory, factoryData: data, callData: "0x" };
    const foreign = await rpc("pm_getPaymasterStubData", [op, d().entryPointV08, toHex(31337), { policy }]);
    expect(foreign.body.error).toMatchObject({ code: -32003 });
    const entryPoint = await rpc("pm_getPaymasterStubData", [op, d().paymasterV08, toHex(31337), { policy }]);
    expect(entryPoint.body.error).toMatchObject({ code: -32602, data: { field: "entryPoint" } });
    expect(entryPoint.body.error.message).toContain(d().entryPointV08);
  });
});

/** viem's http transport, routed to the API's handlers in this process (test/helpers/api.ts's call) rather than a socket. */
async function routed(input: RequestInfo | URL, init?: RequestInit): Promise<Response> {
  const url = new URL(typeof input === "string" ? input : input instanceof URL ? input.href : input.url);
  const res = await call("POST", url.pathname, { json: JSON.parse(String(init?.body)) });
  return new Response(JSON.stringify(res.body), { status: res.status, headers: { "content-type": "application/json" } });
}

