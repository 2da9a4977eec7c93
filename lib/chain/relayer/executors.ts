// The executors that send bundles: the least busy one that can pay is picked; dev chains top theirs up, others warn
// when one runs low and fail with RelayerFundsError when none can pay.
import { formatEther, toHex, type Address } from "viem";
import { ApiError } from "@/lib/errors";
import { publicClient } from "@/lib/chain/clients";
import type { ChainConfig } from "@/lib/chain/registry";
import { relayFor, type Executor } from "./config";
import { log } from "@/lib/log";
import { metrics } from "@/lib/metrics";

/** No executor can pay for the bundle's gas on a real chain: the operator must fund them. */
export class RelayerFundsError extends ApiError {
  constructor(chain: ChainConfig, balances: { address: Address; balance: bigint }[], needed: bigint) {
    const symbol = chain.nativeCurrency.symbol;
    super(
      503,
      "api_error",
      `The relayer's executors on chain ${chain.chainId} (${chain.name}) cannot pay for gas: a bundle needs up to ` +
        `${formatEther(needed)} ${symbol}, and they hold ` +
        balances.map((b) => `${b.address}: ${formatEther(b.balance)} ${symbol}`).join(", ") +
        `. The operator must send ${symbol} to them.`,
    );
  }
}

const DEV_EXECUTOR_BALANCE = 10_000n * 10n ** 18n;

export async function topUp(chain: ChainConfig, address: Address) {
  await publicClient(chain).request({
    method: "anvil_setBalance" as never,
    params: [address, toHex(DEV_EXECUTOR_BALANCE)] as never,
  });
}

/** The least busy executor that can pay `needed` (dev chains top theirs up); the others are tried in turn. */
export async function pickExecutor(chain: ChainConfig, needed: bigint): Promise<Executor> {
  const relay = relayFor(chain);
  const n = relay.executors.length;
  // Fewest bundles in flight first; ties take turns.
  const order = relay.executors
    .map((executor, i) => ({ executor, rank: (i - relay.turn + n) % n }))
    .sort((a, b) => a.executor.inflight - b.executor.inflight || a.rank - b.rank)
    .map(({ executor }) => executor);
  relay.turn = (relay.turn + 1) % n;
  const balances: { address: Address; balance: bigint }[] = [];
  for (const executor of order) {
    // Claim before any await, so concurrent bundles spread over the executors.
    executor.inflight++;
    try {
      const address = executor.account.address;
      const balance = await publicClient(chain).getBalance({ address });
      metrics.executorBalance.set({ chain: String(chain.chainId), executor: address }, Number(balance));
      if (chain.dev) {
        if (balance < needed * LOW_BALANCE_BUNDLES) await topUp(chain, address);
        return executor;
      }
      if (balance >= needed) {
        if (balance < needed * LOW_BALANCE_BUNDLES) warnLow(chain, address, balance, needed);
        return executor;
      }
      balances.push({ address, balance });
    } catch (err) {
      executor.inflight--;
      throw err;
    }
    executor.inflight--;
  }
  log.warn({ chainId: chain.chainId, needed: needed.toString(), balances: balances.map((b) => ({ address: b.address, balance: b.balance.toString() })) }, "relayer executors cannot pay for a bundle");
  throw new RelayerFundsError(chain, balances, needed);
}

/** Below this many bundles' worth of gas an executor counts as low: dev chains top it up, others log a warning. */
const LOW_BALANCE_BUNDLES = 20n;
const lowWarnedAt = new Map<string, number>();

function warnLow(chain: ChainConfig, address: Address, balance: bigint, needed: bigint) {
  const key = `${chain.chainId}:${address}`;
  if (Date.now() - (lowWarnedAt.get(key) ?? 0) < 600_000) return;
  lowWarnedAt.set(key, Date.now());
  log.warn({ chainId: chain.chainId, executor: address }, `relayer executor ${address} is low on funds: ${formatEther(balance)} ${chain.nativeCurrency.symbol}, about ${balance / needed} bundles; fund it`);
}
