import type { AuthStrategy } from "@/lib/http/principals";
import { bearerToken } from "@/lib/http/auth";
import { envNumber } from "@/lib/config";
import { badRequest, forbidden, unauthorized } from "@/lib/errors";
import { findKey } from "@/lib/projects/service";
import { signinOfState, type SigninRow } from "./google-signin";
import { verifyPlayerSession } from "./sessions";
import { InvalidPlayerToken, type PlayerTokenClaims } from "./tokens";

export type PlayerPrincipal = { kind: "player"; claims: PlayerTokenClaims };

/**
 * `Authorization: Bearer <player token>` (from sign-up, login, refresh or a provider sign-in),
 * its session still open. A publishable key sent beside it (`x-project-key`, as client SDKs do)
 * must be the token's project and mode.
 */
export const playerToken: AuthStrategy<PlayerPrincipal> = {
  security: [{ playerToken: [] }],
  apiRequest: true,
  async authenticate(db, { request }) {
    const token = bearerToken(request);
    if (!token) throw unauthorized("Send the player's token: Authorization: Bearer <token from login, sign-up or refresh>.");
    let claims: PlayerTokenClaims;
    try {
      claims = await verifyPlayerSession(db, token);
    } catch (err) {
      if (err instanceof InvalidPlayerToken) throw unauthorized(`Invalid player token: ${err.message}.`);
      throw err;
    }
    const projectKey = request.headers.get("x-project-key");
    if (projectKey) {
      const key = await findKey(db, projectKey);
      if (!key || key.projectId !== claims.projectId || key.livemode !== claims.livemode) throw unauthorized("The player token belongs to another project or mode than x-project-key.");
    }
    return { principal: { kind: "player", claims }, project: { projectId: claims.projectId, livemode: claims.livemode } };
  },
};

/** How recent (seconds) a sign-in must be to link or unlink a way to sign in. */
export const reauthWindowSeconds = () => envNumber("PLAYER_REAUTH_WINDOW_SECONDS", 600, { min: 0 });

/**
 * A player token whose sign-in is recent: what changing the player's ways to sign in (link,
 * unlink) asks, so a token that leaked, or a session someone left open, cannot add the taker's
 * own identity. Refreshing keeps the sign-in's time; only signing in again renews it.
 */
export const recentPlayerToken: AuthStrategy<PlayerPrincipal> = {
  ...playerToken,
  async authenticate(db, req) {
    const authenticated = await playerToken.authenticate(db, req);
    const window = reauthWindowSeconds();
    const age = Math.floor(Date.now() / 1000) - authenticated.principal.claims.authTime;
    if (age > window) {
      throw forbidden(`Reauthentication required: linking or unlinking a way to sign in needs a sign-in from the last ${window} seconds, and this session signed in ${age} seconds ago. Sign the player in again (a refresh is not enough), then retry with the new token.`);
    }
    return authenticated;
  },
};

/** A provider sending the player's browser back: the sign-in its `state` started, unexpired and not yet completed. */
export const oauthState: AuthStrategy<{ kind: "oauthState"; signin: SigninRow }> = {
  security: [],
  apiRequest: false,
  perAddress: true,
  async authenticate(db, { url }) {
    const state = url.searchParams.get("state");
    const signin = state && state.length <= 200 ? await signinOfState(db, state) : null;
    if (!signin) throw badRequest("This sign-in is unknown, expired or already completed: start it again from the game.");
    return { principal: { kind: "oauthState", signin }, project: { projectId: signin.projectId, livemode: signin.livemode } };
  },
};
