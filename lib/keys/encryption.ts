import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { dataDir } from "@/lib/config";

const state = globalThis as unknown as { __masterKey?: Buffer };

/**
 * The master key: `KEY_ENCRYPTION_KEY` (32 bytes, base64 or hex), or in the embedded default
 * one generated once into `.data/master.key`.
 */
export function masterKey(): Buffer {
  if (state.__masterKey) return state.__masterKey;
  const configured = process.env.KEY_ENCRYPTION_KEY;
  let key: Buffer;
  if (configured) {
    key = /^[0-9a-fA-F]{64}$/.test(configured) ? Buffer.from(configured, "hex") : Buffer.from(configured, "base64");
    if (key.length !== 32) throw new Error("KEY_ENCRYPTION_KEY must be 32 bytes (64 hex characters or base64)");
  } else {
    const file = path.join(dataDir(), "master.key");
    fs.mkdirSync(dataDir(), { recursive: true });
    try {
      fs.writeFileSync(file, crypto.randomBytes(32).toString("base64"), { flag: "wx", mode: 0o600 });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
    key = Buffer.from(fs.readFileSync(file, "utf8").trim(), "base64");
  }
  state.__masterKey = key;
  return key;
}

/** AES-256-GCM; the output is `v1.<iv>.<tag>.<ciphertext>` in base64url. */
export function encrypt(plaintext: string, aad = ""): string {
  const iv = crypto.randomBytes(12);
  const cipher = crypto.createCipheriv("aes-256-gcm", masterKey(), iv);
  cipher.setAAD(Buffer.from(aad));
  const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
  return ["v1", iv, cipher.getAuthTag(), body].map((p) => (typeof p === "string" ? p : p.toString("base64url"))).join(".");
}

export function decrypt(sealed: string, aad = ""): string {
  const [version, iv, tag, body] = sealed.split(".");
  if (version !== "v1" || !iv || !tag || body === undefined) throw new Error("unknown ciphertext format");
  const decipher = crypto.createDecipheriv("aes-256-gcm", masterKey(), Buffer.from(iv, "base64url"));
  decipher.setAAD(Buffer.from(aad));
  decipher.setAuthTag(Buffer.from(tag, "base64url"));
  return Buffer.concat([decipher.update(Buffer.from(body, "base64url")), decipher.final()]).toString("utf8");
}

export const sha256 = (value: string) => crypto.createHash("sha256").update(value).digest("hex");
