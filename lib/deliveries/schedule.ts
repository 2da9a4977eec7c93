import { environment, type SettingsEnv } from "@/lib/config";

/**
 * When a failed delivery is tried again: after 5 s, 1 min, 5 min, 30 min, 2 h, 5 h, 10 h, then
 * every 12 h five times: 13 attempts over about 3 days and 6 hours. WEBHOOK_RETRY_SCHEDULE
 * replaces it (comma-separated durations, "1s,2s,5s"), for drills and tests.
 */
export const DEFAULT_RETRY_SCHEDULE = ["5s", "1m", "5m", "30m", "2h", "5h", "10h", "12h", "12h", "12h", "12h", "12h"] as const;

/** A trigger that has failed every attempt for this long is disabled. TRIGGER_DISABLE_AFTER replaces it ("3d"). */
export const DEFAULT_DISABLE_AFTER = "3d";

const UNITS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const DURATION = /^(\d+)(ms|s|m|h|d)$/;

export const durationMs = (text: string) => {
  const [, amount, unit] = DURATION.exec(text) ?? [];
  if (!amount || !unit) throw new Error(`not a duration: "${text}" (use e.g. 30s, 5m, 2h, 1d)`);
  return Number(amount) * UNITS[unit]!;
};

export function retrySchedule(env: SettingsEnv = environment()): string[] {
  const configured = env.WEBHOOK_RETRY_SCHEDULE?.trim();
  if (!configured) return [...DEFAULT_RETRY_SCHEDULE];
  const steps = configured.split(",").map((s) => s.trim());
  steps.forEach(durationMs); // refuses a bad setting loudly instead of retrying at random
  return steps;
}

export const disableAfterMs = (env: SettingsEnv = environment()) => durationMs(env.TRIGGER_DISABLE_AFTER?.trim() || DEFAULT_DISABLE_AFTER);
