import { getDb } from "@/lib/db/client";
import { PURGES, purgeTable, type PurgedTable } from "@/lib/retention";
import { inngest } from "../client";

/**
 * Every hour, deletes what only grows (issue 29.9): request log rows, finished browser sign-ins,
 * used or expired credential tokens, expired or revoked player sessions, delivery attempts and
 * published events, finished background runs, ERC-7677 records, sponsorship declines, and settled or
 * released sponsorship holds with their journal entries, each past its retention
 * (lib/retention.ts). One step per table, so a retry repeats only the table that failed; a
 * backlog larger than one sweep's batches is taken by the next.
 */
export const purgeExpiredRows = inngest.createFunction(
  { id: "purge-expired-rows", retries: 2, triggers: [{ cron: "17 * * * *" }] },
  async ({ step }) => {
    const purged: Partial<Record<PurgedTable, number>> = {};
    for (const name of Object.keys(PURGES) as PurgedTable[]) {
      purged[name] = await step.run(`purge-${name}`, async () => purgeTable(await getDb(), name));
    }
    return purged;
  },
);
