import { eq } from "drizzle-orm";
import { expiryJob, relayJob } from "@/lib/jobs/messages";
import { sendJobs } from "@/lib/jobs/port";
import type { Db } from "@/lib/db/client";
import { transactionIntents } from "@/lib/db/schema";
import { afterCommit } from "@/lib/http/after-commit";
import type { IntentRow } from "./service";

/** How long an optimistic request waits for its op to land before answering anyway. */
const OPTIMISTIC_WAIT_MS = 15_000;

/**
 * Hands a pending intent to the relay (with `optimistic`, waits a while until it has landed), or
 * schedules the cancellation of a sponsored one still awaiting its signature when its sponsorship ends.
 */
export async function relayIntent(db: Db, intent: IntentRow, optimistic: boolean) {
  // Under an Idempotency-Key the events go once the intent and the key's response have committed;
  // if that send fails the minute sweep (resendUnsettledIntents) sends them, with the same ids.
  if (intent.status === "awaiting_signature") {
    if (intent.sponsored) await afterCommit(() => sendJobs([expiryJob(intent.id, intent.projectId)]));
    return intent;
  }
  const deferred = await afterCommit(() => sendJobs([relayJob(intent.id, intent.projectId)]));
  // Nothing lands before the commit: the caller waits after it (refreshAfterCommit).
  if (!optimistic || deferred) return intent;
  return waitForLanding(db, intent);
}

/** The intent once its op has landed, or as it is after OPTIMISTIC_WAIT_MS. */
export async function waitForLanding(db: Db, intent: IntentRow) {
  const deadline = Date.now() + OPTIMISTIC_WAIT_MS;
  for (;;) {
    const [row] = await db.select().from(transactionIntents).where(eq(transactionIntents.id, intent.id));
    if (!row || row.status !== "pending" || Date.now() > deadline) return row ?? intent;
    await new Promise((r) => setTimeout(r, 25));
  }
}
