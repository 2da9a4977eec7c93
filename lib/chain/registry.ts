import { integerField } from "@/lib/http/fields";

export interface ChainInfo {
  chainId: number;
  name: string;
}

/** The embedded default's local chains; the chains issue extends this with configured RPC chains. */
const LOCAL_CHAINS: ChainInfo[] = [
  { chainId: 31337, name: "Local chain A (anvil)" },
  { chainId: 31338, name: "Local chain B (anvil)" },
];

export const supportedChains = (): ChainInfo[] => LOCAL_CHAINS;

export const isSupportedChain = (chainId: number) => supportedChains().some((c) => c.chainId === chainId);

/** A `chainId` parameter: an integer naming a supported chain. */
export const chainIdField = () =>
  integerField({ min: 1 }).superRefine((chainId, ctx) => {
    if (!isSupportedChain(chainId)) {
      ctx.addIssue({
        code: "custom",
        message: `Unsupported chainId ${chainId}. Supported chains: ${supportedChains()
          .map((c) => c.chainId)
          .join(", ")}.`,
      });
    }
  });
