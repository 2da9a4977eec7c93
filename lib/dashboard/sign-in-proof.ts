import crypto from "node:crypto";
import { jwtVerify, SignJWT } from "jose";
import type { Queryable } from "@/lib/db/client";
import { rateLimitCounters } from "@/lib/db/schema";
import { getDeveloper, type DeveloperRow } from "@/lib/developers/service";
import { derivedKey } from "@/lib/keys/master";

/**
 * The sign-in page checks the password first (checkSignIn: an answer with a message, the lock-out said as such), then
 * signs in through next-auth. A proof of that check, not the password, goes to next-auth's authorize, so one sign-in
 * hashes the password once (a memory-hard hash: twice would double what a guesser costs us, not them).
 * The proof lasts a minute, names the developer and the email, and is taken once.
 */
const PROOF_SECONDS = 60;
const AUDIENCE = "dashboard-sign-in";

const proofKey = () => derivedKey("dashboard-sign-in-proof");

export async function issueSignInProof(developer: Pick<DeveloperRow, "id" | "email">): Promise<string> {
  return new SignJWT({ email: developer.email })
    .setProtectedHeader({ alg: "HS256" })
    .setSubject(developer.id)
    .setAudience(AUDIENCE)
    .setJti(crypto.randomUUID())
    .setIssuedAt()
    .setExpirationTime(`${PROOF_SECONDS}s`)
    .sign(proofKey());
}

/** The developer a proof names, if it is valid, for this email, and not taken before; null otherwise. */
export async function takeSignInProof(db: Queryable, proof: string, email: string): Promise<DeveloperRow | null> {
  let payload;
  try {
    ({ payload } = await jwtVerify(proof, proofKey(), { algorithms: ["HS256"], audience: AUDIENCE }));
  } catch {
    return null;
  }
  if (payload.email !== email || !payload.sub || !payload.jti || !payload.exp) return null;
  // Taken once, on every instance: a row in the shared rate-limit table, removed by its cleanup once the proof expired.
  const [taken] = await db
    .insert(rateLimitCounters)
    .values({ bucket: `sign-in-proof:${payload.jti}`, windowStart: 0, expiresAt: payload.exp * 1000, hits: 1 })
    .onConflictDoNothing()
    .returning({ bucket: rateLimitCounters.bucket });
  if (!taken) return null;
  const developer = await getDeveloper(db, payload.sub);
  return developer && developer.email === email ? developer : null;
}
