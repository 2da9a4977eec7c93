import { defineOperation, type Operation } from "@/lib/http/operation";
import { publishableKey, publishableKeyInPath } from "@/lib/http/principals";
import { playerToken, recentPlayerToken, type PlayerPrincipal } from "./auth";
import { unauthorized } from "@/lib/errors";
import { authPlayerResponse } from "./identities";
import { tokenJwks } from "./tokens";
import { authPlayer } from "./identities";
import { linkEmailPassword, logOut, playerOfToken, refresh, resetPassword, unlinkEmail, verifyEmail, verifyTokenFor } from "./credentials/account";
import { credentialObject, issueCredentialToken } from "./credentials/credential-tokens";
import { logIn, signUp } from "./credentials/passwords";
import {
  authResponse,
  credentialTokenResponse,
  emailInput,
  emptyInput,
  jwksResponse,
  linkEmailInput,
  loginInput,
  logoutInput,
  logoutResponse,
  refreshInput,
  resetPasswordInput,
  signupInput,
  tokenQueryInput,
  tokenVerificationResponse,
  verifyEmailInput,
} from "./credentials/schema";

const tag = "Player authentication";

/** The signed-in player's claims (the "player" strategy always gives them to a request). */
function claimsOf(principal: PlayerPrincipal | undefined) {
  if (!principal) throw unauthorized("Send the player's token: Authorization: Bearer <token>.");
  return principal.claims;
}

// Sign-up and login exist under the spec's /auth/* paths and the client SDKs' /password/* paths.
const signupAt = (operationId: string, path: string) =>
  defineOperation({
    operationId,
    method: "POST",
    path,
    summary: "Sign a new player up with an email and password",
    tag,
    auth: publishableKey,
    input: signupInput,
    response: authResponse,
    run: async ({ db, project, input, clientAddress }) => signUp(db, project, input, clientAddress),
  });

const loginAt = (operationId: string, path: string) =>
  defineOperation({
    operationId,
    method: "POST",
    path,
    summary: "Log a player in with an email and password",
    tag,
    auth: publishableKey,
    input: loginInput,
    response: authResponse,
    run: async ({ db, project, input, clientAddress }) => logIn(db, project, input, clientAddress),
  });

export const signupOperation = signupAt("signUp", "/iam/v1/auth/signup");
export const loginOperation = loginAt("logIn", "/iam/v1/auth/login");
export const passwordSignup = signupAt("signupEmailPassword", "/iam/v1/password/signup");
export const passwordLogin = loginAt("loginEmailPassword", "/iam/v1/password/login");

export const jwks = defineOperation({
  operationId: "getPlayerTokenJwks",
  method: "GET",
  path: "/iam/v1/{publishableKey}/jwks.json",
  summary: "Public keys that verify the project's player tokens (JWKS)",
  tag,
  auth: publishableKeyInPath,
  input: emptyInput,
  response: jwksResponse,
  run: async ({ db, project }) =>
    // Public and cacheable: a verifier that meets an unknown `kid` (after a rotation) fetches it again.
    new Response(JSON.stringify(await tokenJwks(db, project)), {
      headers: { "content-type": "application/jwk-set+json; charset=utf-8", "cache-control": "public, max-age=300", "access-control-allow-origin": "*" },
    }),
});

export const verifyToken = defineOperation({
  operationId: "verifyAuthToken",
  method: "GET",
  path: "/iam/v1/verify",
  summary: "Verify a player token",
  tag,
  input: tokenQueryInput,
  response: tokenVerificationResponse,
  run: async ({ db, project, input }) => {
    const claims = await verifyTokenFor(db, project, input.token);
    return {
      projectId: claims.projectId,
      expiration: claims.expiration,
      issuedAt: claims.issuedAt,
      issuer: claims.issuer,
      sessionId: claims.sessionId,
      playerId: claims.playerId,
      livemode: claims.livemode,
    };
  },
});

export const verifyTokenPlayer = defineOperation({
  operationId: "getAuthPlayerByToken",
  method: "GET",
  path: "/iam/v1/auth/verify",
  summary: "Retrieve the player of a player token",
  tag,
  input: tokenQueryInput,
  response: authPlayerResponse,
  run: async ({ db, project, input }) => authPlayer(db, await playerOfToken(db, project, await verifyTokenFor(db, project, input.token))),
});

export const refreshOperation = defineOperation({
  operationId: "refreshPlayerSession",
  method: "POST",
  path: "/iam/v1/sessions",
  summary: "Trade a refresh token for new tokens (the refresh token rotates)",
  tag,
  auth: publishableKey,
  input: refreshInput,
  response: authResponse,
  run: async ({ db, project, input }) => refresh(db, project, input.refreshToken),
});

export const logoutOperation = defineOperation({
  operationId: "logoutPlayerSession",
  method: "POST",
  path: "/iam/v1/sessions/logout",
  summary: "End the player token's session",
  tag,
  auth: playerToken,
  input: logoutInput,
  response: logoutResponse,
  run: async ({ db, principal, input }) => logOut(db, claimsOf(principal), input.refreshToken),
});

export const me = defineOperation({
  operationId: "getSignedInPlayer",
  method: "GET",
  path: "/iam/v1/me",
  summary: "Retrieve the signed-in player",
  tag,
  auth: playerToken,
  input: emptyInput,
  response: authPlayerResponse,
  run: async ({ db, project, principal }) => authPlayer(db, await playerOfToken(db, project, claimsOf(principal))),
});

export const requestPasswordReset = defineOperation({
  operationId: "requestPasswordReset",
  method: "POST",
  path: "/iam/v1/password/reset/request",
  summary: "Make a single-use password-reset token for the game's backend to send to the player",
  tag,
  input: emailInput,
  response: credentialTokenResponse(credentialObject("password_reset")),
  run: async ({ db, project, input }) => issueCredentialToken(db, project, input.email, "password_reset"),
});

export const resetPasswordOperation = defineOperation({
  operationId: "resetPassword",
  method: "POST",
  path: "/iam/v1/password/reset",
  summary: "Set a new password with a reset token (ends the player's sessions)",
  tag,
  auth: publishableKey,
  input: resetPasswordInput,
  response: authPlayerResponse,
  run: async ({ db, project, input, clientAddress }) => resetPassword(db, project, input.token, input.password, clientAddress),
});

export const requestEmailVerification = defineOperation({
  operationId: "requestEmailVerification",
  method: "POST",
  path: "/iam/v1/password/verify_email/request",
  summary: "Make a single-use email-verification token for the game's backend to send to the player",
  tag,
  input: emailInput,
  response: credentialTokenResponse(credentialObject("verify_email")),
  run: async ({ db, project, input }) => issueCredentialToken(db, project, input.email, "verify_email"),
});

export const verifyEmailOperation = defineOperation({
  operationId: "verifyEmail",
  method: "POST",
  path: "/iam/v1/password/verify_email",
  summary: "Mark a player's email verified with a verification token",
  tag,
  auth: publishableKey,
  input: verifyEmailInput,
  response: authPlayerResponse,
  run: async ({ db, project, input }) => verifyEmail(db, project, input.token),
});

export const linkEmailOperation = defineOperation({
  operationId: "linkEmailPassword",
  method: "POST",
  path: "/iam/v1/password/link",
  summary: "Add an email and password sign-in to the signed-in player",
  tag,
  auth: recentPlayerToken,
  input: linkEmailInput,
  response: authPlayerResponse,
  run: async ({ db, project, principal, input, clientAddress }) =>
    linkEmailPassword(db, project, claimsOf(principal).playerId, input.email, input.password, clientAddress),
});

export const unlinkEmailOperation = defineOperation({
  operationId: "unlinkEmailPassword",
  method: "POST",
  path: "/iam/v1/password/unlink",
  summary: "Remove the signed-in player's email sign-in (not their last way to sign in)",
  tag,
  auth: recentPlayerToken,
  input: emailInput,
  response: authPlayerResponse,
  run: async ({ db, project, principal, input }) => unlinkEmail(db, project, claimsOf(principal).playerId, input.email),
});

export const credentialOperations: Operation[] = [
  signupOperation,
  loginOperation,
  passwordSignup,
  passwordLogin,
  jwks,
  verifyToken,
  verifyTokenPlayer,
  refreshOperation,
  logoutOperation,
  me,
  requestPasswordReset,
  resetPasswordOperation,
  requestEmailVerification,
  verifyEmailOperation,
  linkEmailOperation,
  unlinkEmailOperation,
];
