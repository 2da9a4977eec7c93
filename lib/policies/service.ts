import { and, eq, sql } from "drizzle-orm";
import { chainFor } from "@/lib/chain/registry";
import { activeContractOn } from "@/lib/contracts/service";
import { usablePaymaster } from "@/lib/paymasters/service";
import type { Queryable } from "@/lib/db/client";
import { policies, policyRules } from "@/lib/db/schema";
import { inScope } from "@/lib/db/scope";
import { badRequest, conflict, notFound } from "@/lib/errors";
import { listPage } from "@/lib/http/list";
import { newId } from "@/lib/ids";
import type { ProjectContext } from "@/lib/tenant";
import type { CreatePolicyInput, ListPoliciesInput, UpdatePolicyInput } from "./schema";

export type PolicyRow = typeof policies.$inferSelect;
type StrategyInput = CreatePolicyInput["strategy"];

/** The paymaster column for `paymaster` (pay_, checked usable on the policy's chain; "" = our own paymaster), or {} when not given. */
async function paymasterColumn(db: Queryable, ctx: ProjectContext, chainId: number, paymaster: string | undefined) {
  if (paymaster === undefined) return {};
  if (paymaster === "") return { paymasterId: null };
  return { paymasterId: (await usablePaymaster(db, ctx, paymaster, chainFor(ctx, chainId))).id };
}

/** The strategy's columns, after checking its token contract exists on the policy's chain. */
async function strategyColumns(db: Queryable, ctx: ProjectContext, chainId: number, strategy: StrategyInput) {
  if (strategy.sponsorSchema === "pay_for_user") {
    for (const field of ["tokenContract", "tokenContractAmount"] as const) {
      if (strategy[field] !== undefined) {
        throw badRequest(`strategy[${field}] applies to fixed_rate and charge_custom_tokens only.`, {
          [`strategy[${field}]`]: { value: strategy[field], message: "not used by pay_for_user" },
        });
      }
    }
    return { sponsorSchema: strategy.sponsorSchema, tokenContractId: null, tokenContractAmount: null };
  }
  const missing = (["tokenContract", "tokenContractAmount"] as const).filter((f) => strategy[f] === undefined);
  if (missing.length) {
    throw badRequest(`A ${strategy.sponsorSchema} strategy needs ${missing.join(" and ")}.`, Object.fromEntries(missing.map((f) => [`strategy[${f}]`, { message: "required" }])));
  }
  const token = await activeContractOn(db, ctx, strategy.tokenContract!, chainId, "strategy[tokenContract]");
  return { sponsorSchema: strategy.sponsorSchema, tokenContractId: token.id, tokenContractAmount: strategy.tokenContractAmount! };
}

export async function createPolicy(db: Queryable, ctx: ProjectContext, input: CreatePolicyInput): Promise<PolicyRow> {
  chainFor(ctx, input.chainId);
  const strategy = await strategyColumns(db, ctx, input.chainId, input.strategy);
  const paymaster = await paymasterColumn(db, ctx, input.chainId, input.paymaster);
  const [row] = await db
    .insert(policies)
    .values({
      id: newId("policy"),
      ...ctx,
      name: input.name,
      chainId: input.chainId,
      ...strategy,
      ...paymaster,
      sponsorOutsideAccounts: input.sponsorOutsideAccounts ?? false,
    })
    .returning();
  return row!;
}

/** Deleted policies stay readable by id (with `deleted: true`). */
export async function getPolicy(db: Queryable, ctx: ProjectContext, id: string): Promise<PolicyRow> {
  const [row] = await db.select().from(policies).where(inScope(policies, ctx, eq(policies.id, id)));
  if (!row) throw notFound("policy", id);
  return row;
}

export async function listPolicies(db: Queryable, ctx: ProjectContext, input: ListPoliciesInput) {
  const where = inScope(
    policies,
    ctx,
    eq(policies.deleted, input.deleted ?? false),
    input.name !== undefined ? eq(policies.name, input.name) : undefined,
    input.chainId !== undefined ? eq(policies.chainId, input.chainId) : undefined,
    input.enabled !== undefined ? eq(policies.enabled, input.enabled) : undefined,
  );
  return listPage(db, policies, where, input);
}

export async function updatePolicy(db: Queryable, ctx: ProjectContext, id: string, input: UpdatePolicyInput): Promise<PolicyRow> {
  // The paymaster is checked against the chain (code at its address) before the transaction: no chain call holds one open.
  const before = await getPolicy(db, ctx, id);
  const targetChain = input.chainId ?? before.chainId;
  const paymasterInput = input.paymaster ?? (input.chainId !== undefined ? (before.paymasterId ?? undefined) : undefined);
  const paymaster = await paymasterColumn(db, ctx, targetChain, paymasterInput);
  return db.transaction(async (tx) => {
    const [current] = await tx.select().from(policies).where(inScope(policies, ctx, eq(policies.id, id))).for("update");
    if (!current) throw notFound("policy", id);
    const chainId = input.chainId ?? current.chainId;
    if (chainId !== targetChain || (input.paymaster === undefined && input.chainId !== undefined && current.paymasterId !== before.paymasterId)) {
      throw conflict(`Policy ${id} changed while it was being updated; send the update again.`);
    }
    if (input.chainId !== undefined && input.chainId !== current.chainId) {
      chainFor(ctx, input.chainId);
      const [bound] = await tx
        .select({ id: policyRules.id })
        .from(policyRules)
        .where(and(eq(policyRules.policyId, id), sql`${policyRules.contractId} is not null`))
        .limit(1);
      if (bound) throw conflict(`Policy ${id} has rules for contracts on chain ${current.chainId} (${bound.id}); delete them before moving it to chain ${input.chainId}.`);
    }
    if (paymaster.paymasterId) {
      // Budgets count what our paymaster held on the project's ledger; a registered paymaster's operations are its own service's.
      const [budget] = await tx
        .select({ id: policyRules.id })
        .from(policyRules)
        .where(and(eq(policyRules.policyId, id), eq(policyRules.type, "budget"), sql`${policyRules.scope} <> 'operation'`))
        .limit(1);
      if (budget) throw conflict(`Policy ${id} has a budget (${budget.id}) counted on this service's sponsorship ledger, which a registered paymaster's operations never reach; delete it (or make it per operation) before naming a paymaster.`);
    }
    const strategy = input.strategy
      ? await strategyColumns(tx, ctx, chainId, input.strategy)
      : input.chainId !== undefined && current.tokenContractId
        ? await strategyColumns(tx, ctx, chainId, { sponsorSchema: current.sponsorSchema, tokenContract: current.tokenContractId, tokenContractAmount: current.tokenContractAmount ?? undefined })
        : {};
    const [row] = await tx
      .update(policies)
      .set({
        ...(input.name !== undefined && { name: input.name }),
        chainId,
        ...strategy,
        // A policy moved to another chain keeps its paymaster only if that paymaster has code there too (checked above).
        ...paymaster,
        ...(input.sponsorOutsideAccounts !== undefined && { sponsorOutsideAccounts: input.sponsorOutsideAccounts }),
        ...(input.deleted !== undefined && { deleted: input.deleted }),
        updatedAt: sql`now()`,
      })
      .where(eq(policies.id, id))
      .returning();
    return row!;
  });
}

export async function setPolicyEnabled(db: Queryable, ctx: ProjectContext, id: string, enabled: boolean): Promise<PolicyRow> {
  const [row] = await db.update(policies).set({ enabled, updatedAt: sql`now()` }).where(inScope(policies, ctx, eq(policies.id, id))).returning();
  if (!row) throw notFound("policy", id);
  return row;
}

export async function deletePolicy(db: Queryable, ctx: ProjectContext, id: string) {
  const deleted = await db.update(policies).set({ deleted: true, updatedAt: sql`now()` }).where(inScope(policies, ctx, eq(policies.id, id))).returning({ id: policies.id });
  if (deleted.length === 0) throw notFound("policy", id);
  return { id, object: "policy" as const, deleted: true as const };
}
