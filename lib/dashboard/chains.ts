import { findChain, supportedChains } from "@/lib/chain/registry";
import type { ProjectContext } from "@/lib/tenant";

/** The chains this mode can use (test chains for test keys, live chains for live keys), for select boxes. */
export const chainOptions = (ctx: ProjectContext): [string, string][] =>
  supportedChains()
    .filter((c) => c.livemode === ctx.livemode)
    .map((c) => [String(c.chainId), chainLabel(c.chainId)]);

/** A chain as pages show it: its name and id, since several local chains share a name. */
export const chainLabel = (chainId: number) => `${findChain(chainId)?.name ?? "Chain"} (${chainId})`;
