import { gte, sql } from "drizzle-orm";
import type { Db, Queryable } from "@/lib/db/client";
import { requestLogs } from "@/lib/db/schema";
import { inScope } from "@/lib/db/scope";
import type { ProjectContext } from "@/lib/tenant";
import { listPage } from "./list";
import { log } from "@/lib/log";
import { processSingleton } from "@/lib/singleton";

export interface RequestLogEntry {
  id: string;
  project: ProjectContext | null;
  method: string;
  path: string;
  status: number;
  durationMs: number;
}

const FLUSH_AFTER_MS = 100;
const FLUSH_AT = 500;

interface LogBuffer {
  db: Db | null;
  rows: (typeof requestLogs.$inferInsert)[];
  timer: NodeJS.Timeout | null;
  flushing: Promise<void>;
}

const buffer = processSingleton<LogBuffer>("requestLog", () => ({ db: null, rows: [], timer: null, flushing: Promise.resolve() }));

/**
 * Method, path, status and timing only: never headers, keys or bodies. Written in batches
 * (one insert per 100 ms or 500 requests) so logging costs no write per request; a crash
 * loses at most the last batch. Only requests of a project are kept (its dashboard shows them):
 * one without (a bad key, none at all) is in the process log and metrics, but would let anyone
 * grow the table without a key. Rows go after REQUEST_LOG_RETENTION_DAYS (lib/retention.ts).
 */
export function recordRequest(db: Db, entry: RequestLogEntry) {
  if (!entry.project) return;
  buffer.db = db;
  buffer.rows.push({
    id: entry.id,
    projectId: entry.project.projectId,
    livemode: entry.project.livemode,
    method: entry.method,
    path: entry.path.slice(0, 2048),
    status: entry.status,
    durationMs: Math.round(entry.durationMs),
    createdAt: new Date(),
  });
  if (buffer.rows.length >= FLUSH_AT) void flushRequestLog();
  else buffer.timer ??= setTimeout(() => void flushRequestLog(), FLUSH_AFTER_MS);
}

export function flushRequestLog(): Promise<void> {
  if (buffer.timer) clearTimeout(buffer.timer);
  buffer.timer = null;
  const rows = buffer.rows.splice(0);
  const db = buffer.db;
  buffer.flushing = buffer.flushing.then(async () => {
    if (!db || rows.length === 0) return;
    try {
      // One statement of one shape whatever the batch's size: the rows travel as one JSON parameter
      // (a VALUES list per size would be a statement, and a prepared plan, per size).
      const json = JSON.stringify(rows.map((r) => ({ ...r, createdAt: r.createdAt!.toISOString() })));
      await db.execute(sql`insert into ${requestLogs} (id, project_id, livemode, method, path, status, duration_ms, created_at)
        select id, "projectId", livemode, method, path, status, "durationMs", "createdAt" from jsonb_to_recordset(${json}::jsonb)
        as r(id text, "projectId" text, livemode boolean, method text, path text, status integer, "durationMs" integer, "createdAt" timestamptz)`);
    } catch (err) {
      log.error({ err, lost: rows.length }, "request log: a batch could not be written");
    }
  });
  return buffer.flushing;
}

/** The mode's logged requests, newest first; `failed` keeps only 4xx and 5xx answers. */
export async function listRequestLogs(db: Queryable, ctx: ProjectContext, params: { limit: number; skip: number; failed?: boolean }) {
  const where = inScope(requestLogs, ctx, params.failed ? gte(requestLogs.status, 400) : undefined);
  return listPage(db, requestLogs, where, params);
}
