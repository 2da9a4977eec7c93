import { eq, gt, isNull, lt, sql } from "drizzle-orm";
import type { Address, Hex } from "viem";
import { generateSiweNonce, parseSiweMessage, validateSiweMessage, verifySiweMessage } from "viem/siwe";
import { publicClient } from "@/lib/chain/clients";
import { chainFor } from "@/lib/chain/registry";
import type { Queryable } from "@/lib/db/client";
import { playerIdentities, siweNonces } from "@/lib/db/schema";
import { inScope } from "@/lib/db/scope";
import { ApiError, badRequest, conflict, unauthorized, type ErrorDetails } from "@/lib/errors";
import type { ProjectContext } from "@/lib/tenant";
import { createPlayer, getPlayer } from "@/lib/players/service";
import { authPlayer, findIdentity, identitiesOf, linkIdentity, lockPlayer, signInAnswer, type AuthPlayerResponse } from "./identities";
import { limitAddress } from "./credentials/lockout";
import { openSession } from "./sessions";
import { checkIssuedAt, checkSiweOrigin } from "./siwe-settings";

/** How long a nonce may wait for its signature. */
const NONCE_TTL_SECONDS = 10 * 60;
export const WALLET_PROVIDER = "wallet";

/** A single-use nonce for `address`, to put in the EIP-4361 message the wallet signs. */
export async function siweInit(db: Queryable, ctx: ProjectContext, address: Address) {
  const nonce = generateSiweNonce();
  const [row] = await db
    .insert(siweNonces)
    .values({ nonce, ...ctx, address: address.toLowerCase(), expiresAt: sql`now() + make_interval(secs => ${NONCE_TTL_SECONDS})` })
    .returning();
  // Nonces nobody used are cleared as new ones are made.
  await db.delete(siweNonces).where(lt(siweNonces.expiresAt, sql`now() - interval '1 day'`));
  return { address, nonce, expiresAt: Math.floor(row!.expiresAt.getTime() / 1000) };
}

const invalid = (message: string, details?: ErrorDetails) => unauthorized(message, details);

/**
 * Checks a signed EIP-4361 message before its nonce: well formed; its domain and URI ones this
 * project and mode allow (lib/iam/siwe-settings.ts) and its chain one the mode uses, so a
 * signature a phishing site collected signs no one in; its time window; and the signature, an
 * EOA's or a smart account's (ERC-1271/6492, on the message's chain).
 */
async function verifiedMessage(db: Queryable, ctx: ProjectContext, message: string, signature: Hex) {
  const parsed = parseSiweMessage(message);
  if (!parsed.address || !parsed.nonce || !parsed.domain || !parsed.uri || !parsed.version || parsed.chainId === undefined) {
    throw badRequest("Invalid parameter message: not an EIP-4361 message (domain, address, uri, version, chain id and nonce are required).", {
      message: { message: "not an EIP-4361 message" },
    });
  }
  await checkSiweOrigin(db, ctx, { domain: parsed.domain, uri: parsed.uri });
  const chain = messageChain(ctx, parsed.chainId);
  checkIssuedAt(parsed.issuedAt);
  if (!validateSiweMessage({ message: parsed, address: parsed.address, nonce: parsed.nonce })) throw outsideWindow(parsed);
  const valid = await verifySiweMessage(publicClient(chain), { message, signature, address: parsed.address, nonce: parsed.nonce });
  if (!valid) throw invalid("The signature does not match the message's address.");
  return { address: parsed.address, nonce: parsed.nonce };
}

/** Why viem refused the message: which of its time bounds (or else its version or nonce). */
function outsideWindow(parsed: ReturnType<typeof parseSiweMessage>, now = new Date()) {
  const { expirationTime, notBefore } = parsed;
  const field = expirationTime && !(now < expirationTime) ? "expirationTime" : notBefore && !(now >= notBefore) ? "notBefore" : null;
  if (!field) return invalid("The message is not a valid EIP-4361 message (version 1, an alphanumeric nonce of 8 or more characters).");
  const date = parsed[field]!;
  const value = Number.isNaN(date.getTime()) ? "not an RFC 3339 date-time" : date.toISOString();
  return invalid(`The message is outside its validity window (${field}: ${value}).`, { [field]: { value, message: "outside the message's validity window" } });
}

/** The message's chain, one this project's mode can use; any other is refused like a mismatched domain. */
function messageChain(ctx: ProjectContext, chainId: number) {
  try {
    return chainFor(ctx, chainId);
  } catch (err) {
    if (err instanceof ApiError) throw invalid(`The message's chain is not allowed: ${err.message}`, err.details);
    throw err;
  }
}

/** Uses up the message's nonce: one this project and mode handed out for that address, unexpired and unused. */
async function consumeNonce(db: Queryable, ctx: ProjectContext, { address, nonce }: { address: Address; nonce: string }) {
  // Used up only once the signature holds, so a forged attempt cannot burn a player's nonce.
  const [used] = await db
    .update(siweNonces)
    .set({ usedAt: sql`now()` })
    .where(
      inScope(
        siweNonces,
        ctx,
        eq(siweNonces.nonce, nonce),
        eq(siweNonces.address, address.toLowerCase()),
        isNull(siweNonces.usedAt),
        gt(siweNonces.expiresAt, sql`now()`),
      ),
    )
    .returning();
  if (!used) throw invalid("The message's nonce is unknown, expired or already used: ask /iam/v1/siwe/init for a new one.");
}

async function verifiedAddress(db: Queryable, ctx: ProjectContext, message: string, signature: Hex): Promise<Address> {
  const verified = await verifiedMessage(db, ctx, message, signature);
  await consumeNonce(db, ctx, verified);
  return verified.address;
}

/** Signs in (or up) the player whose wallet signed the message: `{player, token, refreshToken}`. */
export async function siweAuthenticate(db: Queryable, ctx: ProjectContext, message: string, signature: Hex, clientAddress?: string) {
  const verified = await verifiedMessage(db, ctx, message, signature);
  const address = verified.address;
  let found = await findIdentity(db, ctx, WALLET_PROVIDER, address);
  // A new player is a sign-up: counted per client address as password sign-ups are, before the
  // nonce is used, so a refused one can be sent again after Retry-After.
  if (!found) await limitAddress(db, clientAddress, "Too many sign-ups from your address");
  await consumeNonce(db, ctx, verified);
  if (!found) {
    const player = await createPlayer(db, ctx, {});
    // Two first sign-ins at once: the unique identity decides, the loser's player is left unlinked and unused.
    await linkIdentity(db, ctx, player.id, { provider: WALLET_PROVIDER, externalUserId: address });
    found = await findIdentity(db, ctx, WALLET_PROVIDER, address);
  }
  const { player } = found!;
  return signInAnswer(db, player, await openSession(db, ctx, player.id, WALLET_PROVIDER));
}

/** Adds the wallet that signed the message to the signed-in player. */
export async function siweLink(db: Queryable, ctx: ProjectContext, playerId: string, message: string, signature: Hex): Promise<AuthPlayerResponse> {
  const address = await verifiedAddress(db, ctx, message, signature);
  const linked = await linkIdentity(db, ctx, playerId, { provider: WALLET_PROVIDER, externalUserId: address });
  if (!linked) {
    const owner = await findIdentity(db, ctx, WALLET_PROVIDER, address);
    if (owner?.player.id !== playerId) throw conflict(`Wallet ${address} is already linked to another player.`);
  }
  return authPlayer(db, await getPlayer(db, ctx, playerId));
}

/** Removes a wallet from the signed-in player; never its last way to sign in. */
export async function siweUnlink(db: Queryable, ctx: ProjectContext, playerId: string, address: Address): Promise<AuthPlayerResponse> {
  await db.transaction(async (tx) => {
    await lockPlayer(tx, ctx, playerId);
    const identities = (await identitiesOf(tx, [playerId])).get(playerId) ?? [];
    const target = identities.find((i) => i.provider === WALLET_PROVIDER && i.externalUserId === address.toLowerCase());
    if (!target) throw badRequest(`Invalid parameter address: wallet ${address} is not linked to this player.`, { address: { value: address, message: "not linked" } });
    if (identities.length === 1) throw conflict("This wallet is the player's only way to sign in: link another before unlinking it.");
    await tx.delete(playerIdentities).where(eq(playerIdentities.id, target.id));
  });
  return authPlayer(db, await getPlayer(db, ctx, playerId));
}
