import { eq } from "drizzle-orm";
import type { AbiFunction, AbiParameter } from "abitype";
import { BaseError, encodeFunctionData, isAddress, isHex, type Abi } from "viem";
import type { Queryable } from "@/lib/db/client";
import { accounts, contracts } from "@/lib/db/schema";
import { inScope } from "@/lib/db/scope";
import { badRequest, type ErrorDetails } from "@/lib/errors";
import type { ProjectContext } from "@/lib/tenant";

/**
 * The ABI function `functionName` names, chosen among overloads by the number of arguments.
 * `param` names the request field for error details.
 */
export function selectFunction(abi: unknown[], functionName: string, argCount: number, param = "functionName"): AbiFunction {
  const functions = (abi as AbiFunction[]).filter((item) => item.type === "function");
  const named = functions.filter((f) => f.name === functionName);
  if (named.length === 0) {
    const names = [...new Set(functions.map((f) => f.name))];
    throw badRequest(`The contract's ABI has no function named "${functionName}".`, {
      [param]: { value: functionName, message: names.length ? `functions: ${names.slice(0, 30).join(", ")}` : "the stored ABI declares no functions" },
    });
  }
  const match = named.find((f) => f.inputs.length === argCount);
  if (!match) {
    const arities = named.map((f) => f.inputs.length).join(" or ");
    throw badRequest(`${functionName} takes ${arities} argument(s), ${argCount} given.`, {
      functionArgs: { message: `expected ${arities} argument(s), got ${argCount}` },
    });
  }
  return match;
}

/**
 * Replaces `pla_`, `acc_` and `con_` ids among the arguments by their addresses on the chain:
 * a player's is its account there, an account's and a contract's their own.
 */
export async function resolveIdArguments(db: Queryable, ctx: ProjectContext, chainId: number, args: string[], param = "functionArgs"): Promise<string[]> {
  return Promise.all(
    args.map(async (arg, i) => {
      const missing = (message: string) => badRequest(message, { [`${param}[${i}]`]: { value: arg, message } });
      if (/^pla_[\w-]+$/.test(arg)) {
        const [row] = await db.select({ address: accounts.address }).from(accounts).where(inScope(accounts, ctx, eq(accounts.playerId, arg), eq(accounts.chainId, chainId)));
        if (!row) throw missing(`Player ${arg} has no account on chain ${chainId}.`);
        return row.address;
      }
      if (/^acc_[\w-]+$/.test(arg)) {
        const [row] = await db.select({ address: accounts.address }).from(accounts).where(inScope(accounts, ctx, eq(accounts.id, arg)));
        if (!row) throw missing(`No such account: '${arg}'`);
        return row.address;
      }
      if (/^con_[\w-]+$/.test(arg)) {
        const [row] = await db.select({ address: contracts.address }).from(contracts).where(inScope(contracts, ctx, eq(contracts.id, arg)));
        if (!row) throw missing(`No such contract: '${arg}'`);
        return row.address;
      }
      return arg;
    }),
  );
}

class ArgumentError extends Error {}

function coerce(param: AbiParameter, value: unknown): unknown {
  const { type } = param;
  const array = /^(.*)\[(\d*)\]$/.exec(type);
  if (array) {
    const items = typeof value === "string" ? parseJson(value) : value;
    if (!Array.isArray(items)) throw new ArgumentError(`expected a JSON array for ${type}`);
    if (array[2] && items.length !== Number(array[2])) throw new ArgumentError(`expected ${array[2]} items for ${type}`);
    return items.map((item) => coerce({ ...param, type: array[1]! } as AbiParameter, item));
  }
  if (type === "tuple") {
    const components = (param as { components: readonly AbiParameter[] }).components;
    const tuple = typeof value === "string" ? parseJson(value) : value;
    if (Array.isArray(tuple)) {
      if (tuple.length !== components.length) throw new ArgumentError(`expected ${components.length} tuple items`);
      return components.map((c, i) => coerce(c, tuple[i]));
    }
    if (tuple && typeof tuple === "object") {
      return Object.fromEntries(components.map((c) => [c.name, coerce(c, (tuple as Record<string, unknown>)[c.name ?? ""])]));
    }
    throw new ArgumentError("expected a JSON array or object for a tuple");
  }
  if (/^u?int\d*$/.test(type)) {
    if (typeof value === "number" && Number.isSafeInteger(value)) return BigInt(value);
    if (typeof value === "string" && /^-?\d+$|^0x[0-9a-fA-F]+$/.test(value.trim())) return BigInt(value.trim());
    throw new ArgumentError(`expected an integer (decimal or 0x hex) for ${type}`);
  }
  if (type === "bool") {
    if (value === true || value === "true") return true;
    if (value === false || value === "false") return false;
    throw new ArgumentError("expected true or false");
  }
  if (type === "address") {
    if (typeof value === "string" && isAddress(value, { strict: false })) return value;
    throw new ArgumentError("expected a 0x-prefixed 20-byte address (or a pla_, acc_ or con_ id)");
  }
  if (/^bytes\d*$/.test(type)) {
    if (typeof value === "string" && isHex(value)) return value;
    throw new ArgumentError(`expected 0x-prefixed hex for ${type}`);
  }
  if (type === "string") {
    if (typeof value === "string") return value;
    throw new ArgumentError("expected a string");
  }
  throw new ArgumentError(`unsupported ABI type ${type}`);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new ArgumentError("expected JSON");
  }
}

/** API arguments (strings, or JSON values) as the typed values viem encodes; 400 with details per argument. */
export function coerceArguments(fn: AbiFunction, args: unknown[], param = "functionArgs"): unknown[] {
  const details: ErrorDetails = {};
  const values = fn.inputs.map((input, i) => {
    try {
      return coerce(input, args[i]);
    } catch (err) {
      if (!(err instanceof ArgumentError)) throw err;
      details[`${param}[${i}]`] = { value: args[i], message: `${input.name || `argument ${i}`}: ${err.message}` };
      return undefined;
    }
  });
  const problems = Object.values(details).map((detail) => detail.message);
  if (problems.length) throw badRequest(`Invalid arguments for ${fn.name}: ${problems.join("; ")}.`, details);
  return values;
}

/**
 * A call of `fn` (chosen with selectFunction, its use checked by the caller) with `rawArgs`: ids
 * resolved to addresses on the contract's chain, values coerced to the ABI's types, checked to
 * encode. What a contract read and a balance monitor send.
 */
export async function callOf(db: Queryable, ctx: ProjectContext, chainId: number, fn: AbiFunction, rawArgs: string[]) {
  const args = coerceArguments(fn, await resolveIdArguments(db, ctx, chainId, rawArgs));
  const abi = [fn] as Abi;
  try {
    encodeFunctionData({ abi, functionName: fn.name, args });
  } catch (err) {
    const message = err instanceof BaseError ? err.shortMessage : String(err);
    throw badRequest(`Invalid arguments for ${fn.name}: ${message}`, { functionArgs: { message } });
  }
  return { fn, abi, args };
}
