// Process-local caches of rows that nearly every request reads, dropped in every process the moment those rows
// change: triggers (migration 0019) NOTIFY 'cache_invalidation' with the table's name at commit, whoever writes, and
// each process LISTENs. Nothing is kept before the listener is up; when its connection comes back, everything is
// dropped (notifications may have been missed meanwhile); a short TTL bounds the rest.
import { getDbHandle } from "./client";
import { processSingleton } from "@/lib/singleton";

const CHANNEL = "cache_invalidation";

interface Registry {
  caches: Set<InvalidatedCache<unknown>>;
  listening: boolean;
  started: Promise<void> | null;
}

const registry = processSingleton<Registry>("invalidation", () => ({ caches: new Set(), listening: false, started: null }));

function startListening(): Promise<void> {
  registry.started ??= (async () => {
    const handle = await getDbHandle();
    await handle.listen(
      CHANNEL,
      (table) => {
        for (const cache of registry.caches) if (cache.table === table) cache.clear();
      },
      () => {
        for (const cache of registry.caches) cache.clear();
        registry.listening = true;
      },
    );
  })().catch(() => {
    // Without notifications nothing is cached; the next lookup tries again.
    registry.started = null;
  });
  return registry.started;
}

export class InvalidatedCache<V> {
  private readonly entries = new Map<string, { value: V; expires: number }>();
  /** Bumped by every invalidation: a load that began before one is not stored. */
  private generation = 0;

  constructor(
    readonly table: string,
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
  ) {
    registry.caches.add(this as InvalidatedCache<unknown>);
  }

  /** The cached value, else `load()`'s (stored unless null, or invalidated while it loaded). */
  async get(key: string, load: () => Promise<V | null>): Promise<V | null> {
    const hit = this.entries.get(key);
    if (hit && hit.expires > Date.now()) return hit.value;
    if (!registry.listening) void startListening();
    const generation = this.generation;
    const value = await load();
    if (value !== null && registry.listening && generation === this.generation) {
      if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
      this.entries.set(key, { value, expires: Date.now() + this.ttlMs });
    }
    return value;
  }

  clear() {
    this.generation++;
    this.entries.clear();
  }
}
