import http from "node:http";
import type { AddressInfo } from "node:net";
import { getAddress, parseUnits, toFunctionSelector, toHex, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { testPriceFeedAbi, testPriceFeedBytecode } from "@/contracts/artifacts";
import { startAnvil, type AnvilNode } from "@/lib/chain/anvil";
import { publicClient, walletClient } from "@/lib/chain/clients";
import { prepareChain } from "@/lib/prepare-chains";
import { localPriceFeed } from "@/lib/chain/price-feed";
import { findChain, supportedChains, type ChainConfig } from "@/lib/chain/registry";
import { usdPrice, usdPriceStatus } from "@/lib/sponsorship/prices";
import { clientOf } from "./helpers/chain";

/**
 * USD prices of a chain's native coin (lib/sponsorship/prices) on a real anvil of this file's own (chain 31990, whose
 * time the tests move by days without disturbing the shared chains) behind a counting JSON-RPC proxy, with the real
 * TestPriceFeed; and the shared chain 31337, whose feed the global setup's prepareChain deployed.
 */
const ID = 31990;
const LATEST_ROUND_DATA = toFunctionSelector("latestRoundData()");
const SHARED_LOCAL = "31337,31338,31339:live";

let node: AnvilNode;
let proxy: http.Server;
let proxyUrl: string;
/** JSON-RPC requests the proxy passed on: method, and for eth_call the selector called. */
const seen: { method: string; selector?: string; to?: string }[] = [];
const feedReads = (feed: Address) => seen.filter((r) => r.selector === LATEST_ROUND_DATA && r.to?.toLowerCase() === feed.toLowerCase()).length;

/** Chain 31990 as configured now: a development chain while LOCAL_CHAINS names it, else a chain from CHAIN_31990_RPC_URL. */
const chain = () => findChain(ID)!;
/** The node itself (not through the proxy, not as configured): what the tests deploy, set and move time with. */
const direct = (): ChainConfig => ({ chainId: ID, name: "prices (direct)", rpcUrl: node.rpcUrl, livemode: false, nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 }, dev: true, local: null, bundlerUrl: null, deployerKey: null, usdPrice: null });
const rpc = (method: string, params: unknown[] = []) => publicClient(direct()).request({ method: method as never, params: params as never });
const moveTime = async (seconds: number) => {
  await rpc("evm_increaseTime", [toHex(seconds)]);
  await rpc("evm_mine");
};

async function deployer() {
  const account = privateKeyToAccount(generatePrivateKey());
  await rpc("anvil_setBalance", [account.address, toHex(10n ** 20n)]);
  return walletClient(direct(), account);
}

async function setAnswer(feed: Address, usd: string, decimals = 8) {
  const wallet = await deployer();
  const hash = await wallet.writeContract({ address: feed, abi: testPriceFeedAbi, functionName: "setAnswer", args: [parseUnits(usd, decimals)] });
  const receipt = await publicClient(direct()).waitForTransactionReceipt({ hash });
  expect(receipt.status).toBe("success");
}

async function deployFeed(decimals: number, usd: string): Promise<Address> {
  const wallet = await deployer();
  const hash = await wallet.deployContract({ abi: testPriceFeedAbi, bytecode: testPriceFeedBytecode, args: [decimals, "TEST / USD", parseUnits(usd, decimals)] });
  const receipt = await publicClient(direct()).waitForTransactionReceipt({ hash });
  return getAddress(receipt.contractAddress!);
}

beforeAll(async () => {
  node = await startAnvil({ chainId: ID, port: 0, blockTime: 0 });
  proxy = http.createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString()));
    req.on("end", async () => {
      const parsed = JSON.parse(body) as { method: string; params?: { to?: string; data?: Hex; input?: Hex }[] } | { method: string; params?: { to?: string; data?: Hex; input?: Hex }[] }[];
      for (const request of Array.isArray(parsed) ? parsed : [parsed]) {
        const call = request.method === "eth_call" ? request.params?.[0] : undefined;
        seen.push({ method: request.method, ...(call && { selector: (call.data ?? call.input)?.slice(0, 10), to: call.to }) });
      }
      const answer = await fetch(node.rpcUrl, { method: "POST", headers: { "content-type": "application/json" }, body });
      res.writeHead(answer.status, { "content-type": "application/json" }).end(await answer.text());
    });
  });
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
});

afterAll(async () => {
  vi.unstubAllEnvs();
  await new Promise((resolve) => proxy?.close(resolve));
  await node?.stop();
});

/** Each test states the configuration it needs. */
function configure(vars: Record<string, string | undefined>) {
  vi.unstubAllEnvs();
  vi.stubEnv("LOCAL_CHAINS", `${SHARED_LOCAL},${ID}`);
  vi.stubEnv(`CHAIN_${ID}_RPC_URL`, proxyUrl);
  vi.stubEnv("USD_PRICE_CACHE_SECONDS", "0");
  for (const [name, value] of Object.entries(vars)) vi.stubEnv(name, value);
}

afterEach(() => vi.unstubAllEnvs());

describe("USD prices", () => {
  it("a development chain gets its own price feed when prepared: 2000 USD until someone sets another, never stale", async () => {
    configure({});
    expect(chain().dev).toBe(true);
    const before = await usdPriceStatus(chain());
    expect(before).toMatchObject({ price: null, source: null, problem: "unreadable", aggregator: localPriceFeed() });
    expect(before.reason).toMatch(/chain 31990 .* could not be read: it is not deployed on this chain yet .*npm run cli -- chain deploy/);

    const prepared = await prepareChain(chain());
    expect(prepared.deployed).toContain("TestPriceFeed");
    expect((await prepareChain(chain())).deployed).not.toContain("TestPriceFeed");
    expect(await usdPriceStatus(chain())).toMatchObject({ price: 2000, source: "aggregator", aggregator: localPriceFeed() });
    const client = publicClient(chain());
    expect(await client.readContract({ address: localPriceFeed(), abi: testPriceFeedAbi, functionName: "decimals" })).toBe(8);
    expect(await client.readContract({ address: localPriceFeed(), abi: testPriceFeedAbi, functionName: "version" })).toBe(4n);
    expect(await client.readContract({ address: localPriceFeed(), abi: testPriceFeedAbi, functionName: "description" })).toBe("ETH / USD (local)");

    // Two days later nobody has set it: the local feed has no heartbeat, its answer stands.
    await moveTime(2 * 86400);
    expect(await usdPriceStatus(chain())).toMatchObject({ price: 2000, source: "aggregator" });
    await setAnswer(localPriceFeed(), "2345.67");
    expect(await usdPrice(chain())).toBe(2345.67);
    const [roundId, answer] = await client.readContract({ address: localPriceFeed(), abi: testPriceFeedAbi, functionName: "latestRoundData" });
    expect([roundId, answer]).toEqual([2n, 234567000000n]);
    expect((await client.readContract({ address: localPriceFeed(), abi: testPriceFeedAbi, functionName: "getRoundData", args: [1n] }))[1]).toBe(200000000000n);
    await expect(client.readContract({ address: localPriceFeed(), abi: testPriceFeedAbi, functionName: "getRoundData", args: [3n] })).rejects.toThrow(/NoDataPresent/);
  });

  it("the shared local chains have their feed at the same address, its first round 2000 USD", async () => {
    const shared = findChain(31337)!;
    const status = await usdPriceStatus(shared);
    const [, answer] = await clientOf(31337).readContract({ address: localPriceFeed(), abi: testPriceFeedAbi, functionName: "latestRoundData" });
    // Other test files may have set it since: the price is what the feed answers now.
    expect(status).toMatchObject({ price: Number(answer) / 1e8, source: "aggregator", aggregator: localPriceFeed() });
    expect((await clientOf(31337).readContract({ address: localPriceFeed(), abi: testPriceFeedAbi, functionName: "getRoundData", args: [1n] }))[1]).toBe(200000000000n);
  });

  it("a configured feed is refused when its answer is older than the bound by the chain's clock, and fresh again after setAnswer", async () => {
    configure({ [`CHAIN_${ID}_USD_AGGREGATOR`]: localPriceFeed() });
    await setAnswer(localPriceFeed(), "2500");
    expect(await usdPriceStatus(chain())).toMatchObject({ price: 2500, source: "aggregator", aggregator: localPriceFeed() });

    await moveTime(3000);
    expect(await usdPrice(chain())).toBe(2500);
    await moveTime(700);
    const stale = await usdPriceStatus(chain());
    expect(stale).toMatchObject({ price: null, source: null, problem: "stale", aggregator: localPriceFeed() });
    expect(stale.reason).toMatch(/chain 31990 .* is stale: its latest answer is 62 minutes old by the chain's clock, more than the 3600 seconds allowed \(USD_PRICE_MAX_AGE_SECONDS\)/);

    // The bound is a setting, and per chain.
    vi.stubEnv("USD_PRICE_MAX_AGE_SECONDS", "86400");
    expect(await usdPrice(chain())).toBe(2500);
    vi.stubEnv(`CHAIN_${ID}_USD_PRICE_MAX_AGE_SECONDS`, "60");
    expect((await usdPriceStatus(chain())).problem).toBe("stale");
    vi.stubEnv(`CHAIN_${ID}_USD_PRICE_MAX_AGE_SECONDS`, "");
    vi.stubEnv("USD_PRICE_MAX_AGE_SECONDS", "");

    await moveTime(3 * 86400);
    expect((await usdPriceStatus(chain())).reason).toMatch(/is stale: its latest answer is 3 days old/);
    await setAnswer(localPriceFeed(), "2600");
    expect(await usdPriceStatus(chain())).toMatchObject({ price: 2600, source: "aggregator" });
  });

  it("one read serves a burst of callers; a new answer shows once the cache expires", async () => {
    // A feed of its own: nothing of it is cached yet.
    const feed = await deployFeed(8, "2700");
    configure({ [`CHAIN_${ID}_USD_AGGREGATOR`]: feed, USD_PRICE_CACHE_SECONDS: "60" });
    const prices = await Promise.all(Array.from({ length: 25 }, () => usdPrice(chain())));
    expect(prices).toEqual(Array(25).fill(2700));
    expect(feedReads(feed)).toBe(1);

    await setAnswer(feed, "3100");
    expect(await usdPrice(chain())).toBe(2700);
    expect(feedReads(feed)).toBe(1);

    vi.stubEnv("USD_PRICE_CACHE_SECONDS", "0.5");
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(await Promise.all([usdPrice(chain()), usdPrice(chain())])).toEqual([3100, 3100]);
    expect(feedReads(feed)).toBe(2);
  });

  it("scales by the feed's decimals; refuses a non-positive answer, an address without a feed, and an unreachable node", async () => {
    const feed = await deployFeed(18, "1234.5");
    configure({ [`CHAIN_${ID}_USD_AGGREGATOR`]: feed });
    expect(await usdPriceStatus(chain())).toMatchObject({ price: 1234.5, source: "aggregator", aggregator: feed });

    await setAnswer(feed, "0", 18);
    const zero = await usdPriceStatus(chain());
    expect(zero).toMatchObject({ price: null, source: null, problem: "invalid_answer" });
    expect(zero.reason).toMatch(/answers 0, not a positive price/);
    await setAnswer(feed, "-3", 18);
    expect((await usdPriceStatus(chain())).reason).toMatch(/answers -3, not a positive price/);

    const nowhere = privateKeyToAccount(generatePrivateKey()).address;
    configure({ [`CHAIN_${ID}_USD_AGGREGATOR`]: nowhere });
    const empty = await usdPriceStatus(chain());
    expect(empty).toMatchObject({ price: null, problem: "unreadable", aggregator: nowhere });
    expect(empty.reason).toMatch(/could not be read: no contract at that address answers latestRoundData \(is CHAIN_31990_USD_AGGREGATOR/);

    vi.stubEnv("CHAINS", JSON.stringify([{ chainId: 31991, rpcUrl: "http://127.0.0.1:9/secret-key-path", usdAggregator: feed }]));
    const down = await usdPriceStatus(findChain(31991)!);
    expect(down).toMatchObject({ price: null, problem: "unreadable", aggregator: feed });
    expect(down.reason).toMatch(/could not be read: the chain's node did not answer\.$/);
    expect(down.reason).not.toMatch(/secret-key-path|127\.0\.0\.1/);
  });

  it("CHAIN_<id>_USD_PRICE wins over any feed, without a read", async () => {
    configure({ [`CHAIN_${ID}_USD_AGGREGATOR`]: localPriceFeed(), [`CHAIN_${ID}_USD_PRICE`]: "1500.25" });
    const requests = seen.length;
    expect(await usdPriceStatus(chain())).toEqual({ price: 1500.25, source: "config" });
    configure({ [`CHAIN_${ID}_USD_PRICE`]: "1500.25" });
    expect(await usdPriceStatus(chain())).toEqual({ price: 1500.25, source: "config" });
    expect(seen.length).toBe(requests);
  });

  it("a chain that is not a development chain has a price only when configured, and says how to configure one", async () => {
    configure({ LOCAL_CHAINS: SHARED_LOCAL });
    expect(chain().dev).toBe(false);
    const none = await usdPriceStatus(chain());
    expect(none).toEqual({
      price: null,
      source: null,
      problem: "unconfigured",
      reason: "Chain 31990 has no USD price: the operator sets one with CHAIN_31990_USD_PRICE, or a Chainlink price feed of its native coin with CHAIN_31990_USD_AGGREGATOR.",
    });
    expect(await usdPrice(chain())).toBeNull();

    // A configured feed on such a chain, through CHAIN_<id>_* and through CHAINS.
    const feed = await deployFeed(8, "1999.99");
    vi.stubEnv(`CHAIN_${ID}_USD_AGGREGATOR`, feed.toLowerCase());
    expect(chain().usdAggregator).toBe(feed);
    expect(await usdPriceStatus(chain())).toMatchObject({ price: 1999.99, source: "aggregator", aggregator: feed });
    configure({ LOCAL_CHAINS: SHARED_LOCAL, [`CHAIN_${ID}_RPC_URL`]: undefined, CHAINS: JSON.stringify([{ chainId: ID, rpcUrl: proxyUrl, usdAggregator: feed }]) });
    expect(chain()).toMatchObject({ dev: false, usdAggregator: feed });
    expect(await usdPrice(chain())).toBe(1999.99);
  });

  it("a malformed aggregator address is refused when the configuration is read", () => {
    configure({ [`CHAIN_${ID}_USD_AGGREGATOR`]: "0x1234" });
    expect(() => supportedChains()).toThrow("Chain configuration: CHAIN_31990_USD_AGGREGATOR must be a 0x-prefixed 20-byte address");
    configure({ LOCAL_CHAINS: SHARED_LOCAL, [`CHAIN_${ID}_USD_AGGREGATOR`]: "not an address" });
    expect(() => supportedChains()).toThrow("Chain configuration: CHAIN_31990_USD_AGGREGATOR must be a 0x-prefixed 20-byte address");
    configure({ CHAINS: JSON.stringify([{ chainId: 31991, rpcUrl: "http://127.0.0.1:9", usdAggregator: "0xnope" }]) });
    expect(() => supportedChains()).toThrow(/Chain configuration: CHAINS: .*usdAggregator/s);
    configure({});
    expect(supportedChains().map((c) => c.chainId)).toContain(ID);
  });
});
