import { listContracts } from "@/lib/contracts/operations";
import type { ProjectContext } from "@/lib/tenant";
import { readOperation } from "./operations";

type AbiParam = { name?: string; type: string };
export type AbiEntry = { type?: string; name?: string; stateMutability?: string; inputs?: AbiParam[]; outputs?: AbiParam[] };

export const functionSignature = (f: AbiEntry) => `${f.name}(${(f.inputs ?? []).map((i) => `${i.type}${i.name ? ` ${i.name}` : ""}`).join(", ")})`;

/** A function as the dashboard's forms ask for it: one field per argument. */
export interface FormFunction {
  name: string;
  signature: string;
  inputs: { name: string; type: string }[];
}

export const formFunction = (f: AbiEntry): FormFunction => ({ name: f.name ?? "", signature: functionSignature(f), inputs: (f.inputs ?? []).map((i) => ({ name: i.name ?? "", type: i.type })) });

const isRead = (f: AbiEntry) => f.stateMutability === "view" || f.stateMutability === "pure";

/** The mode's active contracts (the API caps a page at 100) with their functions, for the rule, token and transaction pickers. */
export async function projectContracts(ctx: ProjectContext, chainId?: number) {
  const list = await readOperation(ctx, listContracts, { limit: 100, deleted: false, ...(chainId !== undefined ? { chainId } : {}) });
  return list.data.map((c) => {
    const functions = (c.abi as AbiEntry[]).filter((e) => e.type === "function" && e.name);
    return {
      id: c.id,
      name: c.name ?? c.id,
      chainId: c.chainId,
      functions: functions.map((f) => f.name!),
      /** What a transaction can call: the functions that are not view or pure. */
      writable: functions.filter((f) => !isRead(f)).map(formFunction),
    };
  });
}

/** A contract that looks like an ERC-20 token (it has transfer and balanceOf). */
export const isToken = (c: { functions: string[] }) => c.functions.includes("transfer") && c.functions.includes("balanceOf");

export const tokenContracts = async (ctx: ProjectContext, chainId?: number) => (await projectContracts(ctx, chainId)).filter(isToken);
