/**
 * One value per process under `key`, made by `create` on first use. Kept on globalThis, not in a module-level
 * variable, because `next dev` (HMR) and Next.js's separate route bundles may evaluate a module more than once: each
 * copy would get its own cache, pool or lock, and state meant to be shared (the database handle, the logger, the
 * runner, rate-limit lanes) would split. A value that changes is held in the object `create` returns.
 */
export function processSingleton<T>(key: string, create: () => T): T {
  const store = globalThis as unknown as Record<string, unknown>;
  const slot = `__${key}`;
  if (!(slot in store)) store[slot] = create();
  return store[slot] as T;
}
