import { ApiError } from "./errors";

interface Bucket {
  tokens: number;
  updatedAt: number;
}

const state = globalThis as unknown as { __rateBuckets?: Map<string, Bucket> };
const buckets = (state.__rateBuckets ??= new Map());

/**
 * A token bucket per API key in this process: `RATE_LIMIT_PER_SECOND` requests a second
 * sustained (default 100, 0 turns it off), bursts up to twice that.
 */
export function takeToken(bucketKey: string, now = Date.now()) {
  const rate = Number(process.env.RATE_LIMIT_PER_SECOND ?? 100);
  if (!(rate > 0)) return;
  const capacity = rate * 2;
  const bucket = buckets.get(bucketKey) ?? { tokens: capacity, updatedAt: now };
  bucket.tokens = Math.min(capacity, bucket.tokens + ((now - bucket.updatedAt) / 1000) * rate);
  bucket.updatedAt = now;
  buckets.set(bucketKey, bucket);
  if (bucket.tokens < 1) {
    const retryAfter = Math.max(1, Math.ceil((1 - bucket.tokens) / rate));
    throw new ApiError(429, "rate_limit_error", `Too many requests with this key; retry after ${retryAfter}s.`, undefined, {
      "retry-after": String(retryAfter),
    });
  }
  bucket.tokens -= 1;
  if (buckets.size > 10_000) {
    for (const [k, b] of buckets) if (now - b.updatedAt > 60_000) buckets.delete(k);
  }
}
