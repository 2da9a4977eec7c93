import { and, eq, sql } from "drizzle-orm";
import type { Address } from "viem";
import { onChain, publicClient } from "@/lib/chain/clients";
import { chainFor, supportedChains, type ChainConfig } from "@/lib/chain/registry";
import type { Queryable } from "@/lib/db/client";
import { paymasters, policies } from "@/lib/db/schema";
import { inScope } from "@/lib/db/scope";
import { badRequest, conflict, notFound, referenced } from "@/lib/errors";
import { listPage } from "@/lib/http/list";
import { newId } from "@/lib/ids";
import { checkOutboundUrl } from "@/lib/outbound";
import type { ProjectContext } from "@/lib/tenant";
import type { CreatePaymasterInput, ListPaymastersInput, UpdatePaymasterInput } from "./schema";

export type PaymasterRow = typeof paymasters.$inferSelect;

const hasCode = async (chain: ChainConfig, address: Address) =>
  ((await onChain(chain, () => publicClient(chain).getCode({ address }))) ?? "0x") !== "0x";

/** 400 naming `param` unless `address` holds a contract on `chain`. */
export async function requireCodeOn(chain: ChainConfig, address: string, param = "address") {
  if (!(await hasCode(chain, address as Address))) {
    throw badRequest(`No contract is deployed at ${address} on chain ${chain.chainId} yet: a paymaster sponsors only once its contract is deployed there.`, {
      [param]: { value: address, message: `no code on chain ${chain.chainId} yet` },
    });
  }
}

/**
 * The chains of the key's mode with code at `address`, as they answer now (a chain that cannot be asked counts as
 * without). A paymaster is registered whether or not its contract is deployed yet (it often is deployed after); the
 * answer says where it has code, and using it (a policy naming it) needs code on the policy's chain.
 */
export async function chainsWithCode(ctx: ProjectContext, address: string): Promise<number[]> {
  const chains = supportedChains().filter((c) => c.livemode === ctx.livemode);
  const found = await Promise.allSettled(chains.map((chain) => hasCode(chain, address as Address)));
  return chains.filter((_, i) => found[i]!.status === "fulfilled" && (found[i] as PromiseFulfilledResult<boolean>).value).map((c) => c.chainId);
}

/** A registered paymaster with where its address has code (lib/paymasters/serializer.ts says so in the answer). */
export interface PaymasterWithCode {
  row: PaymasterRow;
  deployedOn: number[];
  /** The chain the request named (`chainId`), when it did. */
  chainId?: number;
}

async function withCode(ctx: ProjectContext, row: PaymasterRow, chainId?: number): Promise<PaymasterWithCode> {
  return { row, deployedOn: await chainsWithCode(ctx, row.address), ...(chainId !== undefined && { chainId }) };
}

/** The URL as stored: checked against the outbound rule and normalised (null or undefined passed through: unset, unchanged). */
const checkedUrl = async <T extends string | null | undefined>(ctx: ProjectContext, url: T): Promise<T | string> =>
  url ? (await checkOutboundUrl(url, { livemode: ctx.livemode, field: "url" })).href : url;

export async function createPaymaster(db: Queryable, ctx: ProjectContext, input: CreatePaymasterInput): Promise<PaymasterWithCode> {
  const url = await checkedUrl(ctx, input.url);
  if (input.chainId !== undefined) chainFor(ctx, input.chainId); // a chain of the key's mode (400 naming chainId otherwise)
  const [row] = await db
    .insert(paymasters)
    .values({ id: newId("paymaster"), ...ctx, address: input.address, url: url ?? null, context: input.context ?? null, name: input.name ?? null })
    .returning();
  return withCode(ctx, row!, input.chainId);
}

/** A paymaster and where its address has code (single answers). */
export async function getPaymasterWithCode(db: Queryable, ctx: ProjectContext, id: string): Promise<PaymasterWithCode> {
  return withCode(ctx, await getPaymaster(db, ctx, id));
}

/** Deleted paymasters stay readable by id (with `deleted: true`), like contracts. */
export async function getPaymaster(db: Queryable, ctx: ProjectContext, id: string): Promise<PaymasterRow> {
  const [row] = await db.select().from(paymasters).where(inScope(paymasters, ctx, eq(paymasters.id, id)));
  if (!row) throw notFound("paymaster", id);
  return row;
}

export async function listPaymasters(db: Queryable, ctx: ProjectContext, input: ListPaymastersInput) {
  return listPage(db, paymasters, inScope(paymasters, ctx, eq(paymasters.deleted, input.deleted ?? false)), input);
}

/** The chains of the live policies that sponsor through the paymaster. */
async function policyChains(db: Queryable, ctx: ProjectContext, id: string): Promise<number[]> {
  const rows = await db
    .selectDistinct({ chainId: policies.chainId })
    .from(policies)
    .where(inScope(policies, ctx, eq(policies.paymasterId, id), eq(policies.deleted, false)));
  return rows.map((r) => r.chainId);
}

export async function updatePaymaster(db: Queryable, ctx: ProjectContext, id: string, input: UpdatePaymasterInput): Promise<PaymasterWithCode> {
  const current = await getPaymaster(db, ctx, id);
  if (current.deleted) throw badRequest(`Paymaster ${id} is deleted.`, { id: { value: id, message: "deleted" } });
  const url = await checkedUrl(ctx, input.url);
  if (input.chainId !== undefined) chainFor(ctx, input.chainId);
  if (input.address !== undefined) {
    // The policies using it keep sponsoring through it: the new address must be a contract on their chains (its use).
    for (const chainId of await policyChains(db, ctx, id)) await requireCodeOn(chainFor(ctx, chainId), input.address);
  }
  const [row] = await db
    .update(paymasters)
    .set({
      ...(input.address !== undefined && { address: input.address }),
      ...(url !== undefined && { url }),
      ...(input.context !== undefined && { context: input.context }),
      ...(input.name !== undefined && { name: input.name }),
      updatedAt: sql`now()`,
    })
    .where(inScope(paymasters, ctx, eq(paymasters.id, id)))
    .returning();
  return withCode(ctx, row!, input.chainId);
}

/** Soft delete; refused (409) while a policy that is not deleted sponsors through it, so no policy silently loses its paymaster. */
export async function deletePaymaster(db: Queryable, ctx: ProjectContext, id: string) {
  return db.transaction(async (tx) => {
    const [row] = await tx.select().from(paymasters).where(inScope(paymasters, ctx, eq(paymasters.id, id))).for("update");
    if (!row) throw notFound("paymaster", id);
    const [user] = await tx
      .select({ id: policies.id })
      .from(policies)
      .where(and(eq(policies.paymasterId, id), eq(policies.deleted, false)))
      .limit(1);
    if (user) throw conflict(`Paymaster ${id} sponsors policy ${user.id}: set that policy's paymaster to another one (or to "") or delete the policy first.`);
    await tx.update(paymasters).set({ deleted: true, updatedAt: sql`now()` }).where(eq(paymasters.id, id));
    return { id, object: "paymaster" as const, deleted: true as const };
  });
}

/**
 * The paymaster a policy names (as `param`): of the project and mode, not deleted, with a URL to call, and a
 * contract on the policy's chain (registered before its deployment, it is usable once deployed). 400 otherwise.
 */
export async function usablePaymaster(db: Queryable, ctx: ProjectContext, id: string, chain: ChainConfig, param = "paymaster"): Promise<PaymasterRow> {
  if (!id.startsWith("pay_")) throw badRequest(`Expected a paymaster id (pay_...), got ${id}.`, { [param]: { value: id, message: "not a paymaster id" } });
  const row = await referenced(getPaymaster(db, ctx, id), param, id);
  if (row.deleted) throw badRequest(`Paymaster ${id} is deleted.`, { [param]: { value: id, message: "deleted" } });
  if (!row.url) throw badRequest(`Paymaster ${id} has no url: register its ERC-7677 service URL first.`, { [param]: { value: id, message: "has no url" } });
  await requireCodeOn(chain, row.address, param);
  return row;
}
