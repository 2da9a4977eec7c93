import { eq, gt, isNull, lt, sql } from "drizzle-orm";
import { verifyMessage, type Address, type Hex } from "viem";
import { generateSiweNonce, parseSiweMessage, validateSiweMessage, verifySiweMessage } from "viem/siwe";
import { publicClient } from "@/lib/chain/clients";
import { findChain } from "@/lib/chain/registry";
import type { Queryable } from "@/lib/db/client";
import { playerIdentities, siweNonces } from "@/lib/db/schema";
import { inScope } from "@/lib/db/scope";
import { ApiError, badRequest, conflict } from "@/lib/http/errors";
import type { ProjectContext } from "@/lib/projects/service";
import { createPlayer, getPlayer } from "@/lib/players/service";
import { authPlayer, findIdentity, identitiesOf, linkIdentity, lockPlayer, signInAnswer, type AuthPlayerResponse } from "./identities";
import { openSession } from "./sessions";

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

const invalid = (message: string) => new ApiError(401, "authentication_error", message);

/**
 * Checks a signed EIP-4361 message: well formed, its nonce one this project and mode handed out
 * for that address (unexpired, unused, then used up), its time window, and the signature, an
 * EOA's or a smart account's (ERC-1271/6492, on the message's chain when it is configured).
 */
async function verifiedAddress(db: Queryable, ctx: ProjectContext, message: string, signature: Hex): Promise<Address> {
  const parsed = parseSiweMessage(message);
  if (!parsed.address || !parsed.nonce || !parsed.domain || !parsed.uri || !parsed.version || parsed.chainId === undefined) {
    throw badRequest("Invalid parameter message: not an EIP-4361 message (domain, address, uri, version, chain id and nonce are required).", {
      message: { message: "not an EIP-4361 message" },
    });
  }
  if (!validateSiweMessage({ message: parsed, address: parsed.address, nonce: parsed.nonce })) {
    throw invalid("The message is outside its validity window (expirationTime, notBefore).");
  }
  const chain = findChain(parsed.chainId);
  const valid = chain
    ? await verifySiweMessage(publicClient(chain), { message, signature, address: parsed.address, nonce: parsed.nonce })
    : await verifyMessage({ address: parsed.address, message, signature }).catch(() => false);
  if (!valid) throw invalid("The signature does not match the message's address.");
  // Used up only once the signature holds, so a forged attempt cannot burn a player's nonce.
  const [used] = await db
    .update(siweNonces)
    .set({ usedAt: sql`now()` })
    .where(
      inScope(
        siweNonces,
        ctx,
        eq(siweNonces.nonce, parsed.nonce),
        eq(siweNonces.address, parsed.address.toLowerCase()),
        isNull(siweNonces.usedAt),
        gt(siweNonces.expiresAt, sql`now()`),
      ),
    )
    .returning();
  if (!used) throw invalid("The message's nonce is unknown, expired or already used: ask /iam/v1/siwe/init for a new one.");
  return parsed.address;
}

/** Signs in (or up) the player whose wallet signed the message: `{player, token, refreshToken}`. */
export async function siweAuthenticate(db: Queryable, ctx: ProjectContext, message: string, signature: Hex) {
  const address = await verifiedAddress(db, ctx, message, signature);
  let found = await findIdentity(db, ctx, WALLET_PROVIDER, address);
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
