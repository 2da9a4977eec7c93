import { and, inArray, isNotNull, isNull, lt, ne, notExists, or, sql, type SQL } from "drizzle-orm";
import type { AnyPgColumn, PgTable } from "drizzle-orm/pg-core";
import { envNumber } from "@/lib/config";
import type { Db } from "@/lib/db/client";
import {
  chainLandings,
  functionRuns,
  oauthSignins,
  outboundEvents,
  playerCredentialTokens,
  paymasterSignatures,
  playerSessions,
  requestLogs,
  sponsoredOperations,
  sponsorshipDeclines,
  sponsorshipEntries,
  sponsorshipHolds,
  sponsorshipReconciliations,
  webhookDeliveries,
} from "@/lib/db/schema";

/**
 * How long rows that only grow are kept (issue 29.9): every setting is in days (fractions allowed)
 * and read at each sweep, so an operator's change applies at the next one.
 */
export const retentionSettings = () => ({
  /** Request log rows, counted from the request. */
  requestLogDays: envNumber("REQUEST_LOG_RETENTION_DAYS", 30, { min: 0 }),
  /** Browser sign-ins (state, verifier, uncollected result), counted from their expiry (10 minutes after the start). */
  oauthSigninDays: envNumber("OAUTH_SIGNIN_RETENTION_DAYS", 1, { min: 0 }),
  /** Password-reset and email-verification tokens, counted from their use or their expiry. */
  credentialTokenDays: envNumber("CREDENTIAL_TOKEN_RETENTION_DAYS", 7, { min: 0 }),
  /** Player sessions, counted from their expiry or revocation (the dashboard shows them until then). */
  playerSessionDays: envNumber("PLAYER_SESSION_RETENTION_DAYS", 30, { min: 0 }),
  /**
   * Webhook and trigger delivery attempts, and published events once fanned out, counted from when they were made:
   * the dashboard's delivery log and Redeliver reach back this far (as Stripe's 30 days of events).
   */
  deliveryLogDays: envNumber("DELIVERY_LOG_RETENTION_DAYS", 30, { min: 0 }),
  /** Finished background runs (completed or failed) with their step results, counted from their last scheduling. */
  functionRunDays: envNumber("FUNCTION_RUN_RETENTION_DAYS", 14, { min: 0 }),
  /**
   * Operations our paymaster signed over ERC-7677, counted from their signature: interval rules count them (with the
   * policy's intents) for windows up to this long.
   */
  sponsoredOperationDays: envNumber("SPONSORED_OPERATION_RETENTION_DAYS", 400, { min: 0 }),
  /** Refusals to sponsor (the dashboard's declines by reason), counted from the refusal. */
  sponsorshipDeclineDays: envNumber("SPONSORSHIP_DECLINES_RETENTION_DAYS", 90, { min: 0 }),
  /**
   * Settled or released sponsorship holds and their journal entries (hold, settle, release), counted from the hold:
   * budgets count holds, so a budget's period (a `total` one's whole life) reaches back at most this far. A live hold
   * is never deleted, nor are credits and corrections; the balances are running totals and keep every amount.
   */
  sponsorshipHoldDays: envNumber("SPONSORSHIP_HOLD_RETENTION_DAYS", 400, { min: 0 }),
  /** The background reconciliations of the ledger with the chains (each run's rows), counted from when they were made. */
  reconciliationDays: envNumber("SPONSORSHIP_RECONCILIATION_RETENTION_DAYS", 30, { min: 0 }),
  /** Rows deleted per statement: each batch is a short statement, so a large backlog never holds locks for long. */
  batchSize: envNumber("RETENTION_BATCH_SIZE", 5000, { above: 0, integer: true }),
  /** Batches per table per sweep: a backlog beyond that is left to the next sweep. */
  maxBatches: envNumber("RETENTION_MAX_BATCHES", 100, { above: 0, integer: true }),
});

type Settings = ReturnType<typeof retentionSettings>;

const before = (days: number): SQL => sql`now() - make_interval(secs => ${Math.round(days * 86_400)})`;

interface Purge {
  table: PgTable;
  key: AnyPgColumn;
  /** Which rows are past retention; each column it compares has an index (lib/db/schema.ts), so a batch is an index range. */
  due: (s: Settings) => SQL;
}

export const PURGES = {
  // Rows without a project are what versions before issue 29.9 wrote for unauthenticated requests: none is written now.
  requestLogs: { table: requestLogs, key: requestLogs.id, due: (s) => or(lt(requestLogs.createdAt, before(s.requestLogDays)), isNull(requestLogs.projectId))! },
  oauthSignins: { table: oauthSignins, key: oauthSignins.id, due: (s) => lt(oauthSignins.expiresAt, before(s.oauthSigninDays)) },
  credentialTokens: {
    table: playerCredentialTokens,
    key: playerCredentialTokens.tokenHash,
    due: (s) => or(lt(playerCredentialTokens.expiresAt, before(s.credentialTokenDays)), lt(playerCredentialTokens.usedAt, before(s.credentialTokenDays)))!,
  },
  playerSessions: {
    table: playerSessions,
    key: playerSessions.id,
    due: (s) => or(lt(playerSessions.expiresAt, before(s.playerSessionDays)), lt(playerSessions.revokedAt, before(s.playerSessionDays)))!,
  },
  webhookDeliveries: { table: webhookDeliveries, key: webhookDeliveries.id, due: (s) => lt(webhookDeliveries.createdAt, before(s.deliveryLogDays)) },
  outboundEvents: { table: outboundEvents, key: outboundEvents.id, due: (s) => lt(outboundEvents.fannedOutAt, before(s.deliveryLogDays)) },
  sponsoredOperations: { table: sponsoredOperations, key: sponsoredOperations.id, due: (s) => lt(sponsoredOperations.createdAt, before(s.sponsoredOperationDays)) },
  sponsorshipDeclines: { table: sponsorshipDeclines, key: sponsorshipDeclines.id, due: (s) => lt(sponsorshipDeclines.createdAt, before(s.sponsorshipDeclineDays)) },
  // A hold's entries go with it, never while it is live (the hold itself is looked up by its primary key).
  sponsorshipEntries: {
    table: sponsorshipEntries,
    key: sponsorshipEntries.id,
    due: (s) =>
      and(
        lt(sponsorshipEntries.createdAt, before(s.sponsorshipHoldDays)),
        isNotNull(sponsorshipEntries.holdId),
        notExists(sql`(select 1 from ${sponsorshipHolds} where ${sponsorshipHolds.id} = ${sponsorshipEntries.holdId} and ${sponsorshipHolds.status} = 'held')`),
      )!,
  },
  sponsorshipHolds: {
    table: sponsorshipHolds,
    key: sponsorshipHolds.id,
    due: (s) => and(lt(sponsorshipHolds.createdAt, before(s.sponsorshipHoldDays)), ne(sponsorshipHolds.status, "held"))!,
  },
  // Our paymasters' signatures and the landings read from the chain go with the holds they are for (same age), never
  // while a signature may still land or a landing awaits its settlement.
  paymasterSignatures: {
    table: paymasterSignatures,
    key: paymasterSignatures.id,
    due: (s) => and(lt(paymasterSignatures.createdAt, before(s.sponsorshipHoldDays)), ne(paymasterSignatures.status, "live"))!,
  },
  chainLandings: {
    table: chainLandings,
    key: chainLandings.id,
    due: (s) => and(lt(chainLandings.createdAt, before(s.sponsorshipHoldDays)), ne(chainLandings.status, "seen"))!,
  },
  sponsorshipReconciliations: {
    table: sponsorshipReconciliations,
    key: sponsorshipReconciliations.id,
    due: (s) => lt(sponsorshipReconciliations.createdAt, before(s.reconciliationDays)),
  },
  // A run still queued or running is never due, however old: it is work not done yet.
  functionRuns: {
    table: functionRuns,
    key: functionRuns.id,
    due: (s) => and(inArray(functionRuns.status, ["completed", "failed"]), lt(functionRuns.runAt, before(s.functionRunDays)))!,
  },
} satisfies Record<string, Purge>;

export type PurgedTable = keyof typeof PURGES;

/** Deletes one table's rows past retention, a batch per statement, at most `maxBatches`: how many went. */
export async function purgeTable(db: Db, name: PurgedTable, settings: Settings = retentionSettings()): Promise<number> {
  const { table, key, due } = PURGES[name] as Purge;
  let deleted = 0;
  for (let i = 0; i < settings.maxBatches; i++) {
    const batch = db.select({ key }).from(table).where(due(settings)).limit(settings.batchSize);
    // `= any(array(…))`, not `in (…)`: the batch's keys are computed first, then deleted through the primary key;
    // with `in`, PostgreSQL may hash-join the whole table for each batch (measured: 160-250 ms against 12-16 ms a batch of 5000 in 1M rows).
    const gone = await db.delete(table).where(sql`${key} = any(array(${batch}))`).returning({ key });
    deleted += gone.length;
    if (gone.length < settings.batchSize) break;
  }
  return deleted;
}
