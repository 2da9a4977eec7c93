const FAILURE_WINDOW_MS = 15 * 60_000;
const MAX_FAILURES = 10;
const state = globalThis as unknown as { __signInFailures?: Map<string, { count: number; since: number }> };
const failures = (state.__signInFailures ??= new Map());

/** Guessing passwords: 10 wrong ones for an email lock it for 15 minutes (in this process). */
export function isLockedOut(email: string, now = Date.now()) {
  const entry = failures.get(email);
  if (entry && now - entry.since > FAILURE_WINDOW_MS) failures.delete(email);
  return (failures.get(email)?.count ?? 0) >= MAX_FAILURES;
}

export function recordSignIn(email: string, ok: boolean, now = Date.now()) {
  if (ok) return void failures.delete(email);
  const entry = failures.get(email) ?? { count: 0, since: now };
  entry.count += 1;
  failures.set(email, entry);
  if (failures.size > 100_000) for (const [key, e] of failures) if (now - e.since > FAILURE_WINDOW_MS) failures.delete(key);
}
