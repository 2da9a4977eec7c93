import { bytesToHex } from "viem";
import { privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { derivedKey } from "./master";
import { processSingleton } from "@/lib/singleton";

/** What a service key is for. Each purpose gets its own key. */
export type ServiceKeyPurpose = "paymaster-owner" | "paymaster-signer" | "guardian" | "beacon-admin" | `executor-${number}`;

const cache = processSingleton("serviceKeys", () => new Map<string, PrivateKeyAccount>());

/**
 * The service's own signing keys (paymaster signer and owner, default guardian, beacon admin, relay executors)
 * are derived with HKDF from the derivation root (the master key, pinned by a rotation), so every
 * instance sharing it holds the same keys without storing or coordinating anything, and each
 * purpose's key is independent of the others.
 */
export function serviceAccount(purpose: ServiceKeyPurpose): PrivateKeyAccount {
  let account = cache.get(purpose);
  if (!account) {
    account = privateKeyToAccount(bytesToHex(derivedKey(`service-key:${purpose}`)));
    cache.set(purpose, account);
  }
  return account;
}
