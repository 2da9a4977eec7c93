import { multicall3Abi, type Abi, type Address, type PublicClient } from "viem";
import { chainKey, publicClient } from "./clients";
import { viemChain, type ChainConfig } from "./registry";
import { processSingleton } from "@/lib/singleton";

// Integer reads of one chain at one block, batched: balance monitors (lib/monitors/monitor.ts) and
// token inventories (lib/inventory) read through here.

/** Where Multicall3 lives on nearly every chain (the same deployment transaction everywhere). */
export const MULTICALL3: Address = "0xcA11bde05977b3631167028862bE2a173976CA11";
/** How long a chain's "has Multicall3" answer is trusted. */
const MULTICALL3_RECHECK_MS = 10 * 60_000;
/** Calldata per eth_call before viem splits a multicall (every chunk is read at the same block). */
const MULTICALL_CHUNK_BYTES = 32_768;

/** One value to read: a view call returning one integer, or an address's native balance. */
export type Read = { kind: "call"; address: Address; abi: Abi; functionName: string; args: readonly unknown[] } | { kind: "native"; address: Address };
export type Reading = { value: bigint } | { error: string };

const known = processSingleton("multicall3", () => new Map<string, { present: boolean; at: number }>());

/** Whether the chain has Multicall3: declared by viem's chain description, or its code found at the canonical address. */
async function multicall3On(chain: ChainConfig, client: PublicClient): Promise<Address | null> {
  const declared = viemChain(chain).contracts?.multicall3?.address;
  if (declared) return declared;
  const key = chainKey(chain);
  const cached = known.get(key);
  if (cached && Date.now() - cached.at < MULTICALL3_RECHECK_MS) return cached.present ? MULTICALL3 : null;
  const code = await client.getCode({ address: MULTICALL3 });
  const present = Boolean(code && code !== "0x");
  known.set(key, { present, at: Date.now() });
  return present ? MULTICALL3 : null;
}

export const message = (err: unknown) => (err instanceof Error ? ((err as { shortMessage?: string }).shortMessage ?? err.message) : String(err)).slice(0, 500);

const asReading = (result: { status: "success"; result: unknown } | { status: "failure"; error: Error }): Reading =>
  result.status === "success" ? { value: BigInt(result.result as bigint) } : { error: message(result.error) };

/**
 * Every read of one chain at one block (its latest), in as few RPC calls as the chain allows: with
 * Multicall3, the block number and one multicall (native balances through its getEthBalance); without
 * it, the view calls in one deployless multicall and each native balance on its own.
 */
export async function readChain(chain: ChainConfig, reads: Read[]): Promise<{ block: bigint; readings: Reading[] }> {
  const client = publicClient(chain);
  // cacheTime 0: viem otherwise answers from a block number a few seconds old.
  const block = await client.getBlockNumber({ cacheTime: 0 });
  const multicall3 = await multicall3On(chain, client);
  const asCall = (read: Read) =>
    read.kind === "call"
      ? { address: read.address, abi: read.abi, functionName: read.functionName, args: read.args }
      : { address: multicall3!, abi: multicall3Abi as Abi, functionName: "getEthBalance", args: [read.address] };
  if (multicall3) {
    const results = await client.multicall({ contracts: reads.map(asCall), multicallAddress: multicall3, blockNumber: block, allowFailure: true, batchSize: MULTICALL_CHUNK_BYTES });
    return { block, readings: results.map(asReading) };
  }
  const calls = reads.flatMap((read, i) => (read.kind === "call" ? [{ i, call: asCall(read) }] : []));
  const readings: Reading[] = new Array(reads.length);
  const single = async (read: Read): Promise<Reading> => {
    try {
      return {
        value:
          read.kind === "native"
            ? await client.getBalance({ address: read.address, blockNumber: block })
            : BigInt((await client.readContract({ address: read.address, abi: read.abi, functionName: read.functionName, args: read.args, blockNumber: block })) as bigint),
      };
    } catch (err) {
      return { error: message(err) };
    }
  };
  const viewCalls = async () => {
    if (calls.length === 0) return;
    try {
      const results = await client.multicall({ contracts: calls.map((c) => c.call), deployless: true, blockNumber: block, allowFailure: true, batchSize: MULTICALL_CHUNK_BYTES });
      results.forEach((result, j) => (readings[calls[j]!.i] = asReading(result)));
    } catch {
      // A node that refuses contract creation in eth_call: one call each.
      await Promise.all(calls.map(async ({ i }) => (readings[i] = await single(reads[i]!))));
    }
  };
  await Promise.all([viewCalls(), ...reads.map(async (read, i) => void (read.kind === "native" && (readings[i] = await single(read))))]);
  return { block, readings };
}
