import type { Db } from "@/lib/db/client";
import { isAdminToken } from "@/lib/admin";
import { signinOfState, type SigninRow as OAuthSigninRow } from "@/lib/iam/google-signin";
import { InvalidPlayerToken, type PlayerTokenClaims } from "@/lib/iam/tokens";
import { verifyPlayerSession } from "@/lib/iam/sessions";
import { findKey, findPublishableKey, type AuthenticatedKey, type ProjectContext } from "@/lib/projects/service";
import { verifySigningToken } from "@/lib/signing/token";
import { authenticate, authError, bearerToken } from "./auth";
import { readBody } from "./body";
import { ApiError, badRequest, notFound } from "./errors";
import { readingRequest } from "./read";
import { clientAddress } from "./client-address";
import { enforce, limits } from "./rate-limit";

/**
 * How an operation's caller proves who it is. Each strategy yields a typed principal and, for all
 * but the admin token, the project and mode the request acts in.
 */
export type AuthKind = "secret" | "publishable" | "player" | "projectInPath" | "dashboard" | "signingLink" | "oauthState" | "admin";

export type KeyPrincipal = { kind: "key"; key: AuthenticatedKey };
export type PlayerPrincipal = { kind: "player"; claims: PlayerTokenClaims };
/** The project named by a publishable key in the path (a JWKS URL): public data only, nothing proven. */
export type ProjectPathPrincipal = { kind: "projectInPath"; publishableKey: string };
export type DeveloperPrincipal = { kind: "developer"; developerId: string };
export type SigningLinkPrincipal = { kind: "signingLink"; intentId: string; token: string };
export type AdminPrincipal = { kind: "admin" };
/** A provider sending the player's browser back: the sign-in its `state` started. */
export type OAuthStatePrincipal = { kind: "oauthState"; signin: OAuthSigninRow };

export interface PrincipalOf {
  secret: KeyPrincipal;
  publishable: KeyPrincipal;
  player: PlayerPrincipal;
  projectInPath: ProjectPathPrincipal;
  dashboard: DeveloperPrincipal;
  signingLink: SigningLinkPrincipal;
  oauthState: OAuthStatePrincipal;
  admin: AdminPrincipal;
}
export type Principal = PrincipalOf[AuthKind];
/** The project and mode a request acts in; none for the admin token. */
export type ProjectOf<A extends AuthKind> = A extends "admin" ? null : ProjectContext;

export interface Authenticated<A extends AuthKind = AuthKind> {
  principal: PrincipalOf[A];
  project: ProjectOf<A>;
  /** The body, when the strategy had to read it to find the credential (then within a small limit). */
  body?: Record<string, unknown>;
}

/** Before a signing link's token is checked, its body may hold no more than the token and a signature (~300 bytes and a few KiB). */
const UNVERIFIED_BODY_BYTES = 16 * 1024;

export interface AuthRequest {
  request: Request;
  url: URL;
  params: Record<string, string>;
}

interface Strategy<A extends AuthKind> {
  authenticate(db: Db, req: AuthRequest): Promise<Authenticated<A>>;
  /** Counted against the project's API rate limit and written to its request log. */
  apiRequest: boolean;
  /** Limited per client address before anything else (routes with no account behind them). */
  perAddress?: boolean;
}

const keyStrategy = (accepts: "secret" | "publishable"): Strategy<"secret" | "publishable"> => ({
  apiRequest: true,
  async authenticate(db, { request }) {
    const key = await authenticate(db, request, accepts);
    return { principal: { kind: "key", key }, project: { projectId: key.projectId, livemode: key.livemode } };
  },
});

export const STRATEGIES: { [A in AuthKind]: Strategy<A> } = {
  secret: keyStrategy("secret") as Strategy<"secret">,
  publishable: keyStrategy("publishable") as Strategy<"publishable">,

  /**
   * `Authorization: Bearer <player token>` (from sign-up, login, refresh or a provider sign-in),
   * its session still open. A publishable key sent beside it (`x-project-key`, as client SDKs do)
   * must be the token's project and mode.
   */
  player: {
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
  },

  projectInPath: {
    apiRequest: false,
    perAddress: true,
    async authenticate(db, { params }) {
      const publishableKey = params.publishableKey ?? "";
      const key = publishableKey.startsWith("pk_") ? await findPublishableKey(db, publishableKey) : null;
      if (!key) throw notFound("publishable key", publishableKey);
      return { principal: { kind: "projectInPath", publishableKey }, project: { projectId: key.projectId, livemode: key.livemode } };
    },
  },

  /** The dashboard's session cookie; the project and mode come from the path, and another organization's project is a 404. */
  dashboard: {
    apiRequest: false,
    async authenticate(_db, { params }) {
      // Loaded here: next-auth reads the request's cookies through next/headers, which only route handlers have.
      const { developerProjectScope, sessionDeveloper } = await import("@/lib/dashboard/context");
      const developer = await sessionDeveloper();
      if (!developer) throw new ApiError(401, "authentication_error", "Sign in to the dashboard first.");
      const scope = await developerProjectScope(developer.id, params.projectId ?? "", params.mode ?? "");
      if (!scope) throw new ApiError(404, "invalid_request_error", `No such project: '${params.projectId}' (${params.mode})`);
      return { principal: { kind: "developer", developerId: developer.id }, project: scope.ctx };
    },
  },

  /**
   * The signing link's token for the intent in the path, limited per client address first: from
   * `?t=`, checked before the body is read, or from a body field `token`, read from a body of at
   * most UNVERIFIED_BODY_BYTES (the token and a signature need no more).
   */
  signingLink: {
    apiRequest: false,
    perAddress: true,
    async authenticate(_db, { request, url, params }) {
      let token = url.searchParams.get("t");
      let body: Record<string, unknown> | undefined;
      if (!token && request.method === "POST") {
        body = await readingRequest(() => readBody(request, UNVERIFIED_BODY_BYTES), "request body");
        token = typeof body.token === "string" ? body.token : null;
      }
      if (!token) throw badRequest("The signing link's token is missing: open the page from the full link.", { t: { message: "required" } });
      const intentId = params.id ?? "";
      const project = await verifySigningToken(token, intentId);
      return { principal: { kind: "signingLink", intentId, token }, project, body };
    },
  },

  /** The `state` of a browser sign-in this service started, unexpired and not yet completed; limited per client address first. */
  oauthState: {
    apiRequest: false,
    perAddress: true,
    async authenticate(db, { url }) {
      const state = url.searchParams.get("state");
      const signin = state && state.length <= 200 ? await signinOfState(db, state) : null;
      if (!signin) throw new ApiError(400, "invalid_request_error", "This sign-in is unknown, expired or already completed: start it again from the game.");
      return { principal: { kind: "oauthState", signin }, project: { projectId: signin.projectId, livemode: signin.livemode } };
    },
  },

  /** The local CLI's token (only `.data/` holds it). Anyone else gets a 404, as if the route did not exist. */
  admin: {
    apiRequest: false,
    async authenticate(_db, { request }) {
      if (!isAdminToken(bearerToken(request))) throw new ApiError(404, "invalid_request_error", "Not found.");
      return { principal: { kind: "admin" }, project: null };
    },
  },
};

/** Runs the operation's strategy (after the per-address limit where it has one). */
export async function authenticateRequest<A extends AuthKind>(db: Db, kind: A, req: AuthRequest): Promise<Authenticated<A>> {
  const strategy = STRATEGIES[kind] as Strategy<A>;
  if (strategy.perAddress) await enforce(db, `public:${clientAddress(req.request.headers)}`, limits.public(), "Too many requests from your address");
  return strategy.authenticate(db, req);
}

export const isApiRequest = (kind: AuthKind) => STRATEGIES[kind].apiRequest;
