import { formatEther } from "viem";
import { entryPointAbi } from "@/contracts/artifacts";
import { publicClient } from "@/lib/chain/clients";
import { offeredEntryPoints, ourPaymasters, serviceDeployment } from "@/lib/chain/contracts";
import { prepareChain } from "@/lib/prepare-chains";
import { supportedChains, type ChainConfig } from "@/lib/chain/registry";

/** The RPC URL without credentials in its path or query, for display. */
const shownUrl = (url: string) => {
  const u = new URL(url);
  return `${u.protocol}//${u.host}${u.pathname.length > 1 ? "/…" : ""}`;
};

async function status(chain: ChainConfig) {
  const d = serviceDeployment();
  const client = publicClient(chain);
  try {
    // Every piece: a chain prepared by an older version may lack the ones added since (chain deploy adds them).
    const [codes, deposits] = await Promise.all([
      Promise.all(Object.entries(d).map(async ([name, address]) => [name, await client.getCode({ address })] as const)),
      // Each of our paymasters' deposits at its EntryPoint (v0.6, v0.8 as the chain offers them).
      Promise.all(
        ourPaymasters(chain).map(async ({ version, entryPoint, paymaster }) => {
          const code = await client.getCode({ address: entryPoint });
          const wei = code && code !== "0x" ? await client.readContract({ address: entryPoint, abi: entryPointAbi, functionName: "balanceOf", args: [paymaster] }) : 0n;
          return [version, wei] as const;
        }),
      ),
    ]);
    const missing = codes.filter(([, code]) => !code || code === "0x").map(([name]) => name);
    const total = deposits.reduce((sum, [, wei]) => sum + wei, 0n);
    return {
      reachable: true,
      deployed: missing.length === 0,
      missing,
      paymasterDeposit: formatEther(total),
      paymasterDeposits: Object.fromEntries(deposits.map(([version, wei]) => [version, formatEther(wei)])),
    };
  } catch {
    return { reachable: false, deployed: false, missing: [], paymasterDeposit: null, paymasterDeposits: null };
  }
}

export async function listChains() {
  return {
    contracts: serviceDeployment(),
    chains: await Promise.all(
      supportedChains().map(async (chain) => ({
        chainId: chain.chainId,
        name: chain.name,
        mode: chain.livemode ? "live" : "test",
        rpc: shownUrl(chain.rpcUrl),
        relay: chain.bundlerUrl ? "bundler" : "self-bundling",
        entryPoints: offeredEntryPoints(chain).map((e) => e.version),
        ...(await status(chain)),
      })),
    ),
  };
}

export async function deployChains(chainId?: number) {
  const chains = supportedChains().filter((c) => chainId === undefined || c.chainId === chainId);
  if (chains.length === 0) throw new Error(`No configured chain ${chainId}; see npm run cli -- chain list`);
  const results = [];
  for (const chain of chains) {
    if (!chain.dev && !chain.deployerKey) throw new Error(`Chain ${chain.chainId} has no deployer key: set CHAIN_${chain.chainId}_DEPLOYER_PRIVATE_KEY or DEPLOYER_PRIVATE_KEY (a funded key).`);
    results.push(await prepareChain(chain));
  }
  return { contracts: serviceDeployment(), chains: results };
}

export function describeChains(result: Awaited<ReturnType<typeof listChains>>): string {
  const c = result.contracts;
  return [
    `EntryPoint v0.6 ${c.entryPoint}  v0.8 ${c.entryPointV08}  account factory ${c.accountFactory}  implementation ${c.accountImplementation}  paymaster ${c.paymaster}  managed account factory ${c.managedAccountFactory}`,
    ...result.chains.map(
      (ch) =>
        `${ch.chainId}  ${ch.mode}  ${ch.name}  ${ch.rpc}  ${ch.relay}  EntryPoints ${ch.entryPoints.map((v) => `v${v}`).join(", ")}  ` +
        (ch.reachable
          ? ch.deployed
            ? `contracts deployed, paymaster deposit ${ch.paymasterDeposit} (${Object.entries(ch.paymasterDeposits ?? {})
                .map(([version, amount]) => `v${version} ${amount}`)
                .join(", ")})`
            : `contracts NOT deployed (missing: ${ch.missing.join(", ")}; npm run cli -- chain deploy --chain ${ch.chainId})`
          : "unreachable"),
    ),
  ].join("\n");
}
