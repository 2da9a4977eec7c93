import { AsyncLocalStorage } from "node:async_hooks";
import { log } from "@/lib/log";

type Hook = () => Promise<void>;

export interface Deferred {
  hooks: Hook[];
  /** The answer to give once the side effects ran (e.g. an optimistic intent that has landed since). */
  refresh?: () => Promise<unknown>;
}

const pending = new AsyncLocalStorage<Deferred>();

/**
 * Runs `fn` now, or, inside `deferringSideEffects` (an idempotent request), once the request's
 * answer is stored under its key: an event about a row must not go out before the key would
 * replay that row, and a failed send must not change the answer. Returns whether it was deferred.
 */
export async function afterCommit(fn: Hook): Promise<boolean> {
  const deferred = pending.getStore();
  if (!deferred) {
    await fn();
    return false;
  }
  deferred.hooks.push(fn);
  return true;
}

/**
 * Inside `deferringSideEffects` only: once the answer is stored and the side effects ran, answer
 * with what `fn` gives instead (the stored body stays the key's answer should `fn` fail).
 * Outside it the operation answers as it goes, so this does nothing.
 */
export function refreshAfterCommit(fn: () => Promise<unknown>) {
  const deferred = pending.getStore();
  if (deferred) deferred.refresh = fn;
}

/** Runs `body` collecting its `afterCommit` side effects instead of running them; the caller runs them once its answer is stored. */
export async function deferringSideEffects<T>(body: () => Promise<T>): Promise<{ result: T; deferred: Deferred }> {
  const deferred: Deferred = { hooks: [] };
  const result = await pending.run(deferred, body);
  return { result, deferred };
}

/**
 * Runs deferred side effects once the answer is stored, then the refreshed answer if any
 * (undefined otherwise). A failure is logged, not thrown: the committed work stands and its own
 * recovery (e.g. the minute sweep of unsettled intents) redoes the effect.
 */
export async function runDeferred(deferred: Deferred, context: Record<string, unknown> = {}): Promise<{ body: unknown } | undefined> {
  const failed = (what: string, err: unknown) => log.error({ ...context, err }, `${what} after commit failed; left to its recovery`);
  for (const hook of deferred.hooks) {
    try {
      await hook();
    } catch (err) {
      failed("side effect", err);
    }
  }
  if (!deferred.refresh) return undefined;
  try {
    return { body: await deferred.refresh() };
  } catch (err) {
    failed("refreshing the answer", err);
    return undefined;
  }
}
