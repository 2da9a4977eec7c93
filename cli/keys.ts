import crypto from "node:crypto";
import fs from "node:fs";
import { EmbeddedDatabaseBusy, getDb } from "@/lib/db/client";
import { reencryptAll, type RotationReport } from "@/lib/key-rotation";
import { embeddedKeyFiles, keyring, parseMasterKey, reloadKeyring } from "@/lib/keys/master";
import { environment, type SettingsEnv } from "@/lib/config";

export interface RotationResult {
  kid: string;
  previous: string[];
  columns: RotationReport[];
}

const writeSecret = (file: string, value: string) => {
  // Written beside, then renamed: a crash leaves the old file or the new one, never half of one.
  fs.writeFileSync(`${file}.tmp`, value, { mode: 0o600 });
  fs.renameSync(`${file}.tmp`, file);
};

/**
 * `keys rotate-master`. With KEY_ENCRYPTION_KEY set (servers configured by environment), the
 * servers already hold the new key as KEY_ENCRYPTION_KEY and the old one in KEY_ENCRYPTION_KEYRING
 * (docs/operating.md: Rotating the master key): this re-encrypts every secret under the new one. In the
 * embedded default it does all of it on .data/: pins the service keys' derivation root, makes
 * KEY_ENCRYPTION_KEY_NEW (or a generated key) current with the old one in the keyring,
 * re-encrypts, then drops the old key.
 */
export async function rotateMaster(env: SettingsEnv = environment()): Promise<RotationResult> {
  if (env.KEY_ENCRYPTION_KEY) {
    if (env.KEY_ENCRYPTION_KEY_NEW) {
      throw new Error(
        "KEY_ENCRYPTION_KEY is set: the servers' environment holds the keys. Make the new key KEY_ENCRYPTION_KEY and the old one KEY_ENCRYPTION_KEYRING on every server first, then run this with that environment (docs/operating.md: Rotating the master key).",
      );
    }
    const ring = keyring();
    const columns = await reencryptAll(await getDb(), ring);
    return { kid: ring.current.kid, previous: ring.all.slice(1).map((k) => k.kid), columns };
  }

  let db;
  try {
    db = await getDb(); // takes the embedded database before touching its keys
  } catch (err) {
    if (err instanceof EmbeddedDatabaseBusy) {
      throw new Error("The embedded database is in use by the running server: stop it, rotate, start it again (rotating without downtime needs DATABASE_URL and keys in the environment).");
    }
    throw err;
  }
  const files = embeddedKeyFiles();
  const old = keyring();
  const next = env.KEY_ENCRYPTION_KEY_NEW ? parseMasterKey(env.KEY_ENCRYPTION_KEY_NEW, "KEY_ENCRYPTION_KEY_NEW") : crypto.randomBytes(32);
  if (!fs.existsSync(files.derivation)) writeSecret(files.derivation, old.derivationRoot.toString("base64"));
  const keep = old.all.filter((k) => !k.raw.equals(next)).map((k) => k.raw.toString("base64"));
  writeSecret(files.keyring, `${keep.join("\n")}\n`);
  writeSecret(files.current, next.toString("base64"));
  reloadKeyring();
  const ring = keyring();
  const columns = await reencryptAll(db, ring);
  // Nothing is sealed under the old keys any more.
  fs.rmSync(files.keyring, { force: true });
  reloadKeyring();
  return { kid: ring.current.kid, previous: old.all.map((k) => k.kid), columns };
}

export function describeRotation(result: RotationResult): string {
  return [
    `Every secret is now sealed under master key ${result.kid}${result.previous.length ? ` (was: ${result.previous.join(", ")})` : ""}:`,
    ...result.columns.map((c) => `  ${c.column.padEnd(40)} ${c.reencrypted} re-encrypted`),
  ].join("\n");
}
