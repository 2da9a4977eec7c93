import { defineChain, getAddress, isAddress, type Address, type Chain, type Hex } from "viem";
import * as knownChains from "viem/chains";
import { z } from "zod";
import { envFamily, envText, type SettingName } from "@/lib/config";
import { badRequest } from "@/lib/errors";
import type { ProjectContext } from "@/lib/tenant";
import { processSingleton } from "@/lib/singleton";

export interface ChainConfig {
  chainId: number;
  name: string;
  /**
   * The chain's JSON-RPC URL as configured, or several nodes' separated by commas (`CHAIN_<id>_RPC_URL`, CHAINS'
   * `rpcUrl`): reads and sends then go to the best ranked node that answers (viem's fallback transport), so one failing
   * node is not an outage; the reads that decide money take one node for a whole pass (lib/chain/clients.ts nodeClient).
   */
  rpcUrl: string;
  /** Live chains serve live keys only; test chains serve test keys only. */
  livemode: boolean;
  nativeCurrency: { name: string; symbol: string; decimals: number };
  /** A development chain from LOCAL_CHAINS (anvil): funded keys, top-ups allowed. */
  dev: boolean;
  /** An anvil node the service spawns itself (embedded default), on `port`. */
  local: { port: number } | null;
  /** Relay mode: an ERC-4337 bundler RPC when set, otherwise self-bundling through EntryPoint.handleOps. */
  bundlerUrl: string | null;
  /** A funded key allowed to deploy our contracts where they are missing (dev chains fund a fresh one). */
  deployerKey: Hex | null;
  /** The native coin's price in USD for gas reports (`CHAIN_<id>_USD_PRICE`); null shows no USD amounts. */
  usdPrice: number | null;
  /**
   * A Chainlink-style price feed (AggregatorV3Interface) of the native coin in USD (`usdAggregator` in CHAINS,
   * `CHAIN_<id>_USD_AGGREGATOR`), read by lib/sponsorship/prices when no `usdPrice` is configured.
   */
  usdAggregator?: Address | null;
  /**
   * A Uniswap-v2-compatible router for swaps (`router` in CHAINS, `CHAIN_<id>_ROUTER`) and its WETH (`weth`,
   * `CHAIN_<id>_WETH`; read from the router when unset). Unset on a local chain: its own exchange (lib/exchange).
   */
  router?: Address | null;
  weth?: Address | null;
  /**
   * The EntryPoint versions this chain offers (`entryPoints` in CHAINS, `CHAIN_<id>_ENTRY_POINTS` as "0.6,0.8"):
   * both by default. A chain whose bundler serves only one names it. Accounts of a version not offered cannot be made.
   */
  entryPoints?: EntryPointVersion[];
}

/** The URLs of a configured RPC value: one, or a comma list (blanks dropped). */
export const rpcUrlsOf = (value: string): string[] =>
  value
    .split(",")
    .map((u) => u.trim())
    .filter((u) => u.length > 0);

export const ENTRY_POINT_VERSIONS = ["0.6", "0.8"] as const;
export type EntryPointVersion = (typeof ENTRY_POINT_VERSIONS)[number];

/** The EntryPoint versions a chain offers (all unless configured). */
export const chainEntryPoints = (chain: Pick<ChainConfig, "entryPoints">): EntryPointVersion[] => chain.entryPoints ?? [...ENTRY_POINT_VERSIONS];

const contractAddress = z
  .string()
  .refine((v) => isAddress(v, { strict: false }), "a 0x-prefixed 20-byte address")
  .transform((v) => getAddress(v));

const hexKey = z.string().regex(/^0x[0-9a-fA-F]{64}$/, "a 0x-prefixed 32-byte private key") as z.ZodType<Hex>;

const configuredChain = z.strictObject({
  chainId: z.number().int().positive(),
  rpcUrl: z
    .string()
    .refine((v) => rpcUrlsOf(v).length > 0 && rpcUrlsOf(v).every((u) => z.url().safeParse(u).success), "a URL, or several separated by commas"),
  name: z.string().min(1).optional(),
  livemode: z.boolean().optional(),
  bundlerUrl: z.url().optional(),
  deployerPrivateKey: hexKey.optional(),
  nativeCurrency: z.strictObject({ name: z.string(), symbol: z.string(), decimals: z.number().int() }).optional(),
  usdPrice: z.number().nonnegative().optional(),
  usdAggregator: contractAddress.optional(),
  router: contractAddress.optional(),
  weth: contractAddress.optional(),
  entryPoints: z.array(z.enum(ENTRY_POINT_VERSIONS)).min(1).optional(),
});

/** `CHAIN_<id>_ENTRY_POINTS`: comma-separated versions ("0.6,0.8"). */
function entryPointsOf(chainId: number): EntryPointVersion[] | undefined {
  const name = `CHAIN_${chainId}_ENTRY_POINTS` as const;
  const value = envText(name);
  if (value === undefined) return undefined;
  const versions = value.split(",").map((v) => v.trim().replace(/^v/, ""));
  const unknown = versions.filter((v) => !(ENTRY_POINT_VERSIONS as readonly string[]).includes(v));
  if (unknown.length || versions.length === 0) invalidConfig(`${name} must list EntryPoint versions among ${ENTRY_POINT_VERSIONS.join(", ")} (got "${value}")`);
  return [...new Set(versions)] as EntryPointVersion[];
}

function usdPriceOf(chainId: number): number | undefined {
  const raw = envText(`CHAIN_${chainId}_USD_PRICE`);
  if (raw === undefined) return undefined;
  const price = Number(raw);
  if (!Number.isFinite(price) || price < 0) invalidConfig(`CHAIN_${chainId}_USD_PRICE must be a non-negative number`);
  return price;
}

/** `CHAIN_<id>_USD_AGGREGATOR`: the address of the chain's native-coin/USD price feed. */
function usdAggregatorOf(chainId: number): Address | undefined {
  const name = `CHAIN_${chainId}_USD_AGGREGATOR` as const;
  const value = envText(name);
  if (value === undefined) return undefined;
  if (!isAddress(value, { strict: false })) invalidConfig(`${name} must be a 0x-prefixed 20-byte address`);
  return getAddress(value);
}

/** A local chain's router and WETH from `CHAIN_<id>_ROUTER` / `CHAIN_<id>_WETH` (null: its own exchange). */
function exchangeOf(chainId: number): { router: Address | null; weth: Address | null } {
  const read = (name: SettingName) => {
    const value = envText(name);
    if (value === undefined) return null;
    if (!isAddress(value, { strict: false })) invalidConfig(`${name} must be a 0x-prefixed 20-byte address`);
    return getAddress(value);
  };
  return { router: read(`CHAIN_${chainId}_ROUTER`), weth: read(`CHAIN_${chainId}_WETH`) };
}

function known(chainId: number): Chain | undefined {
  return Object.values(knownChains).find((c) => (c as Chain).id === chainId) as Chain | undefined;
}

function invalidConfig(message: string): never {
  throw new Error(`Chain configuration: ${message}`);
}

/**
 * Local anvil chains (`LOCAL_CHAINS`, default "31337,31338"; a ":live" suffix makes one serve
 * live keys; "none" turns them off) on ports from `ANVIL_PORT` (default 8545) upwards, plus
 * chains from `CHAINS` (a JSON array) and `CHAIN_<id>_RPC_URL`. `CHAIN_<id>_RPC_URL` also
 * points a local chain at an already running node.
 */
function readChains(): ChainConfig[] {
  const chains = new Map<number, ChainConfig>();
  const localSpec = envText("LOCAL_CHAINS") ?? "31337,31338";
  const basePort = Number(envText("ANVIL_PORT") ?? 8545);
  if (!Number.isInteger(basePort) || basePort < 0 || basePort > 65535) invalidConfig(`ANVIL_PORT must be a port number`);
  if (localSpec !== "none") {
    localSpec.split(",").forEach((item, index) => {
      const match = /^\s*(\d+)\s*(?::\s*(live|test)\s*)?$/.exec(item);
      if (!match) invalidConfig(`LOCAL_CHAINS entry "${item}" is not "<chainId>" or "<chainId>:live"`);
      const chainId = Number(match[1]);
      const port = basePort === 0 ? 0 : basePort + index;
      chains.set(chainId, {
        chainId,
        name: "Local anvil",
        rpcUrl: envText(`CHAIN_${chainId}_RPC_URL`) ?? `http://127.0.0.1:${port}`,
        livemode: match[2] === "live",
        nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
        dev: true,
        local: envText(`CHAIN_${chainId}_RPC_URL`) ? null : { port },
        bundlerUrl: envText(`CHAIN_${chainId}_BUNDLER_URL`) ?? null,
        deployerKey: null,
        usdPrice: usdPriceOf(chainId) ?? null,
        usdAggregator: usdAggregatorOf(chainId) ?? null,
        ...exchangeOf(chainId),
        entryPoints: entryPointsOf(chainId) ?? [...ENTRY_POINT_VERSIONS],
      });
    });
  }

  const fromJson = envText("CHAINS");
  const entries: z.infer<typeof configuredChain>[] = [];
  if (fromJson) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(fromJson);
    } catch {
      invalidConfig("CHAINS is not valid JSON");
    }
    const result = z.array(configuredChain).safeParse(parsed);
    if (!result.success) invalidConfig(`CHAINS: ${z.prettifyError(result.error)}`);
    entries.push(...result.data);
  }
  for (const [name, value] of envFamily(/^CHAIN_\d+_RPC_URL$/)) {
    const match = /^CHAIN_(\d+)_RPC_URL$/.exec(name);
    if (!match || !value || chains.has(Number(match[1]))) continue;
    const id = match[1]! as `${number}`;
    const live = envText(`CHAIN_${id}_LIVE`);
    const result = configuredChain.safeParse({
      chainId: Number(id),
      rpcUrl: value,
      name: envText(`CHAIN_${id}_NAME`),
      livemode: live === undefined ? undefined : live === "true",
      bundlerUrl: envText(`CHAIN_${id}_BUNDLER_URL`),
      deployerPrivateKey: envText(`CHAIN_${id}_DEPLOYER_PRIVATE_KEY`),
      usdPrice: usdPriceOf(Number(id)),
      usdAggregator: usdAggregatorOf(Number(id)),
      router: envText(`CHAIN_${id}_ROUTER`),
      weth: envText(`CHAIN_${id}_WETH`),
      entryPoints: entryPointsOf(Number(id)),
    });
    if (!result.success) invalidConfig(`CHAIN_${id}_*: ${z.prettifyError(result.error)}`);
    entries.push(result.data);
  }
  for (const entry of entries) {
    const chain = known(entry.chainId);
    chains.set(entry.chainId, {
      chainId: entry.chainId,
      name: entry.name ?? chain?.name ?? `Chain ${entry.chainId}`,
      rpcUrl: entry.rpcUrl,
      livemode: entry.livemode ?? !chain?.testnet,
      nativeCurrency: entry.nativeCurrency ?? chain?.nativeCurrency ?? { name: "Ether", symbol: "ETH", decimals: 18 },
      dev: false,
      local: null,
      bundlerUrl: entry.bundlerUrl ?? null,
      deployerKey: entry.deployerPrivateKey ?? (envText("DEPLOYER_PRIVATE_KEY") as Hex | undefined) ?? null,
      usdPrice: entry.usdPrice ?? null,
      usdAggregator: entry.usdAggregator ?? null,
      router: entry.router ?? null,
      weth: entry.weth ?? null,
      entryPoints: entry.entryPoints ? [...new Set(entry.entryPoints)] : [...ENTRY_POINT_VERSIONS],
    });
  }
  return [...chains.values()];
}

const cache = processSingleton("chains", () => ({ read: undefined as { key: string; chains: ChainConfig[] } | undefined }));

/** The environment variables that configure chains. */
export const CHAIN_CONFIG_VARS = /^(LOCAL_CHAINS|ANVIL_PORT|CHAINS|DEPLOYER_PRIVATE_KEY|CHAIN_\d+_\w+)$/;

/**
 * Every configured chain; re-read when the environment changes. Called several times per request: its key reads the
 * values of the chain variables only (envFamily: reading every variable's value goes through a native getter each).
 */
export function supportedChains(): ChainConfig[] {
  const key = JSON.stringify(envFamily(CHAIN_CONFIG_VARS));
  if (cache.read?.key !== key) cache.read = { key, chains: readChains() };
  return cache.read.chains;
}

export const findChain = (chainId: number) => supportedChains().find((c) => c.chainId === chainId);

export const isSupportedChain = (chainId: number) => findChain(chainId) !== undefined;

const describe = (chains: ChainConfig[]) => (chains.length ? chains.map((c) => c.chainId).join(", ") : "none configured");

/** Why a chainId is refused when no configured chain has it (the `chainId` field's message too). */
export const unsupportedChain = (chainId: number) => `Unsupported chainId ${chainId}. Supported chains: ${describe(supportedChains())}.`;

/** The chain, if the caller's mode may use it: test keys use test chains, live keys live chains. */
export function chainFor(ctx: ProjectContext, chainId: number): ChainConfig {
  const chains = supportedChains();
  const chain = chains.find((c) => c.chainId === chainId);
  if (!chain) throw badRequest(unsupportedChain(chainId), { chainId: { value: chainId, message: "unsupported chain" } });
  if (chain.livemode !== ctx.livemode) {
    const usable = chains.filter((c) => c.livemode === ctx.livemode);
    const mode = ctx.livemode ? "live" : "test";
    throw badRequest(
      `Chain ${chainId} is a ${chain.livemode ? "live" : "test"} chain and cannot be used with a ${mode} key. ` +
        (usable.length
          ? `Chains for ${mode} keys: ${describe(usable)}.`
          : `No ${mode} chain is configured${ctx.livemode ? " (to try live mode locally, start with LOCAL_CHAINS=31337,31338:live)" : ""}.`),
      { chainId: { value: chainId, message: `not a ${mode} chain` } },
    );
  }
  return chain;
}

/** viem's description of the chain, for clients. */
export function viemChain(chain: ChainConfig): Chain {
  const base = known(chain.chainId);
  return defineChain({
    ...(base ?? {}),
    id: chain.chainId,
    name: chain.name,
    nativeCurrency: chain.nativeCurrency,
    rpcUrls: { default: { http: rpcUrlsOf(chain.rpcUrl) } },
  });
}
