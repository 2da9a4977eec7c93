import {
  BaseError,
  ContractFunctionRevertedError,
  ContractFunctionZeroDataError,
  type Address,
} from "viem";
import { z } from "zod";
import { onChain, publicClient } from "@/lib/chain/clients";
import { chainFor } from "@/lib/chain/registry";
import type { Queryable } from "@/lib/db/client";
import { badRequest } from "@/lib/errors";
import { listField } from "@/lib/http/fields";
import { unixSeconds } from "@/lib/http/resource";
import type { ProjectContext } from "@/lib/tenant";
import { callOf, selectFunction } from "./arguments";
import { getContract } from "./service";

export const readContractInput = z.strictObject({
  functionName: z.string({ error: "functionName is required" }).min(1).max(200),
  functionArgs: listField(z.string().max(10_000)).optional(),
});

export const readContractResponse = z.object({
  id: z.string(),
  object: z.literal("readContract"),
  createdAt: z.number().int(),
  functionName: z.string(),
  result: z.unknown(),
});

type BigNumberJson = { type: "BigNumber"; hex: string };

/** Integers as the `{type:"BigNumber", hex}` the API has always returned (ethers' JSON form); the rest as plain JSON. */
function toJson(value: unknown): unknown {
  if (typeof value === "bigint") {
    const digits = (value < 0n ? -value : value).toString(16);
    return { type: "BigNumber", hex: `${value < 0n ? "-" : ""}0x${digits.length % 2 ? "0" : ""}${digits}` } satisfies BigNumberJson;
  }
  if (Array.isArray(value)) return value.map(toJson);
  if (value && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, toJson(v)]));
  return value;
}

function revertReason(err: BaseError): string | undefined {
  const reverted = err.walk((e) => e instanceof ContractFunctionRevertedError) as ContractFunctionRevertedError | null;
  if (reverted) return reverted.reason ?? reverted.data?.errorName ?? reverted.shortMessage;
  return undefined;
}

/** Calls a view function of a registered contract with its stored ABI. */
export async function readContract(db: Queryable, ctx: ProjectContext, id: string, input: z.output<typeof readContractInput>) {
  const contract = await getContract(db, ctx, id);
  const chain = chainFor(ctx, contract.chainId);
  const rawArgs = input.functionArgs ?? [];
  const fn = selectFunction(contract.abi, input.functionName, rawArgs.length);
  if (fn.stateMutability !== "view" && fn.stateMutability !== "pure") {
    throw badRequest(`${fn.name} is a ${fn.stateMutability} function: it changes state, so send it as a transaction intent instead of reading it.`, {
      functionName: { value: input.functionName, message: "not a view or pure function" },
    });
  }
  const { abi, args } = await callOf(db, ctx, contract.chainId, fn, rawArgs);
  const address = contract.address as Address;
  const result = await onChain(chain, async () => {
    try {
      return await publicClient(chain).readContract({ address, abi, functionName: fn.name, args });
    } catch (err) {
      if (!(err instanceof BaseError)) throw err;
      if (err.walk((e) => e instanceof ContractFunctionZeroDataError) || /returned no data|Cannot decode zero data/.test(err.message)) {
        throw badRequest(`${fn.name} returned no data: is a contract with this function deployed at ${address} on chain ${chain.chainId}?`);
      }
      const reason = revertReason(err) ?? (/revert/i.test(err.message) ? err.shortMessage : undefined);
      if (reason !== undefined) throw badRequest(`The call to ${fn.name} reverted: ${reason}`);
      throw err;
    }
  });
  return { id: contract.id, object: "readContract" as const, createdAt: unixSeconds(new Date()), functionName: fn.name, result: toJson(result) };
}
