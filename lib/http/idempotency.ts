import crypto from "node:crypto";
import { and, eq, isNull, lt, or, sql } from "drizzle-orm";
import type { Db } from "@/lib/db/client";
import { idempotencyKeys } from "@/lib/db/schema";
import type { ProjectContext } from "@/lib/projects/service";
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
 * Runs `execute` at most once per key: the claim is a row inserted before any work, so a
 * concurrent duplicate finds it and is refused; a finished one is replayed for 24 hours.
 * Client errors are kept like successes; a server error releases the key for a retry.
 */
export async function runIdempotent(
  db: Db,
  project: ProjectContext,
  key: string,
  hash: string,
  execute: () => Promise<{ status: number; body: unknown }>,
): Promise<StoredResponse> {
  if (key.length > 255) throw new ApiError(400, "invalid_request_error", "Idempotency-Key must be at most 255 characters.");
  const scope = and(
    eq(idempotencyKeys.projectId, project.projectId),
    eq(idempotencyKeys.livemode, project.livemode),
    eq(idempotencyKeys.key, key),
  );
  for (let attempt = 0; attempt < 3; attempt++) {
    const claimed = await db
      .insert(idempotencyKeys)
      .values({ ...project, key, requestHash: hash })
      .onConflictDoNothing()
      .returning({ key: idempotencyKeys.key });
    if (claimed.length > 0) {
      if (Math.random() < 0.01) await purgeExpired(db);
      return finish(db, scope, execute);
    }
    const [existing] = await db
      .select({
        requestHash: idempotencyKeys.requestHash,
        responseStatus: idempotencyKeys.responseStatus,
        responseBody: idempotencyKeys.responseBody,
        stale: sql<boolean>`${stale}`,
      })
      .from(idempotencyKeys)
      .where(scope);
    if (!existing) continue;
    if (existing.stale) {
      await db.delete(idempotencyKeys).where(and(scope, stale));
      continue;
    }
    if (existing.requestHash !== hash) {
      throw idempotencyError(
        `Keys for idempotent requests can only be used with the same parameters they were first used with. Use a new Idempotency-Key for '${key}'.`,
      );
    }
    if (existing.responseStatus === null) {
      throw idempotencyError(`A request with Idempotency-Key '${key}' is still being processed; retry later.`);
    }
    return { status: existing.responseStatus, body: existing.responseBody, replayed: true };
  }
  throw idempotencyError(`Idempotency-Key '${key}' is contended; retry later.`);
}

async function finish(
  db: Db,
  scope: ReturnType<typeof and>,
  execute: () => Promise<{ status: number; body: unknown }>,
): Promise<StoredResponse> {
  let outcome: { status: number; body: unknown };
  try {
    outcome = await execute();
  } catch (err) {
    if (err instanceof ApiError && err.status < 500) outcome = { status: err.status, body: err.toJSON() };
    else {
      await db.delete(idempotencyKeys).where(scope);
      throw err;
    }
  }
  await db.update(idempotencyKeys).set({ responseStatus: outcome.status, responseBody: outcome.body }).where(scope);
  return { ...outcome, replayed: false };
}

async function purgeExpired(db: Db) {
  await db.delete(idempotencyKeys).where(expired);
}
