import { findChain, supportedChains } from "@/lib/chain/registry";
import type { ProjectContext } from "@/lib/projects/service";

/** The chains this mode can use (test chains for test keys, live chains for live keys), for select boxes. */
export const chainOptions = (ctx: ProjectContext): [string, string][] =>
  supportedChains()
    .filter((c) => c.livemode === ctx.livemode)
    .map((c) => [String(c.chainId), `${c.name} (${c.chainId})`]);

export const chainLabel = (chainId: number) => findChain(chainId)?.name ?? `chain ${chainId}`;
