import { count, eq } from "drizzle-orm";
import { BaseError, ContractFunctionRevertedError, formatEther, getAddress, isAddress, parseEther, toHex, type Address, type Hash } from "viem";
import { managedAccountFactoryAbi, managedBeaconAbi, smartAccountAbi } from "@/contracts/artifacts";
import { onChain, publicClient, walletClient } from "@/lib/chain/clients";
import { requireDeployment } from "@/lib/chain/contracts";
import { ENTRY_POINT_V06 } from "@/lib/chain/deployment";
import { beaconAdmin, beaconKey, managedBeaconAddress } from "@/lib/chain/managed";
import { chainFor, supportedChains, type ChainConfig } from "@/lib/chain/registry";
import type { Queryable } from "@/lib/db/client";
import { accounts } from "@/lib/db/schema";
import { inScope } from "@/lib/db/scope";
import { ApiError, badRequest, conflict, unavailable } from "@/lib/errors";
import type { ProjectContext } from "@/lib/tenant";

/**
 * The upgrade of a project's ManagedV5 accounts: one `upgradeTo` on the project's beacon, sent by the installation's
 * beacon admin key, moves every managed account of the project on that chain to the new implementation at once.
 * The CLI (`accounts upgrade-managed`) and the dashboard both call upgradeManagedAccounts.
 */

export interface ManagedBeaconStatus {
  chainId: number;
  chainName: string;
  beacon: Address;
  /** False until the project's first managed account (or an upgrade) deploys it on this chain. */
  deployed: boolean;
  /** What the project's managed accounts run on this chain (the SmartAccount implementation until an upgrade). */
  implementation: Address;
  /** Whether `implementation` is the service's own SmartAccount implementation. */
  original: boolean;
  /** The project's ManagedV5 accounts recorded on this chain (deployed or not). */
  accounts: number;
}

export interface ManagedUpgrade {
  projectId: string;
  chainId: number;
  beacon: Address;
  previousImplementation: Address;
  implementation: Address;
  /** The `upgradeTo` transaction; null when the beacon already used `implementation`. */
  transactionHash: Hash | null;
  /** The transaction that deployed the beacon first, when no managed account had yet. */
  beaconTransactionHash: Hash | null;
}

const hasCode = async (chain: ChainConfig, address: Address) => {
  const code = await publicClient(chain).getCode({ address });
  return code !== undefined && code !== "0x";
};


/** The project's beacon on each chain of its mode, for the dashboard. */
export async function managedBeacons(db: Queryable, ctx: ProjectContext): Promise<(ManagedBeaconStatus | { chainId: number; chainName: string; error: string })[]> {
  const beacon = managedBeaconAddress(ctx.projectId);
  const counts = await db
    .select({ chainId: accounts.chainId, n: count() })
    .from(accounts)
    .where(inScope(accounts, ctx, eq(accounts.accountType, "ManagedV5")))
    .groupBy(accounts.chainId);
  const chains = supportedChains().filter((c) => c.livemode === ctx.livemode);
  return Promise.all(
    chains.map(async (chain) => {
      try {
        const deployment = await requireDeployment(chain);
        const deployed = await onChain(chain, () => hasCode(chain, beacon));
        // Before its deployment, the implementation the beacon will start with.
        const implementation = deployed
          ? await onChain(chain, () => publicClient(chain).readContract({ address: beacon, abi: managedBeaconAbi, functionName: "implementation" }))
          : deployment.accountImplementation;
        return {
          chainId: chain.chainId,
          chainName: chain.name,
          beacon,
          deployed,
          implementation,
          original: implementation === deployment.accountImplementation,
          accounts: counts.find((c) => c.chainId === chain.chainId)?.n ?? 0,
        };
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        return { chainId: chain.chainId, chainName: chain.name, error: err.message };
      }
    }),
  );
}

/** What a UUPS implementation's proxiableUUID() answers (ERC-1822 / ERC-1967). */
const ERC1967_IMPLEMENTATION_SLOT = "0x360894a13ba1a3210667c828492db98dca3e2076cc3735a920a3ca505d382bbc";

const refuse = (implementation: string, message: string) =>
  badRequest(message, { implementation: { value: implementation, message } });

/**
 * Refuses what would brick every managed account of the project: an address without code, a contract that is not
 * an account of our EntryPoint, or a proxy (an account's address passes the first two checks; behind the beacon it
 * would delegate in circles). UUPS implementations answer `proxiableUUID()` themselves, proxies to them refuse it.
 */
async function checkImplementation(chain: ChainConfig, implementation: Address) {
  const client = publicClient(chain);
  if (!(await hasCode(chain, implementation))) {
    throw refuse(implementation, `implementation ${implementation} has no code on chain ${chain.chainId}; deploy the new account implementation there first.`);
  }
  const entryPoint = await client.readContract({ address: implementation, abi: smartAccountAbi, functionName: "entryPoint" }).catch(() => null);
  if (entryPoint === null || getAddress(entryPoint) !== ENTRY_POINT_V06) {
    throw refuse(
      implementation,
      `implementation ${implementation} is not an account implementation of our EntryPoint ${ENTRY_POINT_V06} (its entryPoint() ${entryPoint === null ? "does not answer" : `is ${entryPoint}`}); every managed account would stop working.`,
    );
  }
  const uuid = await client.readContract({ address: implementation, abi: smartAccountAbi, functionName: "proxiableUUID" }).catch(() => null);
  if (uuid === null || uuid !== ERC1967_IMPLEMENTATION_SLOT) {
    throw refuse(
      implementation,
      `implementation ${implementation} does not answer proxiableUUID() with the ERC-1967 implementation slot itself: it is a proxy (an account's address?) or not a UUPS account implementation; give the implementation contract's address.`,
    );
  }
}

/** On a dev chain the admin key is funded like the relay executors; elsewhere someone must send it ETH. */
async function fundAdmin(chain: ChainConfig, gas: bigint) {
  const client = publicClient(chain);
  const admin = beaconAdmin().address;
  const balance = await client.getBalance({ address: admin });
  const { maxFeePerGas } = await client.estimateFeesPerGas();
  const needed = gas * maxFeePerGas;
  if (balance >= needed) return;
  if (chain.dev) {
    await client.request({ method: "anvil_setBalance" as never, params: [admin, toHex(parseEther("10"))] as never });
    return;
  }
  throw unavailable(`The beacon admin ${admin} needs ETH on chain ${chain.chainId} (${chain.name}) to send the upgrade: it has ${formatEther(balance)}, about ${formatEther(needed)} is needed. Send ETH to ${admin} and retry.`);
}

/** Sends one call from the beacon admin and waits for its receipt; a revert names the contract's error. */
async function sendAsAdmin(
  chain: ChainConfig,
  call: { address: Address; abi: typeof managedBeaconAbi | typeof managedAccountFactoryAbi; functionName: string; args: readonly unknown[] },
): Promise<Hash> {
  const client = publicClient(chain);
  const account = beaconAdmin();
  let gas: bigint;
  try {
    gas = await client.estimateContractGas({ ...call, account } as never);
  } catch (err) {
    const revert = err instanceof BaseError ? err.walk((e) => e instanceof ContractFunctionRevertedError) : null;
    if (revert) throw badRequest(`The beacon refuses the call: ${(revert as ContractFunctionRevertedError).shortMessage}`);
    throw err;
  }
  await fundAdmin(chain, gas);
  const hash = await walletClient(chain, account).writeContract({ ...call, gas } as never);
  const receipt = await client.waitForTransactionReceipt({ hash });
  if (receipt.status !== "success") throw new Error(`${call.functionName} reverted on chain ${chain.chainId} (transaction ${hash})`);
  return hash;
}

const queues = new Map<number, Promise<unknown>>();

/** One admin transaction at a time per chain in this process, so two upgrades never pick the same nonce. */
function serialized<T>(chainId: number, work: () => Promise<T>): Promise<T> {
  const run = (queues.get(chainId) ?? Promise.resolve()).then(work, work);
  queues.set(chainId, run.catch(() => undefined));
  return run;
}

/**
 * Points the project's beacon on `chainId` at `implementation`, deploying the beacon first when no managed account
 * has yet. Every managed account of the project on that chain runs the new code from the next call on.
 */
export async function upgradeManagedAccounts(ctx: ProjectContext, chainId: number, implementation: string): Promise<ManagedUpgrade> {
  const chain = chainFor(ctx, chainId);
  if (!isAddress(implementation, { strict: false })) throw refuse(implementation, "implementation must be a 0x-prefixed 20-byte address");
  const target = getAddress(implementation);
  const deployment = await requireDeployment(chain);
  return onChain(chain, () =>
    serialized(chain.chainId, async () => {
      if (!(await hasCode(chain, deployment.managedAccountFactory))) {
        throw unavailable(`The managed account factory is not deployed on chain ${chain.chainId} yet. The operator deploys it with: npm run cli -- chain deploy --chain ${chain.chainId}`);
      }
      await checkImplementation(chain, target);
      const beacon = managedBeaconAddress(ctx.projectId);
      let beaconTransactionHash: Hash | null = null;
      if (!(await hasCode(chain, beacon))) {
        beaconTransactionHash = await sendAsAdmin(chain, {
          address: deployment.managedAccountFactory,
          abi: managedAccountFactoryAbi,
          functionName: "deployBeacon",
          args: [beaconKey(ctx.projectId)],
        });
      }
      const client = publicClient(chain);
      const owner = await client.readContract({ address: beacon, abi: managedBeaconAbi, functionName: "owner" });
      if (getAddress(owner) !== beaconAdmin().address) {
        throw conflict(`The beacon ${beacon} on chain ${chain.chainId} is owned by ${owner}, not this service's beacon admin ${beaconAdmin().address}: only its owner can upgrade it.`);
      }
      const previous = await client.readContract({ address: beacon, abi: managedBeaconAbi, functionName: "implementation" });
      const result = { projectId: ctx.projectId, chainId: chain.chainId, beacon, previousImplementation: previous, implementation: target, beaconTransactionHash };
      if (getAddress(previous) === target) return { ...result, transactionHash: null };
      const transactionHash = await sendAsAdmin(chain, { address: beacon, abi: managedBeaconAbi, functionName: "upgradeTo", args: [target] });
      return { ...result, transactionHash };
    }),
  );
}
