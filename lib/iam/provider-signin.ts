import { asc, eq, isNotNull, isNull, sql } from "drizzle-orm";
import type { Queryable } from "@/lib/db/client";
import { playerIdentities, players } from "@/lib/db/schema";
import { inScope } from "@/lib/db/scope";
import { badGateway, badRequest, unauthorized } from "@/lib/errors";
import { findIdentity, linkIdentity, releaseDeletedIdentity } from "@/lib/iam/identities";
import { createPlayer, type PlayerRow } from "@/lib/players/service";
import type { ProjectContext } from "@/lib/tenant";
import { loadProviderConfig } from "./provider-config";
import { ProviderUnavailable, TokenRejected, verifyWithProvider, type VerifiedIdentity } from "./providers";

/**
 * Signing players in with a third-party provider's token: the provider's configuration in the
 * caller's mode verifies it (lib/iam/providers), and the identity it proves (provider + the
 * provider's user id) names the player.
 */

/** The identity a token proves, or the API error saying why not (400 unconfigured, 401 rejected, 502 unreachable). */
export async function verifyProviderToken(db: Queryable, ctx: ProjectContext, provider: string, token: string): Promise<VerifiedIdentity> {
  const config = await loadProviderConfig(db, ctx, provider);
  const mode = ctx.livemode ? "live" : "test";
  if (!config) {
    throw badRequest(`${provider} is not configured in ${mode} mode: configure it with POST /iam/v1/oauth first.`, { provider: { value: provider, message: "not configured" } });
  }
  if (!config.enabled) throw badRequest(`${provider} sign-in is disabled in ${mode} mode.`, { provider: { value: provider, message: "disabled" } });
  try {
    return await verifyWithProvider(config, token, { livemode: ctx.livemode });
  } catch (err) {
    if (err instanceof TokenRejected) throw unauthorized(`Invalid ${provider} token: ${err.message}.`);
    if (err instanceof ProviderUnavailable) throw badGateway(`Could not verify the token with ${provider}: ${err.message}.`);
    throw err;
  }
}

/** The oldest player of the mode with an identity whose email is verified and is `email` (any provider). */
async function playerWithVerifiedEmail(db: Queryable, ctx: ProjectContext, email: string): Promise<PlayerRow | null> {
  const [row] = await db
    .select({ player: players })
    .from(playerIdentities)
    .innerJoin(players, eq(players.id, playerIdentities.playerId))
    .where(
      inScope(
        playerIdentities,
        ctx,
        sql`lower(${playerIdentities.email}) = ${email.toLowerCase()}`,
        isNotNull(playerIdentities.emailVerifiedAt),
        isNull(players.deletedAt),
      ),
    )
    .orderBy(asc(players.createdAt), asc(players.id))
    .limit(1);
  return row?.player ?? null;
}

class LinkRaced extends Error {}

/**
 * The player of a verified identity, created on first sign-in. A new identity joins an existing
 * player only when the provider asserts the email verified and another identity of that player
 * has the same verified email (so an unverified address can never take over someone's player);
 * otherwise it gets a player of its own. Concurrent first sign-ins make one player.
 */
export async function findOrCreatePlayer(db: Queryable, ctx: ProjectContext, provider: string, identity: VerifiedIdentity): Promise<{ player: PlayerRow; created: boolean }> {
  for (let attempt = 0; ; attempt++) {
    const found = await findIdentity(db, ctx, provider, identity.externalUserId);
    if (found) return { player: found.player, created: false };
    try {
      return await db.transaction(async (tx) => {
        await releaseDeletedIdentity(tx, ctx, provider, identity.externalUserId);
        const candidate = identity.emailVerified && identity.email ? await playerWithVerifiedEmail(tx, ctx, identity.email) : null;
        // Locked as every identity change of a player is (lib/iam/identities lockPlayer); a player deleted meanwhile is no candidate.
        const [locked] = candidate ? await tx.select().from(players).where(eq(players.id, candidate.id)).for("update") : [];
        const existing = locked && !locked.deletedAt ? locked : null;
        const player = existing ?? (await createPlayer(tx, ctx, { name: identity.name?.slice(0, 255) ?? undefined, email: identity.email?.slice(0, 320) ?? undefined }));
        const linked = await linkIdentity(tx, ctx, player.id, { provider, externalUserId: identity.externalUserId, email: identity.email });
        if (!linked) throw new LinkRaced();
        if (identity.emailVerified) await tx.update(playerIdentities).set({ emailVerifiedAt: sql`now()` }).where(eq(playerIdentities.id, linked.id));
        return { player, created: existing === null };
      });
    } catch (err) {
      // Another request linked the identity first: its player is the one (rolled back: no stray player).
      if (!(err instanceof LinkRaced) || attempt >= 2) throw err;
    }
  }
}
