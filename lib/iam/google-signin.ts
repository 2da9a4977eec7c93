import crypto from "node:crypto";
import { and, eq, isNull, sql } from "drizzle-orm";
import { decodeJwt } from "jose";
import type { Queryable } from "@/lib/db/client";
import { oauthSignins } from "@/lib/db/schema";
import { inScope } from "@/lib/db/scope";
import { badGateway, badRequest, conflict, notFound, unavailable } from "@/lib/errors";
import { newId } from "@/lib/ids";
import { publicBaseUrl } from "@/lib/http/public-url";
import { decrypt, encrypt, sameSecret, sha256 } from "@/lib/keys/encryption";
import type { ProjectContext } from "@/lib/tenant";
import { signInAnswer, type AuthPlayerResponse } from "./identities";
import { loadProviderConfig } from "./provider-config";
import { findOrCreatePlayer } from "./provider-signin";
import { allowedRedirect, redirectUrlsOf } from "./redirect-urls";
import { verifyWithProvider, ProviderUnavailable, TokenRejected } from "./providers";
import { issuerEndpoints, providerRequest, isObject } from "./providers/http";
import { GOOGLE_ISSUER } from "./providers/oidc";
import { openSession } from "./sessions";

/**
 * Google sign-in in the player's browser: an authorization-code flow with PKCE, state and nonce
 * against the configured issuer (Google's by default). The game asks for a sign-in URL and a key,
 * opens the URL; Google sends the browser back to our callback, which exchanges the code, checks
 * the ID token, opens a session and sends the browser on to an allow-listed `redirectTo` with a
 * one-time code. The game collects the result once with its key AND that code: the key alone would
 * let whoever started a sign-in (and sent someone else's browser through it) take its tokens.
 */

const PROVIDER = "google";
/** How long a started sign-in may take, and its result wait for the game. */
const SIGNIN_TTL_SECONDS = 10 * 60;
/** The AAD of a sign-in's sealed verifier and result (lib/key-rotation.ts reseals them with it). */
export const signinAad = (id: string) => `oauth-signin:${id}`;
const aad = signinAad;

export const callbackPath = "/iam/v1/oauth/google/callback";
/** The redirect URI registered with Google: from PUBLIC_URL (or the listening address) in production, never from request headers. */
export function callbackUrl(origin: string | undefined) {
  const base = publicBaseUrl(origin);
  if (!base) throw unavailable("Google sign-in in the browser needs PUBLIC_URL set on the server (the base URL browsers reach it on) when it listens on every interface.");
  return `${base}${callbackPath}`;
}

async function googleConfig(db: Queryable, ctx: ProjectContext) {
  const config = await loadProviderConfig(db, ctx, PROVIDER);
  const mode = ctx.livemode ? "live" : "test";
  if (!config) throw badRequest(`google is not configured in ${mode} mode: configure it with POST /iam/v1/oauth first.`, { provider: { value: PROVIDER, message: "not configured" } });
  if (!config.enabled) throw badRequest(`google sign-in is disabled in ${mode} mode.`, { provider: { value: PROVIDER, message: "disabled" } });
  if (!config.clientId || !config.secrets.clientSecret) {
    throw badRequest("google sign-in in the browser needs the configuration's clientId and clientSecret.", { provider: { value: PROVIDER, message: "clientId and clientSecret required" } });
  }
  return config;
}

/** The issuer's authorization and token endpoints: Google's documented ones unless its discovery document was fetched (lib/iam/providers/http.ts). */
async function endpoints(issuer: string, livemode: boolean) {
  try {
    const doc = await issuerEndpoints(issuer, livemode);
    if (!doc.authorizationEndpoint || !doc.tokenEndpoint) throw new ProviderUnavailable("its discovery document names no authorization or token endpoint");
    return { authorization: doc.authorizationEndpoint, token: doc.tokenEndpoint };
  } catch (err) {
    if (err instanceof ProviderUnavailable) throw badGateway(`Could not reach google: ${err.message}.`);
    throw err;
  }
}

/** Starts a sign-in: the URL to open in the player's browser, and the key the game collects the result with. */
export async function startGoogleSignin(db: Queryable, ctx: ProjectContext, origin: string | undefined, requested: string | undefined) {
  const config = await googleConfig(db, ctx);
  const redirectTo = allowedRedirect(redirectUrlsOf((config.settings as { redirectUrls?: unknown }).redirectUrls), requested, ctx.livemode ? "live" : "test");
  const redirectUri = callbackUrl(origin);
  const { authorization } = await endpoints(config.baseUrl ?? GOOGLE_ISSUER, ctx.livemode);
  const id = newId("oauthSignin");
  const state = crypto.randomBytes(32).toString("base64url");
  const key = crypto.randomBytes(32).toString("base64url");
  const verifier = crypto.randomBytes(32).toString("base64url");
  const nonce = crypto.randomBytes(16).toString("base64url");
  const [row] = await db
    .insert(oauthSignins)
    .values({
      id,
      ...ctx,
      provider: PROVIDER,
      stateHash: sha256(state),
      encryptedVerifier: encrypt(verifier, aad(id)),
      nonce,
      redirectTo,
      keyHash: sha256(key),
      expiresAt: sql`now() + make_interval(secs => ${SIGNIN_TTL_SECONDS})`,
    })
    .returning();
  const url = new URL(authorization);
  url.search = new URLSearchParams({
    client_id: config.clientId!,
    redirect_uri: redirectUri,
    response_type: "code",
    scope: "openid email profile",
    state,
    nonce,
    code_challenge: crypto.createHash("sha256").update(verifier).digest("base64url"),
    code_challenge_method: "S256",
  }).toString();
  return { url: url.href, key, expiresAt: Math.floor(row!.expiresAt.getTime() / 1000) };
}

/** The sign-in a callback's `state` belongs to (its credential), unexpired and not yet completed. */
export async function signinOfState(db: Queryable, state: string) {
  const [row] = await db.select().from(oauthSignins).where(eq(oauthSignins.stateHash, sha256(state)));
  if (!row || row.completedAt || row.expiresAt.getTime() <= Date.now()) return null;
  return row;
}

export type SigninRow = typeof oauthSignins.$inferSelect;

/**
 * The browser's return: exchanges the code (with the PKCE verifier), checks the ID token (the
 * configuration's issuer and client id, the nonce we sent), finds or creates the player and opens
 * a session, sealed in the sign-in for the game. Answers where to send the browser.
 */
export async function completeGoogleSignin(db: Queryable, signin: SigninRow, origin: string | undefined, input: { code?: string; error?: string; error_description?: string }) {
  const ctx = { projectId: signin.projectId, livemode: signin.livemode };
  const finish = async (set: Partial<typeof oauthSignins.$inferInsert>) => {
    // Only the first callback of a sign-in counts (a reload of the page changes nothing).
    const [done] = await db
      .update(oauthSignins)
      .set({ ...set, completedAt: sql`now()` })
      .where(and(eq(oauthSignins.id, signin.id), isNull(oauthSignins.completedAt)))
      .returning({ id: oauthSignins.id });
    if (!done) throw conflict("This sign-in was already completed.");
  };
  if (input.error || !input.code) {
    const error = input.error ? `google refused: ${input.error}${input.error_description ? ` (${input.error_description.slice(0, 200)})` : ""}` : "google sent no authorization code";
    await finish({ error });
    return { ok: false as const, error, redirectTo: signin.redirectTo };
  }
  const config = await googleConfig(db, ctx);
  const { token: tokenEndpoint } = await endpoints(config.baseUrl ?? GOOGLE_ISSUER, ctx.livemode);
  let idToken: string;
  try {
    const answer = await providerRequest(
      tokenEndpoint,
      {
        method: "POST",
        // HTTP Basic client authentication, which every authorization server must accept (RFC 6749 §2.3.1).
        headers: { "content-type": "application/x-www-form-urlencoded", authorization: `Basic ${Buffer.from(`${encodeURIComponent(config.clientId!)}:${encodeURIComponent(config.secrets.clientSecret!)}`).toString("base64")}` },
        body: new URLSearchParams({
          grant_type: "authorization_code",
          code: input.code,
          redirect_uri: callbackUrl(origin),
          code_verifier: decrypt(signin.encryptedVerifier, aad(signin.id)),
        }).toString(),
      },
      ctx.livemode,
    );
    const body = isObject(answer.json) ? answer.json : {};
    if (answer.status !== 200 || typeof body.id_token !== "string") {
      throw new TokenRejected(`its token endpoint answered ${answer.status}${typeof body.error === "string" ? ` (${body.error})` : ""} without an ID token`);
    }
    idToken = body.id_token;
    const identity = await verifyWithProvider(config, idToken, { livemode: ctx.livemode });
    if (decodeJwt(idToken).nonce !== signin.nonce) throw new TokenRejected("its ID token carries another nonce than this sign-in's");
    const { player } = await findOrCreatePlayer(db, ctx, PROVIDER, identity);
    const result = await signInAnswer(db, player, await openSession(db, ctx, player.id, PROVIDER));
    // Only the browser that finished gets the code; the game proves it holds both with the key.
    const code = crypto.randomBytes(32).toString("base64url");
    await finish({ encryptedResult: encrypt(JSON.stringify(result), aad(signin.id)), codeHash: sha256(code) });
    return { ok: true as const, redirectTo: signin.redirectTo, code };
  } catch (err) {
    if (!(err instanceof TokenRejected || err instanceof ProviderUnavailable)) throw err;
    const error = `google sign-in failed: ${err.message}`;
    await finish({ error });
    return { ok: false as const, error, redirectTo: signin.redirectTo };
  }
}

/** Hands the finished sign-in's result to the game, once: to the holder of its key and of the code its browser was given. */
export async function collectGoogleSignin(db: Queryable, ctx: ProjectContext, key: string, code: string | undefined): Promise<{ player: AuthPlayerResponse; token: string; refreshToken: string }> {
  const [row] = await db
    .select()
    .from(oauthSignins)
    .where(inScope(oauthSignins, ctx, eq(oauthSignins.keyHash, sha256(key))));
  if (!row) throw notFound("sign-in", key);
  if (row.collectedAt) throw conflict("This sign-in's result was already collected.");
  if (row.expiresAt.getTime() <= Date.now()) throw conflict("This sign-in expired: start a new one.");
  if (!row.completedAt) {
    throw conflict("The player has not finished signing in yet: ask again in a moment.");
  }
  if (row.error) throw badRequest(row.error);
  if (code === undefined) {
    throw badRequest("Missing required parameter code: the one-time code the sign-in added to redirectTo in the player's browser.", { code: { message: "Required: the code from redirectTo." } });
  }
  if (!row.codeHash || !sameSecret(sha256(code), row.codeHash)) {
    throw badRequest("Invalid parameter code: it is not the code this sign-in gave the browser that finished it.", { code: { message: "Does not match this sign-in." } });
  }
  const [taken] = await db
    .update(oauthSignins)
    .set({ collectedAt: sql`now()`, encryptedResult: null })
    .where(and(eq(oauthSignins.id, row.id), isNull(oauthSignins.collectedAt)))
    .returning({ id: oauthSignins.id });
  if (!taken || !row.encryptedResult) throw conflict("This sign-in's result was already collected.");
  return JSON.parse(decrypt(row.encryptedResult, aad(row.id)));
}
