import fs from "node:fs";
import path from "node:path";
import { createPublicClient, http } from "viem";
import { dataDir } from "@/lib/config";
import { startAnvil, type AnvilNode } from "./anvil";
import { rpcFetch } from "./rpc-fetch";
import { supportedChains, type ChainConfig } from "./registry";
import { processSingleton } from "@/lib/singleton";

const nodes = processSingleton("anvilNodes", () => new Map<number, AnvilNode>());

/** The chain id a node at the URL answers with, or null when nothing answers. */
export async function answeringChainId(rpcUrl: string): Promise<number | null> {
  try {
    return await createPublicClient({ transport: http(rpcUrl, { timeout: 2_000, retryCount: 0, fetchFn: rpcFetch }) }).getChainId();
  } catch {
    return null;
  }
}

export interface LocalChainStatus {
  chain: ChainConfig;
  /** Spawned by this process, or found already running at its URL. */
  started: "spawned" | "running";
}

/**
 * Brings up each local chain: an anvil already answering at its URL with the right chain id is
 * used as it is; otherwise one is spawned, its state kept in `.data/anvil-<chainId>.json` so the
 * chain survives restarts as the database does.
 */
export async function startLocalChains(): Promise<LocalChainStatus[]> {
  return Promise.all(
    supportedChains()
      .filter((chain) => chain.local)
      .map(async (chain): Promise<LocalChainStatus> => {
        if (nodes.has(chain.chainId)) return { chain, started: "spawned" };
        const answering = await answeringChainId(chain.rpcUrl);
        if (answering === chain.chainId) return { chain, started: "running" };
        if (answering !== null) {
          throw new Error(`Port ${chain.local!.port} answers as chain ${answering}, not ${chain.chainId}. Set ANVIL_PORT to free ports.`);
        }
        fs.mkdirSync(dataDir(), { recursive: true });
        const node = await startAnvil({
          chainId: chain.chainId,
          port: chain.local!.port,
          stateFile: path.join(dataDir(), `anvil-${chain.chainId}.json`),
        });
        nodes.set(chain.chainId, node);
        return { chain, started: "spawned" };
      }),
  );
}

export async function stopLocalChains(): Promise<void> {
  await Promise.all([...nodes.values()].map((node) => node.stop()));
  nodes.clear();
}
