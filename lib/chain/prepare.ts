import { redact } from "@/lib/redact";
import { prepareChain, serviceDeployment } from "./contracts";
import { startLocalChains } from "./local";
import { supportedChains, type ChainConfig } from "./registry";
import type { ChainPreparation } from "./contracts";

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
