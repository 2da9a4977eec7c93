import { and, desc, eq, gt, isNull, or, sql } from "drizzle-orm";
import { decodeProtectedHeader, exportJWK, generateKeyPair, importJWK, jwtVerify, SignJWT, type JWK } from "jose";
import type { Queryable } from "@/lib/db/client";
import { playerTokenKeys } from "@/lib/db/schema";
import { inScope } from "@/lib/db/scope";
import { newId } from "@/lib/ids";
import { decrypt, encrypt } from "@/lib/keys/encryption";
import type { ProjectContext } from "@/lib/tenant";
import { envNumber, envText } from "@/lib/config";

/** Player tokens live this long; a retired signing key stays published as long, so tokens it signed still verify. */
export const PLAYER_TOKEN_TTL_SECONDS = envNumber("PLAYER_TOKEN_TTL_SECONDS", 3600, { min: 0 });
/** The `iss` of every player token (also what /iam/v1/verify answers as `issuer`). */
export const playerTokenIssuer = () => envText("PLAYER_TOKEN_ISSUER") ?? "smart-wallet-service";

const ALG = "ES256";
/** The AAD a private key is sealed with (lib/key-rotation.ts reseals them with it). */
export const tokenKeyAad = (kid: string) => `player-token-key:${kid}`;
const aad = tokenKeyAad;

type KeyRow = typeof playerTokenKeys.$inferSelect;

async function createKey(db: Queryable, ctx: ProjectContext): Promise<KeyRow> {
  const id = newId("playerTokenKey");
  const { publicKey, privateKey } = await generateKeyPair(ALG, { extractable: true });
  const publicJwk = { ...(await exportJWK(publicKey)), kid: id, alg: ALG, use: "sig" } as Record<string, unknown>;
  const encryptedPrivateJwk = encrypt(JSON.stringify(await exportJWK(privateKey)), aad(id));
  const [row] = await db.insert(playerTokenKeys).values({ id, ...ctx, publicJwk, encryptedPrivateJwk }).returning();
  return row!;
}

/** The mode's current signing key, made on first use. */
async function activeKey(db: Queryable, ctx: ProjectContext): Promise<KeyRow> {
  const [row] = await db
    .select()
    .from(playerTokenKeys)
    .where(inScope(playerTokenKeys, ctx, isNull(playerTokenKeys.retiredAt)))
    .orderBy(desc(playerTokenKeys.createdAt))
    .limit(1);
  return row ?? createKey(db, ctx);
}

/** A new signing key for the mode; the old ones stop signing at once and stay in the JWKS until their tokens expire. */
export async function rotateTokenKey(db: Queryable, ctx: ProjectContext): Promise<{ kid: string }> {
  await db
    .update(playerTokenKeys)
    .set({ retiredAt: sql`now()` })
    .where(inScope(playerTokenKeys, ctx, isNull(playerTokenKeys.retiredAt)));
  const row = await createKey(db, ctx);
  return { kid: row.id };
}

/** The public keys that verify the mode's player tokens: the current one and those retired less than a token's lifetime ago. */
export async function tokenJwks(db: Queryable, ctx: ProjectContext): Promise<{ keys: JWK[] }> {
  await activeKey(db, ctx);
  const rows = await db
    .select({ publicJwk: playerTokenKeys.publicJwk })
    .from(playerTokenKeys)
    .where(
      inScope(
        playerTokenKeys,
        ctx,
        or(isNull(playerTokenKeys.retiredAt), gt(playerTokenKeys.retiredAt, sql`now() - make_interval(secs => ${PLAYER_TOKEN_TTL_SECONDS})`)),
      ),
    )
    .orderBy(desc(playerTokenKeys.createdAt));
  return { keys: rows.map((r) => r.publicJwk as JWK) };
}

export interface PlayerTokenClaims {
  projectId: string;
  livemode: boolean;
  playerId: string;
  sessionId: string;
  issuedAt: number;
  expiration: number;
  issuer: string;
  /** When the player signed in (opened the session), seconds: refreshes keep it, so link and unlink can ask for a recent one. */
  authTime: number;
}

/** A player token: ES256 JWT, `sub` the player, `aud` the project, `sid` the session, `livemode`, `auth_time` the sign-in. */
export async function issuePlayerToken(db: Queryable, ctx: ProjectContext, playerId: string, sessionId: string, signedInAt = new Date()): Promise<string> {
  const key = await activeKey(db, ctx);
  const privateKey = await importJWK(JSON.parse(decrypt(key.encryptedPrivateJwk, aad(key.id))) as JWK, ALG);
  return new SignJWT({ sid: sessionId, livemode: ctx.livemode, auth_time: Math.floor(signedInAt.getTime() / 1000) })
    .setProtectedHeader({ alg: ALG, kid: key.id, typ: "JWT" })
    .setIssuer(playerTokenIssuer())
    .setAudience(ctx.projectId)
    .setSubject(playerId)
    .setIssuedAt()
    .setExpirationTime(`${PLAYER_TOKEN_TTL_SECONDS}s`)
    .sign(privateKey);
}

export class InvalidPlayerToken extends Error {}

/**
 * Checks a player token's signature against the key its `kid` names (which also gives its project
 * and mode), its issuer, audience and expiry. Says nothing about whether its session was revoked:
 * `verifyPlayerSession` does.
 */
export async function verifyPlayerToken(db: Queryable, token: string): Promise<PlayerTokenClaims> {
  let kid: string | undefined;
  try {
    kid = decodeProtectedHeader(token).kid;
  } catch {
    throw new InvalidPlayerToken("not a JWT");
  }
  if (!kid || kid.length > 100) throw new InvalidPlayerToken("no key id");
  const [key] = await db
    .select()
    .from(playerTokenKeys)
    .where(and(eq(playerTokenKeys.id, kid), or(isNull(playerTokenKeys.retiredAt), gt(playerTokenKeys.retiredAt, sql`now() - make_interval(secs => ${PLAYER_TOKEN_TTL_SECONDS})`))));
  if (!key) throw new InvalidPlayerToken("unknown signing key");
  try {
    const { payload } = await jwtVerify(token, await importJWK(key.publicJwk as JWK, ALG), { algorithms: [ALG], issuer: playerTokenIssuer(), audience: key.projectId });
    if (typeof payload.sub !== "string" || typeof payload.sid !== "string" || payload.livemode !== key.livemode) throw new InvalidPlayerToken("missing claims");
    const authTime = typeof payload.auth_time === "number" ? payload.auth_time : payload.iat!;
    return { projectId: key.projectId, livemode: key.livemode, playerId: payload.sub, sessionId: payload.sid, issuedAt: payload.iat!, expiration: payload.exp!, issuer: payload.iss!, authTime };
  } catch (err) {
    if (err instanceof InvalidPlayerToken) throw err;
    throw new InvalidPlayerToken((err as { code?: string }).code === "ERR_JWT_EXPIRED" ? "expired" : "signature or claims do not verify");
  }
}
