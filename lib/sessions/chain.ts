import type { Address } from "viem";
import { smartAccountAbi } from "@/contracts/artifacts";
import { onChain, publicClient } from "@/lib/chain/clients";
import type { ChainConfig } from "@/lib/chain/registry";

/** What an account holds for a key (`getSessionKey`). `active`: registered, not revoked, not retired by an owner change. */
export interface OnChainKey {
  validAfter: number;
  validUntil: number;
  limit: number;
  used: number;
  active: boolean;
  whitelist: readonly Address[];
}

/** The chain's clock (its latest block), which is what the EntryPoint judges a key's window by; tests move it. */
export async function chainNow(chain: ChainConfig): Promise<number> {
  const block = await onChain(chain, () => publicClient(chain).getBlock({ blockTag: "latest" }));
  return Number(block.timestamp);
}

/** The key's state on a deployed account (an account without code holds no keys). */
export async function readKey(chain: ChainConfig, account: Address, key: Address): Promise<OnChainKey> {
  const [validAfter, validUntil, limit, used, active, whitelist] = await onChain(chain, () =>
    publicClient(chain).readContract({ address: account, abi: smartAccountAbi, functionName: "getSessionKey", args: [key] }),
  );
  return { validAfter, validUntil, limit, used, active, whitelist };
}
