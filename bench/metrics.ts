// What the servers count of themselves (GET /metrics, which answers loopback callers without a token) and what
// PostgreSQL counts, read before and after a run: statements sent, and the intents' time per stage.
import postgres from "postgres";
import { request } from "./http";

/** One scrape of every instance: each series (name and labels, as exposed) with its values summed over instances. */
export type Scrape = Map<string, number>;

const SERIES = /^([a-zA-Z_:][\w:]*)(\{.*\})?\s+(\S+)/;

export async function scrape(urls: string[]): Promise<Scrape> {
  const sums: Scrape = new Map();
  for (const url of urls) {
    const { status, text } = await request(`${url}/metrics`, {});
    if (status !== 200) throw new Error(`GET /metrics: ${status} ${text.slice(0, 200)}`);
    for (const line of text.split("\n")) {
      const match = SERIES.exec(line);
      if (!match) continue; // comments (# HELP, # TYPE) and blank lines
      const key = match[1]! + (match[2] ?? "");
      sums.set(key, (sums.get(key) ?? 0) + Number(match[3]));
    }
  }
  return sums;
}

const labelsOf = (key: string): Record<string, string> =>
  Object.fromEntries([...key.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1]!, m[2]!.replace(/\\(.)/g, "$1")]));

/** SQL statements the servers sent between two scrapes (db_statements_total, lib/db/client.ts). */
export const statementsBetween = (before: Scrape, after: Scrape) => (after.get("db_statements_total") ?? 0) - (before.get("db_statements_total") ?? 0);

/** The stages of transaction_intent_stage_seconds in the pipeline's order; any other stage a server reports follows. */
export const STAGES = ["accept", "build", "sign", "queue", "bundle", "land", "confirm"];

/** Per stage, the histogram's observations between two scrapes: cumulative counts by upper bound (seconds, ending with +Inf). */
export function stageHistograms(before: Scrape, after: Scrape): Map<string, { le: number; count: number }[]> {
  const stages = new Map<string, { le: number; count: number }[]>();
  for (const [key, value] of after) {
    if (!key.startsWith("transaction_intent_stage_seconds_bucket{")) continue;
    const { stage, le } = labelsOf(key);
    if (stage === undefined || le === undefined) continue;
    const buckets = stages.get(stage) ?? [];
    buckets.push({ le: le === "+Inf" ? Infinity : Number(le), count: value - (before.get(key) ?? 0) });
    stages.set(stage, buckets);
  }
  for (const buckets of stages.values()) buckets.sort((a, b) => a.le - b.le);
  const known = (stage: string) => (STAGES.includes(stage) ? STAGES.indexOf(stage) : STAGES.length);
  return new Map([...stages].sort(([a], [b]) => known(a) - known(b) || a.localeCompare(b)));
}

/**
 * The q-quantile of a histogram's observations as Prometheus' histogram_quantile computes it: linear inside the
 * bucket the rank falls in (from 0 for the first), the highest finite bound when it falls in +Inf; NaN when empty.
 */
export function histogramQuantile(q: number, buckets: { le: number; count: number }[]): number {
  const total = buckets.at(-1)?.count ?? 0;
  if (total <= 0) return NaN;
  const rank = q * total;
  let lower = 0;
  let below = 0;
  for (const { le, count } of buckets) {
    if (count >= rank) {
      if (le === Infinity) return lower;
      return lower + ((le - lower) * (rank - below)) / Math.max(count - below, Number.MIN_VALUE);
    }
    lower = le;
    below = count;
  }
  return lower;
}

/**
 * PostgreSQL's own count of the statements executed in the database at `url` (pg_stat_statements' calls, BEGIN and
 * COMMIT included as utility statements), or undefined when the module is not loaded (shared_preload_libraries):
 * then nothing is created or changed. The bench's fresh database gets the extension created when it is loaded.
 */
export async function pgStatementCalls(url: string): Promise<number | undefined> {
  const sql = postgres(url, { max: 1, onnotice: () => {}, prepare: false, fetch_types: false });
  try {
    const [{ libraries }] = (await sql`select current_setting('shared_preload_libraries') as libraries`) as unknown as [{ libraries: string }];
    if (!libraries.split(",").some((name) => name.trim() === "pg_stat_statements")) return undefined;
    await sql`create extension if not exists pg_stat_statements`;
    const [{ calls }] = (await sql`select coalesce(sum(calls), 0)::float8 as calls from pg_stat_statements where dbid = (select oid from pg_database where datname = current_database())`) as unknown as [{ calls: number }];
    return calls;
  } catch {
    return undefined; // no permission to read it, an older server: the cross-check is left out
  } finally {
    await sql.end({ timeout: 1 });
  }
}
