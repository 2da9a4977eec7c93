import type { Address } from "viem";
import { unavailable } from "@/lib/errors";
import { serviceAccount } from "@/lib/keys/service-keys";
import { chainKey, onChain, publicClient } from "./clients";
import { deploymentAddresses, type Deployment } from "./deployment";
import { chainEntryPoints, type ChainConfig, type EntryPointVersion } from "./registry";

/** Our contracts' addresses: the same on every chain (CREATE2), the paymaster's specific to this installation's keys. */
export function serviceDeployment(): Deployment {
  const keys = installationKeys();
  const key = `${keys.paymasterOwner}:${keys.paymasterSigner}:${keys.beaconAdmin}`;
  // Hashing the init codes on every call would cost each request several keccaks of kilobytes.
  if (memo?.key !== key) memo = { key, deployment: deploymentAddresses(keys) };
  return memo.deployment;
}

let memo: { key: string; deployment: Deployment } | undefined;

/** The EntryPoint of a version (canonical addresses, the same on every chain). */
export function entryPointOf(version: EntryPointVersion): Address {
  const d = serviceDeployment();
  return version === "0.6" ? d.entryPoint : d.entryPointV08;
}

/** The EntryPoints the chain offers, as configured (chainEntryPoints), v0.6 first. */
export const offeredEntryPoints = (chain: ChainConfig): { version: EntryPointVersion; address: Address }[] =>
  chainEntryPoints(chain).map((version) => ({ version, address: entryPointOf(version) }));

/**
 * Our verifying paymasters on the chain, one per EntryPoint version it offers: each has its own deposit at its own
 * EntryPoint, and both spend the projects' one sponsorship balance per chain.
 */
export function ourPaymasters(chain: ChainConfig): { version: EntryPointVersion; entryPoint: Address; paymaster: Address }[] {
  const d = serviceDeployment();
  return chainEntryPoints(chain).map((version) =>
    version === "0.6" ? { version, entryPoint: d.entryPoint, paymaster: d.paymaster } : { version, entryPoint: d.entryPointV08, paymaster: d.paymasterV08 },
  );
}

/** The service keys our contract addresses depend on. */
export const installationKeys = () => ({
  paymasterOwner: serviceAccount("paymaster-owner").address,
  paymasterSigner: serviceAccount("paymaster-signer").address,
  beaconAdmin: serviceAccount("beacon-admin").address,
});

/** When our factory was last seen deployed, per chain: looked up again after DEPLOYMENT_SEEN_MS (a dev chain may be reset). */
const deploymentSeen = new Map<string, number>();
const DEPLOYMENT_SEEN_MS = 5_000;

/** Refuses work that needs our contracts on a chain where they are not deployed. */
export async function requireDeployment(chain: ChainConfig): Promise<Deployment> {
  const deployment = serviceDeployment();
  const key = chainKey(chain);
  if (Date.now() - (deploymentSeen.get(key) ?? -Infinity) < DEPLOYMENT_SEEN_MS) return deployment;
  const code = await onChain(chain, () => publicClient(chain).getCode({ address: deployment.accountFactory }));
  if (!code || code === "0x") {
    throw unavailable(`Our contracts are not deployed on chain ${chain.chainId} yet. The operator deploys them with: npm run cli -- chain deploy --chain ${chain.chainId}`);
  }
  deploymentSeen.set(key, Date.now());
  return deployment;
}
