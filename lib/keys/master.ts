import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { dataDir, environment, type SettingsEnv } from "@/lib/config";
import { processSingleton } from "@/lib/singleton";

/**
 * The master keys, from the environment or, in the embedded default, from files in `.data/`:
 * - `KEY_ENCRYPTION_KEY` (`.data/master.key`, generated once): encrypts new secrets.
 * - `KEY_ENCRYPTION_KEYRING` (comma-separated; `.data/master.keyring`, one a line): further
 *   master keys that only decrypt, the old one or the next one while rotating.
 * - `KEY_DERIVATION_SEED` (`.data/derivation.key`): what the service's own keys (paymaster,
 *   guardian, executors, signing links, dashboard sessions) are derived from. They hold funds and
 *   on-chain roles, so they must outlive a master key: this defaults to the master key, and
 *   rotating pins it to the key they were derived from.
 */
export interface Keyring {
  current: MasterKey;
  /** Every key that may decrypt, the current one first. */
  all: MasterKey[];
  derivationRoot: Buffer;
}

export interface MasterKey {
  /** A short public name of the key, written into each ciphertext it seals. */
  kid: string;
  /** The AES-256-GCM key derived from it, for secrets at rest only. */
  encryptionKey: Buffer;
  /** The master key itself: legacy ciphertexts (v1) were sealed with it directly. */
  raw: Buffer;
}

export class MasterKeyError extends Error {}

const SALT = "smart-wallet-service";
const state = processSingleton("keyring", () => ({ keyring: undefined as Keyring | undefined }));

export function parseMasterKey(value: string, name: string): Buffer {
  const text = value.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(text) ? Buffer.from(text, "hex") : Buffer.from(text, "base64");
  if (key.length !== 32) throw new MasterKeyError(`${name} must be 32 bytes (64 hex characters or base64)`);
  return key;
}

export function masterKeyOf(raw: Buffer): MasterKey {
  const derive = (info: string, length: number) => Buffer.from(crypto.hkdfSync("sha256", raw, SALT, info, length));
  return { raw, encryptionKey: derive("encryption v1", 32), kid: derive("key id v1", 4).toString("hex") };
}

export const embeddedKeyFiles = (dir = dataDir()) => ({
  current: path.join(dir, "master.key"),
  keyring: path.join(dir, "master.keyring"),
  derivation: path.join(dir, "derivation.key"),
});

const readIfExists = (file: string) => {
  try {
    return fs.readFileSync(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
};

function embeddedCurrent(file: string): Buffer {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  try {
    fs.writeFileSync(file, crypto.randomBytes(32).toString("base64"), { flag: "wx", mode: 0o600 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
  }
  return parseMasterKey(fs.readFileSync(file, "utf8"), file);
}

export function loadKeyring(env: SettingsEnv = environment(), dir = dataDir()): Keyring {
  const files = embeddedKeyFiles(dir);
  const current = env.KEY_ENCRYPTION_KEY ? parseMasterKey(env.KEY_ENCRYPTION_KEY, "KEY_ENCRYPTION_KEY") : embeddedCurrent(files.current);
  const others = (env.KEY_ENCRYPTION_KEYRING !== undefined ? env.KEY_ENCRYPTION_KEYRING.split(",") : (readIfExists(files.keyring)?.split("\n") ?? []))
    .map((k) => k.trim())
    .filter(Boolean)
    .map((k) => parseMasterKey(k, "a KEY_ENCRYPTION_KEYRING key"));
  const seed = env.KEY_DERIVATION_SEED ?? readIfExists(files.derivation);
  if (!seed && others.length) {
    // With a keyring the current key may be a new one: deriving from it would change the paymaster and executor keys.
    throw new MasterKeyError("KEY_ENCRYPTION_KEYRING is set but KEY_DERIVATION_SEED is not: set it to the master key the service keys were derived from (the first KEY_ENCRYPTION_KEY).");
  }
  const all = [current, ...others.filter((k) => !k.equals(current))].map(masterKeyOf);
  return { current: all[0]!, all, derivationRoot: seed ? parseMasterKey(seed, "KEY_DERIVATION_SEED") : current };
}

/** This process's keyring, loaded once. */
export function keyring(): Keyring {
  state.keyring ??= loadKeyring();
  return state.keyring;
}

/** Forgets the loaded keyring, so the next use reads the configuration again (after a rotation). */
export function reloadKeyring() {
  state.keyring = undefined;
}

/** The secret the service's own keys are derived from with HKDF (see Keyring). */
export const derivationRoot = () => keyring().derivationRoot;

/** The service's 32-byte key for one purpose (`info`), derived from the root: independent of every other purpose's. */
export const derivedKey = (info: string): Uint8Array => new Uint8Array(crypto.hkdfSync("sha256", derivationRoot(), "smart-wallet-service", info, 32));
