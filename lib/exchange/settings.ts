import { sql } from "drizzle-orm";
import type { Address } from "viem";
import type { Queryable } from "@/lib/db/client";
import { exchangeSettings } from "@/lib/db/schema";
import { inScope } from "@/lib/db/scope";
import { notFound } from "@/lib/errors";
import { unixSeconds } from "@/lib/http/resource";
import type { ProjectContext } from "@/lib/tenant";

type SettingsRow = typeof exchangeSettings.$inferSelect;

const present = (ctx: ProjectContext, row: SettingsRow | undefined) => ({
  object: "exchangeSettings" as const,
  livemode: ctx.livemode,
  feeBasisPoints: row?.feeBasisPoints ?? 0,
  feeRecipient: row?.feeRecipient ?? null,
  createdAt: row ? unixSeconds(row.createdAt) : null,
  updatedAt: row ? unixSeconds(row.updatedAt) : null,
});

/** The mode's service fee on swaps, if one is set. */
export async function exchangeFee(db: Queryable, ctx: ProjectContext): Promise<{ basisPoints: number; recipient: Address } | null> {
  const [row] = await db.select().from(exchangeSettings).where(inScope(exchangeSettings, ctx));
  return row ? { basisPoints: row.feeBasisPoints, recipient: row.feeRecipient as Address } : null;
}

/** The settings as the API shows them: a zero fee and no recipient when none is set. */
export async function getExchangeSettings(db: Queryable, ctx: ProjectContext) {
  const [row] = await db.select().from(exchangeSettings).where(inScope(exchangeSettings, ctx));
  return present(ctx, row);
}

export async function setExchangeSettings(db: Queryable, ctx: ProjectContext, input: { feeBasisPoints: number; feeRecipient: Address }) {
  const [row] = await db
    .insert(exchangeSettings)
    .values({ ...ctx, feeBasisPoints: input.feeBasisPoints, feeRecipient: input.feeRecipient })
    .onConflictDoUpdate({
      target: [exchangeSettings.projectId, exchangeSettings.livemode],
      set: { feeBasisPoints: input.feeBasisPoints, feeRecipient: input.feeRecipient, updatedAt: sql`now()` },
    })
    .returning();
  return present(ctx, row);
}

export async function deleteExchangeSettings(db: Queryable, ctx: ProjectContext) {
  const [row] = await db.delete(exchangeSettings).where(inScope(exchangeSettings, ctx)).returning();
  if (!row) throw notFound("exchange fee", ctx.livemode ? "live" : "test");
  return { ...present(ctx, row), deleted: true as const };
}
