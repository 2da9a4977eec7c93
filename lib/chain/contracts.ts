import { formatEther, parseEther, toHex, type Account, type Address } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { entryPointAbi } from "@/contracts/artifacts";
import { ApiError } from "@/lib/http/errors";
import { serviceAccount } from "@/lib/keys/service-keys";
import { ensureLocalExchange, type LocalExchange } from "@/lib/exchange/deployment";
import { chainKey, onChain, publicClient, walletClient } from "./clients";
import { deploymentAddresses, ensureDeployment, type Deployment } from "./deployment";
import { ensureLocalPriceFeed } from "./price-feed";
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
const installationKeys = () => ({
  paymasterOwner: serviceAccount("paymaster-owner").address,
  paymasterSigner: serviceAccount("paymaster-signer").address,
  beaconAdmin: serviceAccount("beacon-admin").address,
});

/** Local chains get a large paymaster deposit so sponsored operations just work. */
const LOCAL_PAYMASTER_DEPOSIT = parseEther("1000");

export interface ChainPreparation {
  chainId: number;
  deployed: string[];
  paymasterDeposit: string;
  /** The local exchange (Uniswap v2 and demo tokens) on a development chain without a configured router. */
  exchange?: LocalExchange;
}

/**
 * Deploys whatever of our contracts is missing on the chain (with its deployer key) and, on
 * local chains, tops up the paymaster's EntryPoint deposit. Run at start, never per request.
 */
export async function prepareChain(chain: ChainConfig): Promise<ChainPreparation> {
  const client = publicClient(chain);
  let deployed: string[] = [];
  let exchange: LocalExchange | undefined;
  const deployer = await deployerFor(chain);
  if (deployer) {
    const wallet = walletClient(chain, deployer);
    const result = await ensureDeployment(client, wallet, installationKeys());
    deployed = result.deployed;
    if (chain.dev) {
      // Both paymasters (v0.6 and v0.8), each at its own EntryPoint.
      for (const { entryPoint, paymaster } of ourPaymasters(chain)) {
        const balance = await client.readContract({ address: entryPoint, abi: entryPointAbi, functionName: "balanceOf", args: [paymaster] });
        if (balance >= LOCAL_PAYMASTER_DEPOSIT / 2n) continue;
        const hash = await wallet.writeContract({ address: entryPoint, abi: entryPointAbi, functionName: "depositTo", args: [paymaster], value: LOCAL_PAYMASTER_DEPOSIT });
        await client.waitForTransactionReceipt({ hash });
      }
      // The dev chain's USD price (lib/sponsorship/prices) out of the box.
      if (await ensureLocalPriceFeed(client, wallet)) deployed = [...deployed, "TestPriceFeed"];
      if (!chain.router) {
        const local = await ensureLocalExchange(client, wallet);
        deployed = [...deployed, ...local.deployed];
        exchange = local.exchange;
      }
    }
  }
  let deposit = 0n;
  for (const { entryPoint, paymaster } of ourPaymasters(chain)) {
    deposit += await client.readContract({ address: entryPoint, abi: entryPointAbi, functionName: "balanceOf", args: [paymaster] });
  }
  return { chainId: chain.chainId, deployed, paymasterDeposit: formatEther(deposit), ...(exchange && { exchange }) };
}

/**
 * Who deploys: the configured key, or on a dev chain a fresh key funded with anvil_setBalance
 * (so several processes preparing one chain never race for a shared key's nonces).
 */
async function deployerFor(chain: ChainConfig): Promise<Account | null> {
  if (chain.deployerKey) return privateKeyToAccount(chain.deployerKey);
  if (!chain.dev) return null;
  const account = privateKeyToAccount(generatePrivateKey());
  await publicClient(chain).request({ method: "anvil_setBalance" as never, params: [account.address, toHex(parseEther("100000"))] as never });
  return account;
}

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
    throw new ApiError(
      503,
      "api_error",
      `Our contracts are not deployed on chain ${chain.chainId} yet. The operator deploys them with: npm run cli -- chain deploy --chain ${chain.chainId}`,
    );
  }
  deploymentSeen.set(key, Date.now());
  return deployment;
}
