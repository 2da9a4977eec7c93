// Refusals to sponsor: one error (HTTP 402 sponsorship_declined) whose code says why, and their record for the dashboard.
import type { Queryable } from "@/lib/db/client";
import { sponsorshipDeclines } from "@/lib/db/schema";
import { ApiError } from "@/lib/errors";
import { newId } from "@/lib/ids";
import type { ProjectContext } from "@/lib/tenant";
import { log } from "@/lib/log";

export const DECLINE_CODES = [
  "balance_insufficient",
  "budget_exhausted",
  "outside_time_window",
  "gas_price_too_high",
  "webhook_declined",
  "no_matching_rule",
  "rate_limited",
  "max_cost_exceeded",
  "policy_disabled",
] as const;
export type DeclineCode = (typeof DECLINE_CODES)[number];

export interface DeclineDetails {
  policy?: string;
  rule?: string;
  /** What is left of the limit that refused (wei or dollars as a string), when it is one. */
  remaining?: string;
  /** When that limit starts again (Unix seconds), when it does. */
  resetsAt?: number;
  [extra: string]: unknown;
}

/**
 * A refusal to sponsor: HTTP 402 `{"error":{"type":"sponsorship_declined","code","message","details"}}`. Thrown
 * inside the transaction that would have held the operation's cost, so nothing is held or recorded.
 */
export class SponsorshipDeclined extends ApiError {
  constructor(
    readonly code: DeclineCode,
    message: string,
    readonly decline: DeclineDetails = {},
  ) {
    super(402, "sponsorship_declined", message);
  }

  override toJSON() {
    const details = Object.fromEntries(Object.entries(this.decline).filter(([, v]) => v !== undefined));
    return { error: { type: this.type, code: this.code, message: this.message, details } };
  }

  /** What an intent that fell back to paying itself records of the decline. */
  summary() {
    return { code: this.code, message: this.message, ...this.toJSON().error.details };
  }
}

export const declined = (code: DeclineCode, message: string, details: DeclineDetails = {}) => new SponsorshipDeclined(code, message, details);

/** Records a decline (after its transaction rolled back) for the dashboard's declines by reason; never fails the request. */
export async function recordDecline(
  db: Queryable,
  ctx: ProjectContext,
  err: SponsorshipDeclined,
  where: { chainId: number | null; playerId?: string | null; accountId?: string | null; source: "intent" | "erc7677" },
): Promise<void> {
  try {
    await db.insert(sponsorshipDeclines).values({
      id: newId("sponsorshipDecline"),
      ...ctx,
      chainId: where.chainId,
      policyId: err.decline.policy ?? null,
      ruleId: err.decline.rule ?? null,
      code: err.code,
      playerId: where.playerId ?? null,
      accountId: where.accountId?.startsWith("acc_") || where.accountId?.startsWith("dac_") ? where.accountId : null,
      source: where.source,
    });
  } catch (e) {
    log.warn({ err: e }, "could not record a sponsorship decline");
  }
}
