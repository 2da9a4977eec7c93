import { beforeAll, describe, expect, it } from "vitest";
import { accountFactoryAbi, entryPointAbi, smartAccountAbi, verifyingPaymasterAbi } from "@/contracts/artifacts";
import { accountSalt } from "@/lib/chain/accounts";
import { serviceDeployment } from "@/lib/chain/contracts";
import type { ProjectWithKeys } from "@/lib/projects/service";
import { call, expectError, newProject } from "./helpers/api";
import { clientOf } from "./helpers/chain";

let project: ProjectWithKeys;
let key: string;
const contractIds: Record<string, string> = {};
const d = () => serviceDeployment();

const bigNumber = (value: bigint) => {
  const hex = value.toString(16);
  return { type: "BigNumber", hex: `0x${hex.length % 2 ? "0" : ""}${hex}` };
};

const read = (id: string, functionName: string, functionArgs?: unknown[], options: { key?: string; comma?: boolean } = {}) =>
  call("GET", `/v1/contracts/${id}/read`, {
    key: options.key ?? key,
    query: { functionName, ...(functionArgs && { functionArgs: options.comma ? functionArgs.join(",") : functionArgs }) },
  });

beforeAll(async () => {
  project = await newProject("reads");
  key = project.keys.test.secret;
  const register = async (name: string, address: string, abi: unknown, chainId = 31337) => {
    const res = await call("POST", "/v1/contracts", { key, json: { name, chainId, address, abi } });
    expect(res.status).toBe(200);
    contractIds[name] = res.body.id;
  };
  await register("EntryPoint", d().entryPoint, entryPointAbi);
  await register("Factory", d().accountFactory, accountFactoryAbi);
  await register("Paymaster", d().paymaster, verifyingPaymasterAbi);
  await register("Nothing", "0x000000000000000000000000000000000000dEaD", accountFactoryAbi);
});

describe("GET /v1/contracts/{id}/read", () => {
  it("returns integers as BigNumber hex, equal to a direct viem read", async () => {
    const res = await read(contractIds.EntryPoint!, "balanceOf", [d().paymaster]);
    expect(res.status).toBe(200);
    const direct = await clientOf(31337).readContract({ address: d().entryPoint, abi: entryPointAbi, functionName: "balanceOf", args: [d().paymaster] });
    expect(direct).toBeGreaterThan(0n);
    expect(res.body).toMatchObject({ id: contractIds.EntryPoint, object: "readContract", functionName: "balanceOf", result: bigNumber(direct) });
    expect(typeof res.body.createdAt).toBe("number");
  });

  it("returns addresses, multiple outputs and structs as natural JSON", async () => {
    const owner = "0x00000000000000000000000000000000000000A1";
    const salt = accountSalt("pla_example");
    const address = await read(contractIds.Factory!, "getAddress", [owner, salt]);
    const direct = await clientOf(31337).readContract({ address: d().accountFactory, abi: accountFactoryAbi, functionName: "getAddress", args: [owner, salt] });
    expect(address.body.result).toBe(direct);

    const deposits = await read(contractIds.EntryPoint!, "deposits", [d().paymaster]);
    const raw = await clientOf(31337).readContract({ address: d().entryPoint, abi: entryPointAbi, functionName: "deposits", args: [d().paymaster] });
    expect(deposits.body.result).toEqual([bigNumber(raw[0]), raw[1], bigNumber(raw[2]), raw[3], raw[4]]);

    const info = await read(contractIds.EntryPoint!, "getDepositInfo", [d().paymaster]);
    expect(info.body.result).toMatchObject({ deposit: bigNumber(raw[0]), staked: raw[1] });
  });

  it("resolves pla_, acc_ and con_ ids among the arguments to addresses on the contract's chain", async () => {
    const { body: account } = await call("POST", "/v1/accounts", { key, json: { chainId: 31337 } });
    const nonce = (await clientOf(31337).readContract({ address: d().entryPoint, abi: entryPointAbi, functionName: "getNonce", args: [account.address, 7n] })) as bigint;
    for (const who of [account.id, account.player.id]) {
      const res = await read(contractIds.EntryPoint!, "getNonce", [who, "7"]);
      expect(res.status).toBe(200);
      expect(res.body.result).toEqual(bigNumber(nonce));
    }
    // the SDK's comma-joined array form
    expect((await read(contractIds.EntryPoint!, "getNonce", [account.id, "0x07"], { comma: true })).body.result).toEqual(bigNumber(nonce));
    const viaContractId = await read(contractIds.EntryPoint!, "balanceOf", [contractIds.Paymaster]);
    expect(viaContractId.body.result).toEqual((await read(contractIds.EntryPoint!, "balanceOf", [d().paymaster])).body.result);

    // a player without an account on this chain, and ids of another project, are refused
    const { body: lonely } = await call("POST", "/v1/players", { key, json: {} });
    const missing = expectError(await read(contractIds.EntryPoint!, "balanceOf", [lonely.id]), 400);
    expect(missing.details?.["functionArgs[0]"]?.message).toMatch(/no account on chain 31337/);
    const other = await newProject("other");
    const { body: foreign } = await call("POST", "/v1/accounts", { key: other.keys.test.secret, json: { chainId: 31337 } });
    expectError(await read(contractIds.EntryPoint!, "balanceOf", [foreign.id]), 400);
    expectError(await read(contractIds.EntryPoint!, "balanceOf", [d().paymaster], { key: other.keys.test.secret }), 404);
  });

  it("refuses bad function names, arities, arguments and state-changing functions with 400 details", async () => {
    const unknown = expectError(await read(contractIds.EntryPoint!, "balanceOff", [d().paymaster]), 400);
    expect(unknown.details?.functionName?.message).toMatch(/balanceOf/);
    const arity = expectError(await read(contractIds.EntryPoint!, "balanceOf", []), 400);
    expect(arity.message).toMatch(/takes 1 argument/);
    expectError(await read(contractIds.EntryPoint!, "balanceOf", [d().paymaster, "1"]), 400);
    const notAddress = expectError(await read(contractIds.EntryPoint!, "balanceOf", ["0x1234"]), 400);
    expect(notAddress.details?.["functionArgs[0]"]).toBeDefined();
    const notNumber = expectError(await read(contractIds.EntryPoint!, "getNonce", [d().paymaster, "seven"]), 400);
    expect(notNumber.details?.["functionArgs[1]"]?.message).toMatch(/integer/);
    // the message itself names the argument and the problem, for clients that show only it
    expect(notNumber.message).toMatch(/^Invalid arguments for getNonce: key: expected .*integer/);
    expectError(await read(contractIds.EntryPoint!, "getNonce", [d().paymaster, (2n ** 200n).toString()]), 400);
    expect(expectError(await read(contractIds.EntryPoint!, "depositTo", [d().paymaster]), 400).message).toMatch(/transaction intent/);
    expect(expectError(await call("GET", `/v1/contracts/${contractIds.EntryPoint}/read`, { key }), 400).details?.functionName).toBeDefined();
    expectError(await read("con_missing", "balanceOf", [d().paymaster]), 404);
  });

  it("reports reverts and missing code as 400s, not 500s", async () => {
    const reverted = expectError(await read(contractIds.Paymaster!, "parsePaymasterAndData", ["0x1234"]), 400);
    expect(reverted.message).toMatch(/reverted: VerifyingPaymaster: paymasterAndData must be/);
    const empty = expectError(await read(contractIds.Nothing!, "getAddress", [d().paymaster, accountSalt("x")]), 400);
    expect(empty.message).toMatch(/returned no data.*0x000000000000000000000000000000000000dEaD on chain 31337/);
  });

  it("answers 502 when the chain's node does not answer", async () => {
    process.env.CHAIN_31998_RPC_URL = "http://127.0.0.1:9";
    process.env.CHAIN_31998_LIVE = "false";
    try {
      const { body: contract } = await call("POST", "/v1/contracts", { key, json: { name: "far", chainId: 31998, address: d().entryPoint, abi: entryPointAbi } });
      expect(expectError(await read(contract.id, "balanceOf", [d().paymaster]), 502).message).toMatch(/31998/);
    } finally {
      delete process.env.CHAIN_31998_RPC_URL;
      delete process.env.CHAIN_31998_LIVE;
    }
  });

  it("reads a deployed account's own state", async () => {
    const { body: account } = await call("POST", "/v1/accounts", { key, json: { chainId: 31337 } });
    const { body: registered } = await call("POST", "/v1/contracts", { key, json: { name: "account", chainId: 31337, address: account.address, abi: smartAccountAbi } });
    // counterfactual: no code yet
    expectError(await read(registered.id, "owner"), 400);
  });
});
