import crypto from "node:crypto";
import { bytesToHex } from "viem";
import { privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { derivationRoot } from "./master";

/** What a service key is for. Each purpose gets its own key. */
export type ServiceKeyPurpose = "paymaster-owner" | "paymaster-signer" | "guardian" | "beacon-admin" | `executor-${number}`;

const cache = globalThis as unknown as { __serviceKeys?: Map<string, PrivateKeyAccount> };

/**
 * The service's own signing keys (paymaster signer and owner, default guardian, beacon admin, relay executors)
 * are derived with HKDF from the derivation root (the master key, pinned by a rotation), so every
 * instance sharing it holds the same keys without storing or coordinating anything, and each
 * purpose's key is independent of the others.
 */
export function serviceAccount(purpose: ServiceKeyPurpose): PrivateKeyAccount {
  cache.__serviceKeys ??= new Map();
  let account = cache.__serviceKeys.get(purpose);
  if (!account) {
    const key = crypto.hkdfSync("sha256", derivationRoot(), "smart-wallet-service", `service-key:${purpose}`, 32);
    account = privateKeyToAccount(bytesToHex(new Uint8Array(key)));
    cache.__serviceKeys.set(purpose, account);
  }
  return account;
}
