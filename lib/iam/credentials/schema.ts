import { z } from "zod";
import { badRequest } from "@/lib/errors";
import { documentedAs, textField } from "@/lib/http/fields";
import { authPlayerResponse } from "@/lib/iam/identities";

export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 128;
export const PASSWORD_RULE = `A password has ${PASSWORD_MIN} to ${PASSWORD_MAX} characters.`;

/**
 * A password as the request carries it: any string. Its rules are checked by `checkPassword` in
 * the operation, because a failed schema check echoes the value back in the error's details, and
 * a password (even a wrong one) is never sent back.
 */
const passwordField = () => {
  const schema = z.string();
  documentedAs.set(schema, { type: "string", format: "password", minLength: PASSWORD_MIN, maxLength: PASSWORD_MAX });
  return schema;
};

/** Throws the 400 of a password that breaks the rules (length counted in characters, not UTF-16 units). */
export function checkPassword(password: string, param = "password") {
  const length = password.length > PASSWORD_MAX * 2 ? Infinity : [...password].length;
  if (length < PASSWORD_MIN || length > PASSWORD_MAX) throw badRequest(`Invalid parameter ${param}: ${PASSWORD_RULE}`, { [param]: { message: PASSWORD_RULE } });
}

const email = () => z.email().max(320);
/** Opaque tokens this service made (refresh, reset, verification): bounded, so a flood is a 400. */
const opaqueToken = () => z.string().min(1).max(512);

export const signupInput = z.strictObject({
  email: email(),
  password: passwordField(),
  name: textField(255).min(1),
  description: textField(1000).optional(),
});

export const loginInput = z.strictObject({ email: email(), password: passwordField() });

export const refreshInput = z.strictObject({ refreshToken: opaqueToken() });

export const logoutInput = z.strictObject({ refreshToken: opaqueToken().optional() });

export const tokenQueryInput = z.strictObject({ token: z.string().min(1).max(4096) });

export const emailInput = z.strictObject({ email: email() });

export const resetPasswordInput = z.strictObject({ token: opaqueToken(), password: passwordField() });

export const verifyEmailInput = z.strictObject({ token: opaqueToken() });

export const linkEmailInput = loginInput;

export const emptyInput = z.strictObject({});

/** Sign-up, login and refresh: the player, a player token (JWT) and the refresh token that renews it. */
export const authResponse = z.object({
  player: authPlayerResponse,
  token: z.string(),
  refreshToken: z.string(),
});

/** The spec's auth-token verification result. */
export const tokenVerificationResponse = z.object({
  projectId: z.string(),
  expiration: z.number().int(),
  issuedAt: z.number().int(),
  issuer: z.string(),
  sessionId: z.string(),
  playerId: z.string(),
  livemode: z.boolean(),
});

export const jwksResponse = z.object({ keys: z.array(z.record(z.string(), z.unknown())) });

export const logoutResponse = z.object({ id: z.string(), object: z.literal("player_session"), revoked: z.literal(true) });

/** A single-use token for the game's backend to deliver to the player (this service sends no email). */
export const credentialTokenResponse = (object: string) =>
  z.object({
    object: z.literal(object),
    email: z.string(),
    playerId: z.string(),
    token: z.string(),
    expiresAt: z.number().int(),
  });

export type SignupInput = z.output<typeof signupInput>;
export type LoginInput = z.output<typeof loginInput>;
