import crypto from "node:crypto";
import { and, eq, isNull, lt, or, sql } from "drizzle-orm";
import type { Db } from "@/lib/db/client";
import { idempotencyKeys } from "@/lib/db/schema";
import { inScope } from "@/lib/db/scope";
import type { ProjectContext } from "@/lib/projects/service";
import { deferringSideEffects, runDeferred, type Deferred } from "./after-commit";
import { ApiError } from "./errors";

export interface StoredResponse {
  status: number;
  body: unknown;
  replayed: boolean;
}

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, canonical((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}

export function requestHash(method: string, path: string, input: unknown): string {
  return crypto.createHash("sha256").update(JSON.stringify([method, path, canonical(input)])).digest("hex");
}

// Past 24 hours a key is forgotten; an unfinished claim past 5 minutes was abandoned by a
// process that died. The database clock decides, so every instance agrees.
const expired = lt(idempotencyKeys.createdAt, sql`now() - interval '24 hours'`);
const stale = or(expired, and(isNull(idempotencyKeys.responseStatus), lt(idempotencyKeys.createdAt, sql`now() - interval '5 minutes'`)))!;

const idempotencyError = (message: string) => new ApiError(409, "idempotency_error", message);

/**
 * Runs `execute` at most once per key. The claim is inserted in the transaction that runs the
 * operation and takes its response, so the operation's writes and the key's stored response
 * commit together: once a resource exists the key replays it, and an operation that failed
 * (rolled back) leaves no claim, so a retry runs it again. A concurrent duplicate waits on the
 * uncommitted claim, then replays it. Side effects deferred with `afterCommit` (event sends) run
 * after the commit; their failure no longer changes the answer, their recovery redoes them.
 * Client errors are kept like successes (their partial writes rolled back).
 */
export async function runIdempotent(
  db: Db,
  project: ProjectContext,
  key: string,
  hash: string,
  execute: (db: Db) => Promise<{ status: number; body: unknown }>,
): Promise<StoredResponse> {
  if (key.length > 255) throw new ApiError(400, "invalid_request_error", "Idempotency-Key must be at most 255 characters.");
  const scope = inScope(
    idempotencyKeys,
    project,
    eq(idempotencyKeys.key, key),
  );
  for (let attempt = 0; attempt < 3; attempt++) {
    const [existing] = await db
      .select({
        requestHash: idempotencyKeys.requestHash,
        responseStatus: idempotencyKeys.responseStatus,
        responseBody: idempotencyKeys.responseBody,
        stale: sql<boolean>`${stale}`,
      })
      .from(idempotencyKeys)
      .where(scope);
    if (existing) {
      if (existing.stale) {
        await db.delete(idempotencyKeys).where(and(scope, stale));
        continue;
      }
      if (existing.requestHash !== hash) {
        throw idempotencyError(
          `Keys for idempotent requests can only be used with the same parameters they were first used with. Use a new Idempotency-Key for '${key}'.`,
        );
      }
      // Only claims of an older version (committed before their work) are seen unfinished.
      if (existing.responseStatus === null) {
        throw idempotencyError(`A request with Idempotency-Key '${key}' is still being processed; retry later.`);
      }
      return { status: existing.responseStatus, body: existing.responseBody, replayed: true };
    }
    const outcome = await claimAndRun(db, project, key, hash, scope, execute);
    if (outcome) {
      if (Math.random() < 0.01) await purgeExpired(db);
      return { ...outcome, replayed: false };
    }
    // Another request committed this key meanwhile: replay it.
  }
  throw idempotencyError(`Idempotency-Key '${key}' is contended; retry later.`);
}

async function claimAndRun(
  db: Db,
  project: ProjectContext,
  key: string,
  hash: string,
  scope: ReturnType<typeof and>,
  execute: (db: Db) => Promise<{ status: number; body: unknown }>,
): Promise<{ status: number; body: unknown } | null> {
  let deferred: Deferred = { hooks: [] };
  let outcome: { status: number; body: unknown } | null;
  try {
    outcome = await db.transaction(async (tx) => {
      const claimed = await tx.insert(idempotencyKeys).values({ ...project, key, requestHash: hash }).onConflictDoNothing().returning({ key: idempotencyKeys.key });
      if (claimed.length === 0) return null;
      const run = await deferringSideEffects(() => execute(tx as unknown as Db));
      deferred = run.deferred;
      await tx.update(idempotencyKeys).set({ responseStatus: run.result.status, responseBody: run.result.body }).where(scope);
      return run.result;
    });
  } catch (err) {
    if (!(err instanceof ApiError && err.status < 500)) throw err;
    // The operation's writes rolled back; its refusal is the key's answer.
    const refused = { status: err.status, body: err.toJSON() };
    const kept = await db
      .insert(idempotencyKeys)
      .values({ ...project, key, requestHash: hash, responseStatus: refused.status, responseBody: refused.body })
      .onConflictDoNothing()
      .returning({ key: idempotencyKeys.key });
    return kept.length ? refused : null;
  }
  if (!outcome) return null;
  const refreshed = await runDeferred(deferred, { idempotencyKey: key, projectId: project.projectId });
  if (!refreshed) return outcome;
  // Replays answer as this request did; if this write fails they answer with the committed body.
  await db.update(idempotencyKeys).set({ responseBody: refreshed.body }).where(scope).catch(() => {});
  return { status: outcome.status, body: refreshed.body };
}

async function purgeExpired(db: Db) {
  await db.delete(idempotencyKeys).where(expired);
}
