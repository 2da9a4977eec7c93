import crypto from "node:crypto";
import { and, eq, isNull, lt, or, sql } from "drizzle-orm";
import type { Db } from "@/lib/db/client";
import { idempotencyKeys } from "@/lib/db/schema";
import { inScope } from "@/lib/db/scope";
import { envNumber } from "@/lib/config";
import { decrypt, encrypt, sha256 } from "@/lib/keys/encryption";
import type { ProjectContext } from "@/lib/tenant";
import { deferringSideEffects, runDeferred } from "./after-commit";
import { ApiError, badRequest, idempotencyConflict } from "@/lib/errors";

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

/**
 * Whose key it is: an API key (by id), a player, a signing link, a developer, or the public
 * caller of a path-keyed route. Keys are scoped by it as well as by project and mode, so a
 * publishable-key caller cannot claim the backend's keys, nor player B replay player A's answer.
 * (A rolled secret key is a new credential: retries with it run as new requests.)
 */
export function credentialOf(principal: unknown): string {
  const p = (principal ?? {}) as {
    kind?: string;
    key?: { keyId: string };
    claims?: { playerId: string };
    intentId?: string;
    developerId?: string;
    publishableKey?: string;
  };
  switch (p.kind) {
    case "key":
      return `key:${p.key!.keyId}`;
    case "player":
      return `player:${p.claims!.playerId}`;
    case "signingLink":
      return `signing:${p.intentId}`;
    case "developer":
      return `developer:${p.developerId}`;
    default:
      // A publishable key named in the path (the ERC-7677 service): kept as its hash, as keys are.
      return p.publishableKey ? `${p.kind}:${sha256(p.publishableKey)}` : (p.kind ?? "anonymous");
  }
}

/** The project and mode a key is kept in, who sent it, and the request that claims it. */
export interface IdempotencyScope {
  project: ProjectContext;
  credential: string;
  requestId?: string;
  /** What a request that died before its answer was stored did, as its answer (see Operation.recover). */
  recover?: (requestId: string) => Promise<unknown>;
}

// Past 24 hours a key is forgotten. A claim is leased: the request holding it renews it (its
// created_at) a few times per lease while it runs, so one not renewed for a whole lease was
// abandoned by a process that died mid-way, and a retry takes it over. The database clock
// decides, so every instance agrees.
const expired = lt(idempotencyKeys.createdAt, sql`now() - interval '24 hours'`);
const leaseSeconds = () => envNumber("IDEMPOTENCY_LEASE_SECONDS", 30, { above: 0 });
const stale = () => or(expired, and(isNull(idempotencyKeys.responseStatus), lt(idempotencyKeys.createdAt, sql`now() - make_interval(secs => ${leaseSeconds()})`)))!;


// Answers may carry tokens (sign-in, password-reset tokens): sealed like other secrets, bound to their row.
export const idempotencyAad = (row: { projectId: string; livemode: boolean | string; credential: string; key: string }) =>
  `idempotency:${row.projectId}:${String(row.livemode)}:${row.credential}:${row.key}`;

/**
 * Runs `execute` at most once per key and credential, with no transaction open while it runs
 * (its chain, paymaster and webhook calls would hold one, and on PGlite every other query with
 * it). Three short steps: a claim row is inserted (a concurrent duplicate finds it and gets a
 * 409 "in progress"); the operation runs, its writes committing in their own short transactions
 * as without a key; its answer is stored, sealed, and replayed for 24 hours. A client error is
 * kept like a success; a server error releases the claim so a retry runs. A process that dies
 * mid-way leaves a claim that lapses within a lease (IDEMPOTENCY_LEASE_SECONDS, 30 s): a retry
 * then answers with what that request did if its writes committed (the operation's `recover`:
 * an intent it recorded), or runs it again. Side effects deferred with `afterCommit`
 * (event sends) run once the answer is stored; their failure does not change it, their
 * recovery (the minute sweep of unsettled intents) redoes them.
 */
export async function runIdempotent(
  db: Db,
  { project, credential, requestId, recover }: IdempotencyScope,
  key: string,
  hash: string,
  execute: () => Promise<{ status: number; body: unknown }>,
): Promise<StoredResponse> {
  if (key.length > 255) throw badRequest("Idempotency-Key must be at most 255 characters.");
  const scope = inScope(idempotencyKeys, project, eq(idempotencyKeys.credential, credential), eq(idempotencyKeys.key, key));
  const aad = idempotencyAad({ ...project, credential, key });
  for (let attempt = 0; attempt < 3; attempt++) {
    const [existing] = await db
      .select({
        requestHash: idempotencyKeys.requestHash,
        responseStatus: idempotencyKeys.responseStatus,
        sealedResponse: idempotencyKeys.sealedResponse,
        requestId: idempotencyKeys.requestId,
        stale: sql<boolean>`${stale()}`,
      })
      .from(idempotencyKeys)
      .where(scope);
    if (existing) {
      if (existing.stale) {
        // Abandoned by a request that died: if its writes committed, what it did is the answer, else it runs again.
        const done = existing.responseStatus === null && existing.requestId && recover ? await recover(existing.requestId) : null;
        if (done !== null && done !== undefined) {
          const taken = await db
            .update(idempotencyKeys)
            .set({ responseStatus: 200, sealedResponse: seal(done, aad), createdAt: sql`now()` })
            .where(and(scope, isNull(idempotencyKeys.responseStatus), eq(idempotencyKeys.requestId, existing.requestId!)))
            .returning({ key: idempotencyKeys.key });
          if (taken.length) return { status: 200, body: done, replayed: true };
          continue;
        }
        await db.delete(idempotencyKeys).where(and(scope, stale()));
        continue;
      }
      if (existing.requestHash !== hash) {
        throw idempotencyConflict(
          `Keys for idempotent requests can only be used with the same parameters they were first used with. Use a new Idempotency-Key for '${key}'.`,
        );
      }
      if (existing.responseStatus === null) {
        throw idempotencyConflict(`A request with Idempotency-Key '${key}' is still being processed (in progress); retry later.`, { "retry-after": "1" });
      }
      return { status: existing.responseStatus, body: open(existing.sealedResponse, aad), replayed: true };
    }
    const claimed = await db
      .insert(idempotencyKeys)
      .values({ ...project, credential, key, requestHash: hash, requestId })
      .onConflictDoNothing()
      .returning({ key: idempotencyKeys.key });
    // Another request claimed this key meanwhile: look again (in progress, or its answer).
    if (claimed.length === 0) continue;
    if (Math.random() < 0.01) await purgeExpired(db);
    return { ...(await runClaimed(db, scope, aad, key, project, execute)), replayed: false };
  }
  throw idempotencyConflict(`Idempotency-Key '${key}' is contended; retry later.`, { "retry-after": "1" });
}

async function runClaimed(
  db: Db,
  scope: ReturnType<typeof and>,
  aad: string,
  key: string,
  project: ProjectContext,
  execute: () => Promise<{ status: number; body: unknown }>,
): Promise<{ status: number; body: unknown }> {
  const store = (answer: { status: number; body: unknown }) =>
    db.update(idempotencyKeys).set({ responseStatus: answer.status, sealedResponse: seal(answer.body, aad) }).where(scope);
  let run: Awaited<ReturnType<typeof deferringSideEffects<{ status: number; body: unknown }>>>;
  // Renewed while the operation runs (a slow paymaster or an optimistic wait may outlast a lease).
  const renew = () => db.update(idempotencyKeys).set({ createdAt: sql`now()` }).where(and(scope, isNull(idempotencyKeys.responseStatus))).catch(() => {});
  const heartbeat = setInterval(renew, (leaseSeconds() * 1000) / 3);
  heartbeat.unref();
  try {
    run = await deferringSideEffects(execute).finally(() => clearInterval(heartbeat));
  } catch (err) {
    if (!(err instanceof ApiError && err.status < 500)) {
      // Released, so the client's retry runs (if this fails too, the claim lapses with its lease).
      await db.delete(idempotencyKeys).where(and(scope, isNull(idempotencyKeys.responseStatus))).catch(() => {});
      throw err;
    }
    // The operation's refusal is the key's answer.
    const refused = { status: err.status, body: err.toJSON() };
    await store(refused);
    return refused;
  }
  await store(run.result);
  const refreshed = await runDeferred(run.deferred, { idempotencyKey: key, projectId: project.projectId });
  if (!refreshed) return run.result;
  // Replays answer as this request did; if this write fails they answer with the stored body.
  await db.update(idempotencyKeys).set({ sealedResponse: seal(refreshed.body, aad) }).where(scope).catch(() => {});
  return { status: run.result.status, body: refreshed.body };
}

const seal = (body: unknown, aad: string) => encrypt(JSON.stringify(body ?? null), aad);
const open = (sealed: string | null, aad: string): unknown => (sealed === null ? null : JSON.parse(decrypt(sealed, aad)));

async function purgeExpired(db: Db) {
  await db.delete(idempotencyKeys).where(expired);
}
