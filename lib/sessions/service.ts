import { and, desc, eq, inArray, isNull, notInArray, sql } from "drizzle-orm";
import { encodeFunctionData, getAddress, isAddressEqual, recoverMessageAddress, zeroAddress, type Address, type Hex } from "viem";
import { smartAccountAbi } from "@/contracts/artifacts";
import { accountTypeInfo } from "@/lib/account-records/types";
import type { AccountRow } from "@/lib/accounts/service";
import { chainFor } from "@/lib/chain/registry";
import { activeContractOn } from "@/lib/contracts/service";
import type { Queryable } from "@/lib/db/client";
import { accounts, sessions } from "@/lib/db/schema";
import { inScope } from "@/lib/db/scope";
import { badRequest, conflict, forbidden, missing, referenced } from "@/lib/errors";
import { listPage } from "@/lib/http/list";
import { newId } from "@/lib/ids";
import { selfIntent } from "@/lib/account-actions/service";
import { cancelUnsigned } from "@/lib/intents/land-intent";
import { resolveAccount } from "@/lib/intents/sender";
import type { IntentRow } from "@/lib/intents/service";
import { submitSignature } from "@/lib/intents/signature";
import { getPlayer } from "@/lib/players/service";
import type { ProjectContext } from "@/lib/tenant";
import { chainNow, chainTime, lockSessionKey } from "@/lib/session-keys/chain";
import { getSession, type SessionRow } from "@/lib/session-keys/service";
import { MAX_WHITELIST, UINT48_MAX, type CreateSessionInput, type ListSessionsInput, type RevokeSessionInput } from "./schema";
import { sessionStates, type SessionState } from "./state";
import { publishIntentEventAfterCommit } from "@/lib/deliveries/publish";

/** A player's sessions (optionally one account's), newest first unless asked otherwise. */
export async function listSessions(db: Queryable, ctx: ProjectContext, input: ListSessionsInput) {
  await getPlayer(db, ctx, input.player);
  return listPage(db, sessions, inScope(sessions, ctx, eq(sessions.playerId, input.player), input.account ? eq(sessions.accountId, input.account) : undefined), input);
}

/**
 * `X-Behalf-Of-Project` (header, as the official SDK sends it, or query parameter, as the spec lists it): a key
 * acts for its own project only. The SDK sends the text "undefined" when its caller gave none: that is no value.
 */
export function checkBehalfOf(ctx: ProjectContext, header: string | null | undefined, query: string | undefined) {
  for (const given of [header, query]) {
    if (given === null || given === undefined || given.trim() === "" || given === "undefined") continue;
    if (given.trim() !== ctx.projectId) {
      throw forbidden(`X-Behalf-Of-Project ${given.slice(0, 200)} is not the project of this API key (${ctx.projectId}): a key acts for its own project only.`);
    }
  }
}


/** The key may be registered on this account at all: a type with session keys, neither the owner nor the account. */
function checkKey(account: AccountRow, key: Address) {
  if (!accountTypeInfo(account.accountType)?.sessions) {
    throw badRequest(`Account ${account.id} is of type ${account.accountType}, which has no session keys.`, { player: { value: account.playerId, message: `its account is ${account.accountType}` } });
  }
  const refuse = (why: string) => badRequest(`Session key ${key} ${why}.`, { address: { value: key, message: why } });
  if (isAddressEqual(key, zeroAddress)) throw refuse("is the zero address");
  if (isAddressEqual(key, account.ownerAddress as Address)) throw refuse(`is the owner of account ${account.id}: the owner signs anything already; a session key is another key`);
  if (isAddressEqual(key, account.address as Address)) throw refuse(`is account ${account.id} itself`);
}

/** Whitelist entries as addresses (con_ ids resolved on the account's chain); never the zero address nor the account. */
async function resolveWhitelist(db: Queryable, ctx: ProjectContext, account: AccountRow, items: string[]): Promise<Address[]> {
  return Promise.all(
    items.map(async (item, i) => {
      const param = `whitelist[${i}]`;
      const address = item.startsWith("con_") ? getAddress((await activeContractOn(db, ctx, item, account.chainId, param)).address) : getAddress(item);
      if (isAddressEqual(address, zeroAddress)) throw badRequest(`${param} is the zero address.`, { [param]: { value: item, message: "the zero address" } });
      if (isAddressEqual(address, account.address as Address)) {
        throw badRequest(`${param} is account ${account.id} itself: a session key may never call its own account (its keys, owner or guardians).`, {
          [param]: { value: item, message: "the account itself" },
        });
      }
      return address;
    }),
  );
}

/** The key's sessions on the account not marked revoked, newest first, with their states. */
async function sessionsOfKey(db: Queryable, ctx: ProjectContext, accountId: string, key: Address) {
  const rows = await db
    .select()
    .from(sessions)
    .where(inScope(sessions, ctx, eq(sessions.accountId, accountId), eq(sessions.address, key), isNull(sessions.revokedAt)))
    .orderBy(desc(sessions.createdAt), desc(sessions.id));
  const states = await sessionStates(db, rows);
  return rows.map((row) => ({ row, state: states.get(row.id)! }));
}

/**
 * Registers a session key on the player's account on the chain (created when missing) with a self-call
 * `registerSessionKey`, recorded as the session's first intent: signed by the service for a custodial account,
 * awaiting the owner's signature otherwise. Sponsored under `policy` (an account_functions rule), else paid by the account.
 */
export async function createSession(db: Queryable, ctx: ProjectContext, input: CreateSessionInput): Promise<{ session: SessionRow; intent: IntentRow }> {
  const chain = chainFor(ctx, input.chainId);
  if (input.validUntil <= input.validAfter) {
    throw badRequest(`validUntil (${input.validUntil}) must be after validAfter (${input.validAfter}).`, { validUntil: { value: input.validUntil, message: "not after validAfter" } });
  }
  if ((input.whitelist?.length ?? 0) > MAX_WHITELIST) {
    throw badRequest(`whitelist holds ${input.whitelist!.length} addresses; an account allows at most ${MAX_WHITELIST} per session key (MAX_SESSION_KEY_TARGETS).`, {
      whitelist: { message: `at most ${MAX_WHITELIST} addresses` },
    });
  }
  const now = await chainNow(chain);
  if (input.validUntil <= now) {
    throw badRequest(`validUntil ${input.validUntil} (${chainTime(input.validUntil)}) is not in the future: chain ${chain.chainId}'s time is ${now} (${chainTime(now)}).`, {
      validUntil: { value: input.validUntil, message: `in the past (chain time ${now})` },
    });
  }
  const account = await resolveAccount(db, ctx, { chainId: input.chainId, player: input.player, externalOwnerAddress: input.externalOwnerAddress });
  const key = input.address;
  checkKey(account, key);
  const whitelist = await resolveWhitelist(db, ctx, account, input.whitelist ?? []);

  const known = await sessionsOfKey(db, ctx, account.id, key);
  const live = known.find((s) => s.state.live);
  if (live) throw liveSessionError(account, key, live.row.id, live.state);
  // Ended sessions whose registration landed: this registration replaces the key's state on chain, so they are marked
  // revoked (their chain reads would show the new registration otherwise).
  const replaced = known.filter((s) => s.state.registration?.status === "successful").map((s) => s.row.id);
  const ended = known.map((s) => s.row.id);

  const id = newId("session");
  const limit = input.limit ?? null;
  // Safe default: a key registered without a fee cap signs only sponsored operations (see createSessionInput).
  const maxFeePerOp = input.maxFeePerOp ?? 0n;
  const args = [key, input.validAfter, input.validUntil, limit ?? UINT48_MAX, whitelist, maxFeePerOp] as const;
  const data = encodeFunctionData({ abi: smartAccountAbi, functionName: "registerSessionKey", args });
  const intent = await selfIntent(db, ctx, account, input.policy, "registerSessionKey", data, {
    cause: "session",
    args: [key, String(input.validAfter), String(input.validUntil), String(limit ?? UINT48_MAX), whitelist, String(maxFeePerOp)],
    sessionId: id,
    optimistic: input.optimistic ?? false,
    // In the transaction that records the intent: the session row goes with it, and a concurrent registration of the same key loses.
    check: async (tx) => {
      await lockSessionKey(tx, account.id, key);
      const [racing] = await tx
        .select({ id: sessions.id })
        .from(sessions)
        .where(and(eq(sessions.accountId, account.id), eq(sessions.address, key), isNull(sessions.revokedAt), ended.length ? notInArray(sessions.id, ended) : undefined));
      if (racing) throw liveSessionError(account, key, racing.id, null);
      if (replaced.length) await tx.update(sessions).set({ revokedAt: sql`now()`, updatedAt: sql`now()` }).where(inArray(sessions.id, replaced));
      await tx.insert(sessions).values({
        id,
        ...ctx,
        playerId: account.playerId,
        accountId: account.id,
        chainId: account.chainId,
        address: key,
        validAfter: input.validAfter,
        validUntil: input.validUntil,
        limit,
        whitelist,
        maxFeePerOp: String(maxFeePerOp),
      });
    },
  });
  const [session] = await db.update(sessions).set({ registrationIntentId: intent.id }).where(eq(sessions.id, id)).returning();
  return { session: session!, intent };
}

function liveSessionError(account: AccountRow, key: Address, sessionId: string, state: SessionState | null) {
  return badRequest(
    `Session key ${key} already has a live session on account ${account.id}: ${sessionId}${state ? ` (${state.status.replaceAll("_", " ")})` : ""}. Revoke it first, or wait until it expires or is used up.`,
    { address: { value: key, message: `live session ${sessionId}` } },
  );
}

/**
 * Revokes the key's live session on the player's account on the chain: a `revokeSessionKey` self-call (signed like
 * the registration). A registration still awaiting its signature is cancelled instead; one on its way is a 409; a
 * session the chain no longer holds active (expired, used up, owner changed) is marked revoked with no operation.
 */
export async function revokeSession(db: Queryable, ctx: ProjectContext, input: RevokeSessionInput): Promise<{ session: SessionRow; intent: IntentRow | null }> {
  chainFor(ctx, input.chainId);
  const key = input.address;
  const player = await referenced(getPlayer(db, ctx, input.player), "player", input.player);
  const [account] = await db.select().from(accounts).where(and(eq(accounts.playerId, player.id), eq(accounts.chainId, input.chainId)));
  const none = () => missing(`No live session of key ${key} for player ${player.id} on chain ${input.chainId}${account ? ` (account ${account.id})` : ": the player has no account there"}.`);
  if (!account) throw none();
  const known = await sessionsOfKey(db, ctx, account.id, key);
  const live = known.find((s) => s.state.live);
  if (!live) {
    const ended = known.find((s) => s.state.registration?.status === "successful");
    if (!ended) throw none();
    return { session: await markRevoked(db, ended.row.id), intent: null };
  }
  const { row, state } = live;
  if (state.status === "awaiting_signature") {
    const registration = state.registration!.id;
    if (await cancelUnsigned(db, registration, "cancelled: its session was revoked before the owner signed")) {
      await publishIntentEventAfterCommit(db, registration, "transaction_intent.cancelled");
    }
    return { session: await markRevoked(db, row.id), intent: null };
  }
  if (state.status === "registering") {
    throw conflict(`Session ${row.id} is still being registered (intent ${state.registration?.id ?? "being recorded"} has not landed): wait until it lands, then revoke it.`);
  }
  // Already on its way (or awaiting the owner): the answer shows it, nothing new is sent.
  if (state.status === "revoking") return { session: row, intent: null };
  const data = encodeFunctionData({ abi: smartAccountAbi, functionName: "revokeSessionKey", args: [key] });
  const intent = await selfIntent(db, ctx, account, input.policy, "revokeSessionKey", data, {
    cause: "session",
    args: [key],
    sessionId: row.id,
    optimistic: input.optimistic ?? false,
    check: async (tx) => {
      await lockSessionKey(tx, account.id, key);
      const [current] = await tx.select({ revocationIntentId: sessions.revocationIntentId }).from(sessions).where(eq(sessions.id, row.id));
      if (current?.revocationIntentId !== row.revocationIntentId) throw conflict(`Session ${row.id} is being revoked by another request.`);
    },
  });
  const [session] = await db.update(sessions).set({ revocationIntentId: intent.id, updatedAt: sql`now()` }).where(eq(sessions.id, row.id)).returning();
  return { session: session!, intent };
}

async function markRevoked(db: Queryable, id: string): Promise<SessionRow> {
  const [row] = await db.update(sessions).set({ revokedAt: sql`coalesce(${sessions.revokedAt}, now())`, updatedAt: sql`now()` }).where(eq(sessions.id, id)).returning();
  return row!;
}

/**
 * The owner's signature for the session's intent awaiting one (its registration or revocation), checked, then
 * recorded for the relay. Only the owner: a session key may never call its own account.
 */
export async function signSession(db: Queryable, ctx: ProjectContext, id: string, signature: Hex): Promise<{ session: SessionRow; intent: IntentRow }> {
  const session = await getSession(db, ctx, id);
  const awaiting = (await sessionStates(db, [session])).get(id)!.awaiting;
  if (!awaiting) throw conflict(`Session ${id} has no transaction intent awaiting a signature.`);
  const [account] = await db.select().from(accounts).where(eq(accounts.id, session.accountId));
  const signer = await recoverMessageAddress({ message: { raw: awaiting.userOperationHash as Hex }, signature }).catch(() => null);
  if (signer && account && !isAddressEqual(signer, account.ownerAddress as Address)) {
    throw badRequest(`The signature recovers to ${signer}, not to ${account.ownerAddress}, the owner of account ${account.id}, who alone may register or revoke its session keys. Sign the userOperationHash (personal_sign of its 32 bytes).`, {
      signature: { value: signature, message: `signed by ${signer}` },
    });
  }
  return { session, intent: await submitSignature(db, ctx, awaiting.id, signature) };
}
