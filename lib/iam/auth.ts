import type { AuthStrategy } from "@/lib/http/principals";
import { authError, bearerToken } from "@/lib/http/auth";
import { ApiError } from "@/lib/http/errors";
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
    if (!token) throw authError("Send the player's token: Authorization: Bearer <token from login, sign-up or refresh>.");
    let claims: PlayerTokenClaims;
    try {
      claims = await verifyPlayerSession(db, token);
    } catch (err) {
      if (err instanceof InvalidPlayerToken) throw authError(`Invalid player token: ${err.message}.`);
      throw err;
    }
    const projectKey = request.headers.get("x-project-key");
    if (projectKey) {
      const key = await findKey(db, projectKey);
      if (!key || key.projectId !== claims.projectId || key.livemode !== claims.livemode) throw authError("The player token belongs to another project or mode than x-project-key.");
    }
    return { principal: { kind: "player", claims }, project: { projectId: claims.projectId, livemode: claims.livemode } };
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
    if (!signin) throw new ApiError(400, "invalid_request_error", "This sign-in is unknown, expired or already completed: start it again from the game.");
    return { principal: { kind: "oauthState", signin }, project: { projectId: signin.projectId, livemode: signin.livemode } };
  },
};
