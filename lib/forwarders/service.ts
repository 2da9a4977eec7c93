import { eq, sql } from "drizzle-orm";
import { chainFor } from "@/lib/chain/registry";
import type { Queryable } from "@/lib/db/client";
import { forwarderContracts } from "@/lib/db/schema";
import { inScope } from "@/lib/db/scope";
import { notFound } from "@/lib/errors";
import { listPage, type ListParams } from "@/lib/http/list";
import { unixSeconds } from "@/lib/http/resource";
import { newId } from "@/lib/ids";
import type { ProjectContext } from "@/lib/tenant";

/**
 * The project's forwarder contracts, per mode: a registry (address, chain, name) for clients that manage their
 * ERC-2771 forwarders through the API. Our relay sends every transaction from an ERC-4337 smart account whose gas
 * a policy sponsors, so no intent reads this registry (docs/forwarder-contracts.md). A record is removed for good
 * when deleted (nothing refers to it).
 */

export type ForwarderContractRow = typeof forwarderContracts.$inferSelect;

export interface ForwarderContractInput {
  address: string;
  chainId: number;
  name?: string;
}

/** The SDK's ForwarderContractResponse: id, object, createdAt, address, chainId and, when set, name. */
export function serializeForwarderContract(row: ForwarderContractRow) {
  return {
    id: row.id,
    object: "forwarderContract" as const,
    createdAt: unixSeconds(row.createdAt),
    address: row.address,
    chainId: row.chainId,
    ...(row.name !== null && { name: row.name }),
  };
}

export async function createForwarderContract(db: Queryable, ctx: ProjectContext, input: ForwarderContractInput): Promise<ForwarderContractRow> {
  chainFor(ctx, input.chainId); // a supported chain of the key's mode (400 naming chainId otherwise)
  const [row] = await db
    .insert(forwarderContracts)
    .values({ id: newId("forwarderContract"), ...ctx, address: input.address, chainId: input.chainId, name: input.name || null })
    .returning();
  return row!;
}

export async function getForwarderContract(db: Queryable, ctx: ProjectContext, id: string): Promise<ForwarderContractRow> {
  const [row] = await db.select().from(forwarderContracts).where(inScope(forwarderContracts, ctx, eq(forwarderContracts.id, id)));
  if (!row) throw notFound("forwarder contract", id);
  return row;
}

export function listForwarderContracts(db: Queryable, ctx: ProjectContext, params: ListParams) {
  return listPage(db, forwarderContracts, inScope(forwarderContracts, ctx), params);
}

/** Fields sent replace the stored ones; `name=` (empty) clears the name. */
export async function updateForwarderContract(db: Queryable, ctx: ProjectContext, id: string, input: Partial<ForwarderContractInput>): Promise<ForwarderContractRow> {
  if (input.chainId !== undefined) chainFor(ctx, input.chainId);
  const [row] = await db
    .update(forwarderContracts)
    .set({
      ...(input.address !== undefined && { address: input.address }),
      ...(input.chainId !== undefined && { chainId: input.chainId }),
      ...(input.name !== undefined && { name: input.name || null }),
      updatedAt: sql`now()`,
    })
    .where(inScope(forwarderContracts, ctx, eq(forwarderContracts.id, id)))
    .returning();
  if (!row) throw notFound("forwarder contract", id);
  return row;
}

export async function deleteForwarderContract(db: Queryable, ctx: ProjectContext, id: string) {
  const [row] = await db.delete(forwarderContracts).where(inScope(forwarderContracts, ctx, eq(forwarderContracts.id, id))).returning({ id: forwarderContracts.id });
  if (!row) throw notFound("forwarder contract", id);
  return { id: row.id, object: "forwarderContract" as const, deleted: true as const };
}
