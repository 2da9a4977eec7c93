import crypto from "node:crypto";
import { keyring, MasterKeyError, type Keyring, type MasterKey } from "./master";

export { derivationRoot, MasterKeyError } from "./master";

const b64 = (b: Buffer) => b.toString("base64url");

/**
 * AES-256-GCM under the encryption key derived from the current master key; the output is
 * `v2.<kid>.<iv>.<tag>.<ciphertext>` (base64url), the kid naming the master key, so data sealed
 * under several keys (during a rotation) decrypts without trying each.
 */
export function encrypt(plaintext: string, aad = "", ring: Keyring = keyring()): string {
  const { kid, encryptionKey } = ring.current;
  const iv = crypto.randomBytes(12);
  const cipher = crypto.createCipheriv("aes-256-gcm", encryptionKey, iv);
  cipher.setAAD(Buffer.from(aad));
  const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
  return ["v2", kid, b64(iv), b64(cipher.getAuthTag()), b64(body)].join(".");
}

function open(key: Buffer, iv: string, tag: string, body: string, aad: string): string {
  const decipher = crypto.createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64url"));
  decipher.setAAD(Buffer.from(aad));
  decipher.setAuthTag(Buffer.from(tag, "base64url"));
  return Buffer.concat([decipher.update(Buffer.from(body, "base64url")), decipher.final()]).toString("utf8");
}

const kids = (ring: Keyring) => ring.all.map((k) => k.kid).join(", ");

/** The master key a ciphertext is sealed under (`legacy` for v1, which has no kid). */
export const sealedKid = (sealed: string) => (sealed.startsWith("v2.") ? sealed.split(".")[1] : "legacy");

export function decrypt(sealed: string, aad = "", ring: Keyring = keyring()): string {
  const parts = sealed.split(".");
  if (parts[0] === "v2" && parts.length === 5) {
    const [, kid, iv, tag, body] = parts as [string, string, string, string, string];
    const key = ring.all.find((k) => k.kid === kid);
    if (!key) {
      throw new MasterKeyError(
        `This secret is sealed under master key ${kid}, which is not configured (configured: ${kids(ring)}). Set KEY_ENCRYPTION_KEY, or add the key to KEY_ENCRYPTION_KEYRING while rotating.`,
      );
    }
    try {
      return open(key.encryptionKey, iv, tag, body, aad);
    } catch {
      throw new MasterKeyError(`This secret does not authenticate under master key ${kid}: it was altered or belongs to another record.`);
    }
  }
  if (parts[0] === "v1" && parts.length === 4) return openLegacy(parts as [string, string, string, string], aad, ring.all);
  throw new MasterKeyError("unknown ciphertext format");
}

/** v1: sealed with a master key itself, before keys had ids: the first configured key that authenticates it. */
function openLegacy([, iv, tag, body]: [string, string, string, string], aad: string, keys: MasterKey[]): string {
  for (const key of keys) {
    try {
      return open(key.raw, iv, tag, body, aad);
    } catch {
      // not this key
    }
  }
  throw new MasterKeyError(`This secret (legacy format) authenticates under none of the configured master keys (${keys.map((k) => k.kid).join(", ")}): set the master key it was sealed with.`);
}

export const sha256 = (value: string) => crypto.createHash("sha256").update(value).digest("hex");

/** Whether two secrets' texts are equal, compared in constant time (only their lengths may tell). */
export function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && crypto.timingSafeEqual(x, y);
}
