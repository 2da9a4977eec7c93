import { envNumber, type EnvNumberRule } from "@/lib/config";
import { tooManyRequests } from "@/lib/errors";
import { processSingleton } from "@/lib/singleton";

/**
 * A per-project share of this process's chain work (simulations, RPC reads): at most
 * `CHAIN_CONCURRENCY_PER_PROJECT` such requests of one project run at once (default 32), and at
 * most `CHAIN_QUEUE_PER_PROJECT` more wait their turn (default 1000); past that a 429. So one
 * project's burst queues behind itself, never in front of another project's requests.
 * The rate limits (lib/http/rate-limit.ts) bound requests per second across instances; this
 * bounds how much of one instance's CPU and RPC connections a project holds at a moment.
 */
interface Lane {
  running: number;
  waiting: (() => void)[];
}

const lanes = processSingleton("chainLanes", () => new Map<string, Lane>());

// A count: an integer of at least 0 (an empty setting is unset, as everywhere else, no longer 0).
const COUNT: EnvNumberRule = { min: 0, integer: true };

export async function withProjectShare<T>(scope: string, work: () => Promise<T>): Promise<T> {
  const concurrency = Math.max(1, envNumber("CHAIN_CONCURRENCY_PER_PROJECT", 32, COUNT));
  const queue = envNumber("CHAIN_QUEUE_PER_PROJECT", 1000, COUNT);
  const lane: Lane = lanes.get(scope) ?? { running: 0, waiting: [] };
  lanes.set(scope, lane);
  if (lane.running >= concurrency) {
    if (lane.waiting.length >= queue) {
      throw tooManyRequests(`Too many concurrent requests doing chain work for this project (at most ${concurrency} at once, ${queue} waiting)`, 1);
    }
    await new Promise<void>((resolve) => lane.waiting.push(resolve));
  } else lane.running++;
  try {
    return await work();
  } finally {
    const next = lane.waiting.shift();
    if (next) next(); // the slot passes straight to the next waiter
    else if (--lane.running === 0) lanes.delete(scope);
  }
}

/** Requests of the project holding or waiting for a share now (for tests and metrics). */
export function projectShareUse(scope: string) {
  const lane = lanes.get(scope);
  return { running: lane?.running ?? 0, waiting: lane?.waiting.length ?? 0 };
}
