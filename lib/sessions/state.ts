import { asc, inArray } from "drizzle-orm";
import type { Address } from "viem";
import { findChain } from "@/lib/chain/registry";
import type { Queryable } from "@/lib/db/client";
import { ApiError } from "@/lib/errors";
import { accounts, sessions, transactionIntents } from "@/lib/db/schema";
import type { IntentRow } from "@/lib/intents/service";
import { chainNow, readKey, type OnChainKey } from "@/lib/session-keys/chain";

type SessionRow = typeof sessions.$inferSelect;

/** `unknown`: registered, but its chain did not answer (the dashboard's tolerant reading only). */
export type SessionStatus = "awaiting_signature" | "registering" | "failed" | "not_yet_valid" | "active" | "revoking" | "expired" | "used_up" | "revoked" | "unknown";

export interface SessionState {
  status: SessionStatus;
  /** Registered, inside its window by the chain's clock, uses left, not revoked: the key may sign now. */
  isActive: boolean;
  /** Still holds its key: registering (signed or not) or registered and usable now or later. */
  live: boolean;
  /** Uses made, from the chain (null when the chain was not asked). */
  used: number | null;
  registration: IntentRow | null;
  revocation: IntentRow | null;
  /** Its intent awaiting the owner's signature: the registration's or the revocation's. */
  awaiting: IntentRow | null;
}

/** A chain read the node did not answer (tolerant reading). */
const UNREACHABLE = Symbol("unreachable");

const inFlight = (intent: IntentRow | null) => intent?.status === "pending" || intent?.status === "broadcast";

/**
 * Where each session stands. The chain is the truth once the registration landed: the account's `getSessionKey`
 * (revoked, or retired by an owner change: not active) and its latest block's time against the window. Only
 * sessions that could be active are read from the chain, all at once. A node that does not answer is a 502, or,
 * with `tolerant` (a dashboard page that must still show), the status `unknown` for the sessions it decides.
 */
export async function sessionStates(db: Queryable, rows: SessionRow[], options: { tolerant?: boolean } = {}): Promise<Map<string, SessionState>> {
  const out = new Map<string, SessionState>();
  if (rows.length === 0) return out;
  const intents = await intentsOf(db, rows);
  const registrationOf = (row: SessionRow) => intents.registrations.get(row.id) ?? null;
  const revocationOf = (row: SessionRow) => (row.revocationIntentId ? (intents.byId.get(row.revocationIntentId) ?? null) : null);

  const ask = rows.filter((row) => !row.revokedAt && registrationOf(row)?.status === "successful" && revocationOf(row)?.status !== "successful");
  const addresses = new Map(
    ask.length ? (await db.select({ id: accounts.id, address: accounts.address }).from(accounts).where(inArray(accounts.id, [...new Set(ask.map((r) => r.accountId))]))).map((a) => [a.id, a.address as Address]) : [],
  );
  const chainIds = [...new Set(rows.map((r) => r.chainId))].filter((id) => findChain(id));
  const read = async <T>(fn: () => Promise<T>): Promise<T | typeof UNREACHABLE> => {
    try {
      return await fn();
    } catch (err) {
      if (options.tolerant && err instanceof ApiError && err.status === 502) return UNREACHABLE;
      throw err;
    }
  };
  const [nows, keys] = await Promise.all([
    Promise.all(chainIds.map(async (id) => [id, await read(() => chainNow(findChain(id)!))] as const)).then((pairs) => new Map(pairs)),
    Promise.all(
      ask.map(async (row) => {
        const chain = findChain(row.chainId);
        const address = addresses.get(row.accountId);
        return [row.id, chain && address ? await read(() => readKey(chain, address, row.address as Address)) : null] as const;
      }),
    ).then((pairs) => new Map(pairs)),
  ]);

  for (const row of rows) {
    const registration = registrationOf(row);
    const revocation = revocationOf(row);
    const awaiting = [registration, revocation].find((i) => i?.status === "awaiting_signature") ?? null;
    out.set(row.id, stateOf(row, { registration, revocation, awaiting, used: null }, keys.get(row.id) ?? null, nows.get(row.chainId)));
  }
  return out;
}


function stateOf(
  row: SessionRow,
  base: Omit<SessionState, "status" | "isActive" | "live">,
  read: OnChainKey | null | typeof UNREACHABLE,
  clock: number | undefined | typeof UNREACHABLE,
): SessionState {
  const { registration, revocation } = base;
  const key = read === UNREACHABLE ? null : read;
  const now = clock === UNREACHABLE ? undefined : clock;
  const ended = (status: SessionStatus): SessionState => ({ ...base, used: key?.used ?? null, status, isActive: false, live: false });
  if (registration?.status === "failed" || registration?.status === "cancelled") return ended(row.revokedAt ? "revoked" : "failed");
  if (revocation?.status === "successful") return ended("revoked");
  // Marked revoked without a landed revocation: cancelled before signing, or found over when revoked, or replaced.
  if (row.revokedAt) return ended(now !== undefined && row.validUntil <= now ? "expired" : "revoked");
  if (!registration || inFlight(registration)) return { ...base, status: "registering", isActive: false, live: true };
  if (registration.status === "awaiting_signature") return { ...base, status: "awaiting_signature", isActive: false, live: true };
  // Not known either way: counted live, so nothing takes its key meanwhile.
  if (read === UNREACHABLE || clock === UNREACHABLE) return { ...base, status: "unknown", isActive: false, live: true };
  if (!key || now === undefined || !key.active) return ended("revoked");
  if (now >= key.validUntil) return ended("expired");
  if (key.used >= key.limit) return ended("used_up");
  const revoking = revocation !== null && (inFlight(revocation) || revocation.status === "awaiting_signature");
  const usable = now >= key.validAfter;
  return { ...base, used: key.used, status: revoking ? "revoking" : usable ? "active" : "not_yet_valid", isActive: usable, live: true };
}

/**
 * The sessions' registration and revocation intents. The registration is the column's, or else the session's first
 * intent (recorded in the same transaction as the session, before the column is set).
 */
async function intentsOf(db: Queryable, rows: SessionRow[]) {
  const ids = rows.flatMap((r) => [r.registrationIntentId, r.revocationIntentId]).filter((id): id is string => id !== null);
  const unlinked = rows.filter((r) => !r.registrationIntentId).map((r) => r.id);
  const [linked, firsts] = await Promise.all([
    ids.length ? db.select().from(transactionIntents).where(inArray(transactionIntents.id, ids)) : [],
    unlinked.length
      ? db.selectDistinctOn([transactionIntents.sessionId]).from(transactionIntents).where(inArray(transactionIntents.sessionId, unlinked)).orderBy(transactionIntents.sessionId, asc(transactionIntents.createdAt))
      : [],
  ]);
  const byId = new Map(linked.map((i) => [i.id, i]));
  const registrations = new Map<string, IntentRow>();
  for (const row of rows) {
    const found = row.registrationIntentId ? byId.get(row.registrationIntentId) : firsts.find((i) => i.sessionId === row.id);
    if (found) registrations.set(row.id, found);
  }
  return { byId, registrations };
}
