import { redact } from "@/lib/redact";
import { prepareChain, serviceDeployment } from "./contracts";
import { startLocalChains } from "./local";
import { supportedChains } from "./registry";

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
  return lines;
}
