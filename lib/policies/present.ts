import { inArray } from "drizzle-orm";
import { serializeContract } from "@/lib/contracts/serializer";
import type { Queryable } from "@/lib/db/client";
import { embeddedIntents } from "@/lib/intent-records/embedded";
import { contracts } from "@/lib/db/schema";
import type { ProjectContext } from "@/lib/tenant";
import { rulesOfPolicies, type PolicyRuleRow } from "./rules";
import { serializePolicy, serializePolicyRule } from "./serializer";
import type { PolicyRow } from "./service";

type Expand = readonly string[] | undefined;

/** Rules as the API shows them, with `contract` expanded when asked. */
export async function presentPolicyRules(db: Queryable, rows: PolicyRuleRow[], expand: Expand) {
  if (!expand?.includes("contract")) return rows.map((row) => serializePolicyRule(row));
  const ids = [...new Set(rows.flatMap((r) => (r.contractId ? [r.contractId] : [])))];
  const found = ids.length ? await db.select().from(contracts).where(inArray(contracts.id, ids)) : [];
  const byId = new Map(found.map((c) => [c.id, serializeContract(c)]));
  return rows.map((row) => serializePolicyRule(row, row.contractId ? (byId.get(row.contractId) ?? { id: row.contractId }) : undefined));
}

/** Policies with their rules as `{id}`, or in full when `policyRules` is expanded. */
export async function presentPolicies(db: Queryable, ctx: ProjectContext, rows: PolicyRow[], expand: Expand) {
  const ids = rows.map((r) => r.id);
  const [rules, intentsBy] = await Promise.all([
    rulesOfPolicies(db, ctx, ids),
    embeddedIntents(db, "policyId", ids, expand?.includes("transactionIntents") ?? false),
  ]);
  const full = expand?.includes("policyRules") ?? false;
  return Promise.all(
    rows.map(async (row) => {
      const own = rules.get(row.id) ?? [];
      return serializePolicy(row, full ? await presentPolicyRules(db, own, undefined) : own.map((r) => ({ id: r.id })), intentsBy.get(row.id) ?? []);
    }),
  );
}

export const presentPolicy = async (db: Queryable, ctx: ProjectContext, row: PolicyRow, expand: Expand) => (await presentPolicies(db, ctx, [row], expand))[0]!;
