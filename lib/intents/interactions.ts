// An intent's `interactions` as the account's calls: a registered contract's function with its arguments, or a raw to/data.
import { encodeFunctionData, getAddress, isAddressEqual, type Abi, type Address, type Hex } from "viem";
import type { AccountCall } from "@/lib/chain/userop";
import { coerceArguments, resolveIdArguments, selectFunction } from "@/lib/contracts/arguments";
import { activeContractOn } from "@/lib/contracts/service";
import type { Queryable } from "@/lib/db/client";
import { badRequest } from "@/lib/errors";
import type { RuledCall } from "@/lib/policies/evaluate";
import type { ProjectContext } from "@/lib/tenant";
import type { InteractionInput } from "./schema";
import type { IntentSender } from "./sender";

export interface ResolvedCall extends AccountCall {
  ruled: RuledCall;
}

export async function resolveInteraction(db: Queryable, ctx: ProjectContext, account: IntentSender, item: InteractionInput, i: number): Promise<ResolvedCall> {
  const at = (field: string) => `interactions[${i}][${field}]`;
  const value = BigInt(item.value ?? "0");
  if (item.contract !== undefined) {
    if (item.to !== undefined || item.data !== undefined) {
      throw badRequest("An interaction names either a contract (with functionName) or a raw to/data, not both.", { [at("to")]: { message: "not with contract" } });
    }
    const contract = await activeContractOn(db, ctx, item.contract, account.chainId, at("contract"));
    if (item.functionName === undefined) throw badRequest(`${at("functionName")} is required with a contract.`, { [at("functionName")]: { message: "required" } });
    const rawArgs = item.functionArgs ?? [];
    const fn = selectFunction(contract.abi, item.functionName, rawArgs.length, at("functionName"));
    // String arguments may be pla_/acc_/con_ ids; JSON values (numbers, arrays, objects) are taken as they are.
    // The sender's own account or player id is its address: no lookup (the account was read already).
    const own = (a: string) => (a === account.id && a.startsWith("acc_")) || (a === account.playerId && a.startsWith("pla_"));
    const strings = rawArgs.map((a) => (typeof a !== "string" ? "" : own(a) ? account.address : a));
    const resolved = await resolveIdArguments(db, ctx, account.chainId, strings, at("functionArgs"));
    const args = coerceArguments(fn, rawArgs.map((a, k) => (typeof a === "string" ? resolved[k] : a)), at("functionArgs"));
    const data = encodeFunctionData({ abi: [fn] as Abi, functionName: fn.name, args });
    const to = getAddress(contract.address);
    return { to, value, data, ruled: { contractId: contract.id, to, functionName: fn.name, self: isAddressEqual(to, account.address) } };
  }
  if (item.to === undefined) {
    throw badRequest("An interaction needs a contract (con_...) with functionName, or a raw to address.", { [at("contract")]: { message: "required unless to is given" } });
  }
  if (item.functionName !== undefined || item.functionArgs !== undefined) {
    throw badRequest("functionName and functionArgs need a registered contract; with a raw to, send data.", { [at("functionName")]: { message: "needs contract" } });
  }
  const to = item.to as Address;
  return { to, value, data: (item.data ?? "0x") as Hex, ruled: { contractId: null, to, functionName: null, self: isAddressEqual(to, account.address) } };
}
