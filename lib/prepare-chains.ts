import { formatEther, parseEther, toHex, type Account } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { entryPointAbi } from "@/contracts/artifacts";
import { publicClient, walletClient } from "@/lib/chain/clients";
import { installationKeys, ourPaymasters, serviceDeployment } from "@/lib/chain/contracts";
import { ensureDeployment } from "@/lib/chain/deployment";
import { startLocalChains } from "@/lib/chain/local";
import { ensureLocalPriceFeed } from "@/lib/chain/price-feed";
import { supportedChains, type ChainConfig } from "@/lib/chain/registry";
import { ensureLocalExchange, type LocalExchange } from "@/lib/exchange/deployment";
import { redact } from "@/lib/redact";

// Preparing a chain deploys the exchange's contracts as well as the chain layer's, so it sits above both
// (run at start by lib/boot.ts, by the CLI's `chain deploy` and by the tests' global setup).

/**
 * At start: local chains up, our contracts deployed where we may deploy them. Returns banner
 * lines; a chain that fails is reported there (requests touching it answer 502/503) instead of
 * keeping the API down.
 */
export async function prepareChains(): Promise<string[]> {
  const lines: string[] = [];
  try {
    await startLocalChains();
  } catch (err) {
    lines.push(`  Local chains failed to start: ${redact((err as Error).message)}`);
  }
  const chains = supportedChains();
  if (chains.length === 0) return ["  Chains: none configured (LOCAL_CHAINS=none and no CHAINS / CHAIN_<id>_RPC_URL)."];
  const results = await Promise.allSettled(chains.map(prepareChain));
  const d = serviceDeployment();
  lines.push(
    `  Chains (EntryPoint ${d.entryPoint}, account factory ${d.accountFactory}, paymaster ${d.paymaster}):`,
    ...chains.map((chain, i) => {
      const result = results[i]!;
      const where = chain.local ? `port ${chain.local.port}` : "RPC";
      const status =
        result.status === "fulfilled"
          ? `ready, paymaster deposit ${result.value.paymasterDeposit} ${chain.nativeCurrency.symbol}`
          : `NOT READY: ${redact((result.reason as Error).message.split("\n")[0]!)}`;
      return `    ${chain.chainId} ${chain.livemode ? "live" : "test"}  ${chain.name} (${where}) — ${status}`;
    }),
  );
  lines.push(...exchangeLines(chains, results));
  return lines;
}

/** Where swaps go: the local exchange (the same addresses on every local chain) and each configured router. */
function exchangeLines(chains: ChainConfig[], results: PromiseSettledResult<ChainPreparation>[]): string[] {
  const local = results.flatMap((r) => (r.status === "fulfilled" && r.value.exchange ? [r.value] : []));
  const lines: string[] = [];
  if (local.length) {
    const { router, factory, weth, tokens } = local[0]!.exchange!;
    lines.push(
      `  Exchange on ${local.map((r) => r.chainId).join(", ")} (Uniswap v2): router ${router}, factory ${factory}, WETH ${weth}`,
      `    demo tokens ${tokens.map((t) => `${t.symbol} ${t.address}`).join(", ")} (pools with WETH and with each other)`,
    );
  }
  for (const chain of chains.filter((c) => c.router)) lines.push(`  Exchange on ${chain.chainId}: router ${chain.router}${chain.weth ? `, WETH ${chain.weth}` : ""}`);
  return lines;
}

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
