// A row recorded together with the hold of what it may cost and the record of our paymaster's signature on it, in one
// statement (ledger.ts hold() and addSignature take several, plus the transaction around them): what an intent's POST writes.
import { getTableColumns, getTableName, sql, type SQL } from "drizzle-orm";
import { toSnakeCase } from "drizzle-orm/casing";
import type { PgColumn, PgTable } from "drizzle-orm/pg-core";
import type { Queryable } from "@/lib/db/client";
import { preparedQuery } from "@/lib/db/prepared-query";
import { paymasterSignatures, sponsorshipBalances, sponsorshipEntries, sponsorshipHolds } from "@/lib/db/schema";
import { newId } from "@/lib/ids";
import type { ProjectContext } from "@/lib/tenant";
import { declined } from "./declines";
import { balanceOf, ensureBalance, ledgerEnforced, usdOf, type HoldRequest } from "./ledger";
import type { SignatureFacts } from "./signatures";

/** A column's name in the database (the schema's keys are snake_cased, as lib/db/client.ts opens drizzle). */
const columnName = (column: PgColumn) => (column.keyAsName ? toSnakeCase(column.name) : column.name);

/** A placeholder cast to its column's type: parameters of an INSERT … SELECT take no type from the target column. */
const typed = (column: PgColumn, name: string) => sql`${sql.placeholder(name)}::${sql.raw(column.getSQLType())}`;

/** A placeholder's value as the driver takes it (drizzle's column encoders are not applied to placeholders' nulls). */
const driverValue = (column: PgColumn, value: unknown) => {
  if (value === null || value === undefined) return null;
  if (column.getSQLType() === "jsonb") return JSON.stringify(value);
  return value instanceof Date ? value.toISOString() : value;
};

/** `insert into <table> (<columns>) select <values> from <source>`, each value a typed placeholder unless given as SQL. */
function insertSelect(table: PgTable, values: [PgColumn, SQL][], source: string, returning: string) {
  const columns = sql.join(
    values.map(([column]) => sql.identifier(columnName(column))),
    sql`, `,
  );
  const selected = sql.join(
    values.map(([, value]) => value),
    sql`, `,
  );
  return sql`insert into ${sql.identifier(getTableName(table))} (${columns}) select ${selected} from ${sql.identifier(source)} returning ${sql.raw(returning)}`;
}

/** The hold's, its entry's and its signature's columns, their values placeholders (h_*, s_*) or the recorded row's id (`ref`). */
function holdStatements(ref: "intentId" | "sponsoredOperationId") {
  const h = sponsorshipHolds;
  const e = sponsorshipEntries;
  const g = paymasterSignatures;
  const hold: [PgColumn, SQL][] = [
    [h.id, typed(h.id, "h_id")],
    [h.projectId, typed(h.projectId, "projectId")],
    [h.livemode, typed(h.livemode, "livemode")],
    [h.chainId, typed(h.chainId, "h_chainId")],
    [h.status, sql`'held'`],
    [h.amount, typed(h.amount, "h_amount")],
    [h.usdPrice, typed(h.usdPrice, "h_usdPrice")],
    [h.cause, typed(h.cause, "h_cause")],
    [h[ref], sql`"recorded"."id"`],
    [h.policyId, typed(h.policyId, "h_policyId")],
    [h.playerId, typed(h.playerId, "h_playerId")],
    [h.accountId, typed(h.accountId, "h_accountId")],
    [h.chainTime, sql`coalesce(${typed(h.chainTime, "h_chainTime")}, now())`],
    [h.expiresAt, typed(h.expiresAt, "s_validUntil")],
  ];
  const entry: [PgColumn, SQL][] = [
    [e.id, typed(e.id, "e_id")],
    [e.projectId, typed(e.projectId, "projectId")],
    [e.livemode, typed(e.livemode, "livemode")],
    [e.chainId, typed(e.chainId, "h_chainId")],
    [e.kind, sql`'hold'`],
    [e.amount, typed(e.amount, "h_amount")],
    [e.usd, typed(e.usd, "e_usd")],
    [e.cause, typed(e.cause, "h_cause")],
    [e.holdId, sql`"hold"."id"`],
    [e[ref], sql`"hold"."${sql.raw(columnName(h[ref]))}"`],
    [e.policyId, typed(e.policyId, "h_policyId")],
    [e.playerId, typed(e.playerId, "h_playerId")],
    [e.accountId, typed(e.accountId, "h_accountId")],
  ];
  const signature: [PgColumn, SQL][] = [
    [g.id, typed(g.id, "s_id")],
    [g.projectId, typed(g.projectId, "projectId")],
    [g.livemode, typed(g.livemode, "livemode")],
    [g.chainId, typed(g.chainId, "h_chainId")],
    [g.entryPoint, typed(g.entryPoint, "s_entryPoint")],
    [g.paymaster, typed(g.paymaster, "s_paymaster")],
    [g.sender, typed(g.sender, "s_sender")],
    [g.nonce, typed(g.nonce, "s_nonce")],
    [g.userOperationHash, typed(g.userOperationHash, "s_hash")],
    [g.maxCost, typed(g.maxCost, "h_amount")],
    [g.validUntil, typed(g.validUntil, "s_validUntil")],
    [g.holdId, sql`"hold"."id"`],
    [g[ref], sql`"hold"."${sql.raw(columnName(h[ref]))}"`],
  ];
  return { hold, entry, signature };
}

/**
 * For `table` and the columns an insert of it gives (`keys`): records a row and holds the most its operation may cost
 * against the project's balance on its chain, as ledger.ts hold() does, in ONE statement. The balance row's
 * conditional UPDATE (its lock decides concurrent holds one after another), then the row, the hold (keyed by the
 * row's id as `ref`), its journal entry and the signature it is for (signatures.ts), each only if the one before was
 * written: all or nothing, so it needs no transaction of its own. Declines with balance_insufficient when the balance cannot cover it (nothing written).
 */
export function heldInsert<T extends PgTable, K extends keyof T["$inferInsert"] & keyof T["_"]["columns"] & string>(
  name: string,
  table: T,
  keys: readonly K[],
  ref: "intentId" | "sponsoredOperationId",
) {
  const columns = getTableColumns(table) as Record<string, PgColumn>;
  const { hold, entry, signature } = holdStatements(ref);
  const statement = preparedQuery(name, (q) => {
    const b = sponsorshipBalances;
    const enough = sql`(not ${sql.placeholder("enforce")}::boolean or ${b.credited} - ${b.held} - ${b.settled} >= ${sql.placeholder("h_amount")}::numeric)`;
    const balance = q.$with("balance", { one: sql<number>`1` }).as(
      sql`update ${b} set ${sql.identifier(columnName(b.held))} = ${b.held} + ${sql.placeholder("h_amount")}::numeric, ${sql.identifier(columnName(b.updatedAt))} = now()
        where ${b.projectId} = ${sql.placeholder("projectId")}::text and ${b.livemode} = ${sql.placeholder("livemode")}::boolean and ${b.chainId} = ${sql.placeholder("h_chainId")}::integer and ${enough}
        returning 1 as one`,
    );
    const recorded = q.$with("recorded", columns).as(
      insertSelect(
        table,
        keys.map((key) => [columns[key]!, typed(columns[key]!, `r_${key}`)]),
        "balance",
        "*",
      ),
    );
    const held = q.$with("hold", { id: sql<string>`id` }).as(insertSelect(sponsorshipHolds, hold, "recorded", `id, ${columnName(sponsorshipHolds[ref])}`));
    const journal = q.$with("journal", { id: sql<string>`id` }).as(insertSelect(sponsorshipEntries, entry, "hold", "id"));
    const signed = q.$with("signed", { id: sql<string>`id` }).as(insertSelect(paymasterSignatures, signature, "hold", "id"));
    return q.with(balance, recorded, held, journal, signed).select().from(recorded);
  });

  const attempt = async (q: Queryable, values: Record<string, unknown>) => ((await statement(q, values)) as T["$inferSelect"][])[0] ?? null;

  return async (q: Queryable, ctx: ProjectContext, row: Pick<T["$inferInsert"], K>, request: HoldRequest, sig: SignatureFacts): Promise<T["$inferSelect"]> => {
    const values: Record<string, unknown> = {
      projectId: ctx.projectId,
      livemode: ctx.livemode,
      enforce: ledgerEnforced(),
      h_id: newId("sponsorshipHold"),
      h_chainId: request.chainId,
      h_amount: request.amount.toString(),
      h_usdPrice: request.usdPrice === null ? null : String(request.usdPrice),
      h_cause: request.cause,
      h_policyId: request.policyId ?? null,
      h_playerId: request.playerId ?? null,
      h_accountId: request.accountId ?? null,
      h_chainTime: request.chainTime ? request.chainTime.toISOString() : null,
      e_id: newId("sponsorshipEntry"),
      e_usd: usdOf(request.amount, request.usdPrice),
      s_id: newId("paymasterSignature"),
      s_entryPoint: sig.entryPoint.toLowerCase(),
      s_paymaster: sig.paymaster.toLowerCase(),
      s_sender: sig.sender.toLowerCase(),
      s_nonce: sig.nonce.toString(),
      s_hash: sig.userOperationHash.toLowerCase(),
      s_validUntil: new Date(sig.validUntil * 1000).toISOString(),
    };
    for (const key of keys) values[`r_${key}`] = driverValue(columns[key]!, (row as Record<string, unknown>)[key]);
    const recorded = await attempt(q, values);
    if (recorded) return recorded;
    // The project's first hold on the chain: its balance row is made (with a local chain's test credit), then again.
    await ensureBalance(q, ctx, request.chainId);
    const again = await attempt(q, values);
    if (again) return again;
    const { available } = await balanceOf(q, ctx, request.chainId);
    throw declined(
      "balance_insufficient",
      `The project's sponsorship balance on chain ${request.chainId} has ${available} wei available; this operation may cost up to ${request.amount} wei. Fund it (see GET /v1/sponsorship/balances).`,
      { policy: request.policyId ?? undefined, remaining: (available > 0n ? available : 0n).toString(), chainId: request.chainId, required: request.amount.toString() },
    );
  };
}
