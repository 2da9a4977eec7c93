import { and, eq, like } from "drizzle-orm";
import type { Queryable } from "@/lib/db/client";
import { apiKeys } from "@/lib/db/schema";
import { decrypt, encrypt } from "@/lib/keys/encryption";
import type { Keyring } from "@/lib/keys/master";
import { log } from "@/lib/log";

/** The row a secret key's ciphertext belongs to. */
export interface SecretKeyRow {
  id: string;
  projectId: string;
  livemode: boolean;
}

/**
 * A secret key is sealed bound to its project, mode and key id (issue 29.14): a ciphertext copied
 * into another key's row, or into the other mode's, does not open, so live webhooks cannot be made
 * to sign with a test key.
 */
export const secretKeyAad = (key: SecretKeyRow) => `api-key:${key.projectId}:${key.livemode ? "live" : "test"}:${key.id}`;

/**
 * What migration 0028 put before every secret key sealed earlier, with the project id alone as AAD:
 * those (and only those) still open that way until resealed bound (resealLegacySecretKeys, at start,
 * or a master-key rotation). An unmarked ciphertext is always opened bound.
 */
export const LEGACY_SECRET_KEY_MARK = "project-bound:";

export const sealSecretKey = (secret: string, key: SecretKeyRow, ring?: Keyring) => encrypt(secret, secretKeyAad(key), ring);

export function openSecretKey(sealed: string, key: SecretKeyRow, ring?: Keyring): string {
  if (sealed.startsWith(LEGACY_SECRET_KEY_MARK)) return decrypt(sealed.slice(LEGACY_SECRET_KEY_MARK.length), key.projectId, ring);
  return decrypt(sealed, secretKeyAad(key), ring);
}

/**
 * Reseals bound every secret key still marked as sealed the old way, in batches; each row is
 * swapped only if it still holds what was read (another instance may be doing the same). Answers
 * how many it resealed. Run at every start: after the first, it finds none.
 */
export async function resealLegacySecretKeys(db: Queryable, batchSize = 200): Promise<number> {
  let resealed = 0;
  for (;;) {
    const rows = await db
      .select({ id: apiKeys.id, projectId: apiKeys.projectId, livemode: apiKeys.livemode, sealed: apiKeys.encryptedSecret })
      .from(apiKeys)
      .where(like(apiKeys.encryptedSecret, `${LEGACY_SECRET_KEY_MARK}%`))
      .limit(batchSize);
    let changed = 0;
    for (const row of rows) {
      const done = await db
        .update(apiKeys)
        .set({ encryptedSecret: sealSecretKey(openSecretKey(row.sealed!, row), row) })
        .where(and(eq(apiKeys.id, row.id), eq(apiKeys.encryptedSecret, row.sealed!)))
        .returning({ id: apiKeys.id });
      changed += done.length;
    }
    resealed += changed;
    if (rows.length < batchSize) break;
    if (changed === 0) {
      log.warn({ rows: rows.length }, "secret keys: resealing made no progress (rows changed meanwhile); left for the next start");
      break;
    }
  }
  return resealed;
}
