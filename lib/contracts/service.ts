import { asc, eq, ilike, inArray, sql } from "drizzle-orm";
import { chainFor } from "@/lib/chain/registry";
import type { Queryable } from "@/lib/db/client";
import { preparedQuery } from "@/lib/db/prepared-query";
import { contracts } from "@/lib/db/schema";
import { inScope } from "@/lib/db/scope";
import { badRequest, notFound, referenced } from "@/lib/errors";
import { listPage } from "@/lib/http/list";
import { newId } from "@/lib/ids";
import type { ProjectContext } from "@/lib/tenant";
import type { CreateContractInput, ListContractsInput, UpdateContractInput } from "./schema";

export type ContractRow = typeof contracts.$inferSelect;

export async function createContract(db: Queryable, ctx: ProjectContext, input: CreateContractInput): Promise<ContractRow> {
  chainFor(ctx, input.chainId);
  // An address already registered gets another registration (a new con_), as the hosted API does:
  // a setup script run twice, or one contract under two names or ABIs, must not break.
  const [row] = await db
    .insert(contracts)
    .values({
      id: newId("contract"),
      ...ctx,
      name: input.name,
      chainId: input.chainId,
      address: input.address,
      abi: input.abi ?? [],
      publicVerification: input.publicVerification ?? false,
    })
    .returning();
  return row!;
}

/** Deleted contracts stay readable by id (with `deleted: true`), as the resource has that field. */
// Prepared: every intent looks its interactions' contracts up (drizzle would build the select again each time).
const contractById = preparedQuery("contract_by_id", (q) =>
  q
    .select()
    .from(contracts)
    .where(inScope(contracts, { projectId: sql.placeholder("projectId"), livemode: sql.placeholder("livemode") }, eq(contracts.id, sql.placeholder("id")))),
);

export async function getContract(db: Queryable, ctx: ProjectContext, id: string): Promise<ContractRow> {
  const [row] = await contractById(db, { projectId: ctx.projectId, livemode: ctx.livemode, id });
  if (!row) throw notFound("contract", id);
  return row;
}

export async function listContracts(db: Queryable, ctx: ProjectContext, input: ListContractsInput) {
  const where = inScope(
    contracts,
    ctx,
    eq(contracts.deleted, input.deleted ?? false),
    input.name !== undefined ? eq(contracts.name, input.name) : undefined,
    input.chainId !== undefined ? eq(contracts.chainId, input.chainId) : undefined,
    input.address !== undefined ? ilike(contracts.address, input.address.replace(/[%_\\]/g, "\\$&")) : undefined,
  );
  return listPage(db, contracts, where, input);
}

export async function updateContract(db: Queryable, ctx: ProjectContext, id: string, input: UpdateContractInput): Promise<ContractRow> {
  const { deleted, ...fields } = input;
  if (input.chainId !== undefined) chainFor(ctx, input.chainId);
  const [row] = await db
    .update(contracts)
    .set({ ...fields, ...(deleted !== undefined && { deleted }), updatedAt: sql`now()` })
    .where(inScope(contracts, ctx, eq(contracts.id, id)))
    .returning();
  if (!row) throw notFound("contract", id);
  return row;
}

export async function deleteContract(db: Queryable, ctx: ProjectContext, id: string) {
  const deleted = await db
    .update(contracts)
    .set({ deleted: true, updatedAt: sql`now()` })
    .where(inScope(contracts, ctx, eq(contracts.id, id)))
    .returning({ id: contracts.id });
  if (deleted.length === 0) throw notFound("contract", id);
  return { id, object: "contract" as const, deleted: true as const };
}

/** A contract named in a request (as `param`) that must be registered, not deleted, and on `chainId`: 400 otherwise. */
export async function activeContractOn(db: Queryable, ctx: ProjectContext, id: string, chainId: number, param: string): Promise<ContractRow> {
  const contract = await referenced(getContract(db, ctx, id), param, id);
  if (contract.deleted || contract.chainId !== chainId) {
    throw badRequest(`Contract ${contract.id} must be a registered, not deleted contract on chain ${chainId}.`, {
      [param]: { value: contract.id, message: contract.deleted ? "deleted" : `on chain ${contract.chainId}` },
    });
  }
  return contract;
}

/**
 * The project's live registrations at each of `addresses` on the chain, keyed by lower-case address, oldest first
 * (one address may be registered several times, under other names or ABIs).
 */
export async function registeredContractsAt(db: Queryable, ctx: ProjectContext, chainId: number, addresses: Iterable<string>): Promise<Map<string, ContractRow[]>> {
  const wanted = [...new Set([...addresses].map((a) => a.toLowerCase()))];
  const by = new Map<string, ContractRow[]>();
  if (wanted.length === 0) return by;
  const rows = await db
    .select()
    .from(contracts)
    .where(
      inScope(
        contracts,
        ctx,
        eq(contracts.chainId, chainId),
        eq(contracts.deleted, false),
        inArray(sql<string>`lower(${contracts.address})`, wanted),
      ),
    )
    .orderBy(asc(contracts.createdAt), asc(contracts.id));
  for (const row of rows) {
    const key = row.address.toLowerCase();
    by.set(key, [...(by.get(key) ?? []), row]);
  }
  return by;
}
