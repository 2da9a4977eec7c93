import { chainOptions } from "@/lib/dashboard/chains";
import type { ProjectContext } from "@/lib/tenant";
import { Select } from "./form";

/** The mode's chains; with none configured (live mode out of the box), what to set instead of an empty list. */
export function ChainSelect({ ctx }: { ctx: ProjectContext }) {
  const options = chainOptions(ctx);
  if (options.length === 0) {
    return (
      <div className="text-sm">
        <p className="mb-1 font-medium text-slate-700">Chain</p>
        <p role="note" className="rounded-md bg-amber-50 px-3 py-1.5 text-amber-900">
          No {ctx.livemode ? "live" : "test"} chain is configured. {ctx.livemode ? "Add one with CHAINS or CHAIN_<id>_RPC_URL, or start with LOCAL_CHAINS=31337,31338:live to try live mode locally." : "Add one with CHAINS or LOCAL_CHAINS."}
        </p>
      </div>
    );
  }
  return <Select label="Chain" name="chainId" options={options} />;
}
