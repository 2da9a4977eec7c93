import { getDb } from "@/lib/db/client";
import { checkMonitors } from "@/lib/monitors/monitor";
import { inngest } from "../client";

/** Checks per run: one every 10 seconds of its minute, so a reading is never more than about 10 s old. */
export const CHECKS_PER_RUN = 6;

/**
 * The balance monitors (event definitions on balance.* topics, lib/monitors/monitor.ts): started every
 * minute by cron (the embedded runner's, or Inngest's when served), each run checks every monitor six
 * times, ten seconds apart. Each check is a step, so a crash repeats at most the check in flight; a
 * monitor fires at most once per drop below its threshold however often it is checked.
 */
export const monitorBalances = inngest.createFunction(
  { id: "monitor-balances", retries: 2, triggers: [{ cron: "* * * * *" }] },
  async ({ step, runId }) => {
    const fired: string[] = [];
    for (let i = 0; i < CHECKS_PER_RUN; i++) {
      const summary = await step.run(`check-${i}`, async () => checkMonitors(await getDb(), { runId }));
      fired.push(...summary.fired);
      if (i < CHECKS_PER_RUN - 1) await step.sleep(`wait-${i}`, "10s");
    }
    return { fired };
  },
);
