import factoryBuild from "@uniswap/v2-core/build/UniswapV2Factory.json";
import routerBuild from "@uniswap/v2-periphery/build/UniswapV2Router02.json";
import wethBuild from "@uniswap/v2-periphery/build/WETH9.json";
import {
  concat,
  encodeAbiParameters,
  encodeDeployData,
  getContractAddress,
  maxUint256,
  parseEther,
  zeroAddress,
  type Account,
  type Address,
  type Chain,
  type Hex,
  type PublicClient,
  type Transport,
  type WalletClient,
} from "viem";
import { testTokenAbi, testTokenBytecode } from "@/contracts/artifacts";
import { CREATE2_DEPLOYER, DEPLOY_SALT } from "@/lib/chain/deployment";
import { factoryAbi, pairAbi, routerAbi } from "./abi";

/** A demo ERC-20 of the local exchange (our TestToken: anyone may mint it). */
export interface DemoToken {
  name: string;
  symbol: string;
  decimals: 18;
  address: Address;
}

/** Uniswap v2 on a local chain: the same addresses on every local chain of every installation. */
export interface LocalExchange {
  factory: Address;
  weth: Address;
  router: Address;
  tokens: [DemoToken, DemoToken];
}

interface Piece {
  name: string;
  initCode: Hex;
  address: Address;
}

/** The npm builds carry their bytecode without the 0x prefix. */
const bytecodeOf = (build: { bytecode: string }): Hex => (build.bytecode.startsWith("0x") ? build.bytecode : `0x${build.bytecode}`) as Hex;

const piece = (name: string, initCode: Hex): Piece => ({
  name,
  initCode,
  address: getContractAddress({ opcode: "CREATE2", from: CREATE2_DEPLOYER, salt: DEPLOY_SALT, bytecode: initCode }),
});

const DEMO_TOKENS = [
  { name: "Demo Gold", symbol: "GOLD" },
  { name: "Demo Gem", symbol: "GEM" },
] as const;

let memo: { pieces: Piece[]; exchange: LocalExchange } | undefined;

/**
 * What to deploy, in dependency order. The factory's feeToSetter is the zero address: nobody can ever
 * switch the protocol fee on, and no installation key enters the addresses, so they are the same everywhere.
 */
function plan(): { pieces: Piece[]; exchange: LocalExchange } {
  if (memo) return memo;
  const weth = piece("WETH9", bytecodeOf(wethBuild));
  const factory = piece("UniswapV2Factory", concat([bytecodeOf(factoryBuild), encodeAbiParameters([{ type: "address" }], [zeroAddress])]));
  const router = piece(
    "UniswapV2Router02",
    concat([bytecodeOf(routerBuild), encodeAbiParameters([{ type: "address" }, { type: "address" }], [factory.address, weth.address])]),
  );
  const tokens = DEMO_TOKENS.map((t) => piece(t.symbol, encodeDeployData({ abi: testTokenAbi, bytecode: testTokenBytecode, args: [t.name, t.symbol] })));
  const [gold, gem] = DEMO_TOKENS.map((t, i) => ({ ...t, decimals: 18 as const, address: tokens[i]!.address }));
  memo = { pieces: [weth, factory, router, ...tokens], exchange: { factory: factory.address, weth: weth.address, router: router.address, tokens: [gold!, gem!] } };
  return memo;
}

/** Where the local exchange lives (deployed or not). */
export const localExchange = (): LocalExchange => plan().exchange;

/**
 * Each pool's liquidity: 1 ETH = 1000 GOLD = 50 GEM, deep enough that a test's swap barely moves the price.
 * GOLD/GEM is priced like the two WETH pools, so the two-hop route through WETH and the direct one agree.
 */
const POOLS = (gold: Address, gem: Address, weth: Address) => [
  { a: gold, b: weth, amountA: parseEther("1000000"), amountB: parseEther("1000") },
  { a: gem, b: weth, amountA: parseEther("50000"), amountB: parseEther("1000") },
  { a: gold, b: gem, amountA: parseEther("200000"), amountB: parseEther("10000") },
];

type Wallet = WalletClient<Transport, Chain | undefined, Account>;

async function hasCode(client: PublicClient, address: Address) {
  const code = await client.getCode({ address });
  return code !== undefined && code !== "0x";
}

async function send(client: PublicClient, wallet: Wallet, what: string, request: Promise<Hex>) {
  const hash = await request;
  const receipt = await client.waitForTransactionReceipt({ hash });
  if (receipt.status !== "success") throw new Error(`${what} reverted (transaction ${hash})`);
}

/**
 * Deploys what is missing of the local exchange through the CREATE2 deployer and adds liquidity to the pools
 * that are missing or empty; a second run changes nothing. Only for development chains: the deployer mints
 * the demo tokens it pools and pays the ETH side from its (anvil-funded) balance. Returns what it did.
 */
export async function ensureLocalExchange(client: PublicClient, wallet: Wallet): Promise<{ exchange: LocalExchange; deployed: string[]; pooled: string[] }> {
  const { pieces, exchange } = plan();
  const deployed: string[] = [];
  for (const p of pieces) {
    if (await hasCode(client, p.address)) continue;
    try {
      await send(client, wallet, `Deploying ${p.name}`, wallet.sendTransaction({ account: wallet.account, chain: wallet.chain, to: CREATE2_DEPLOYER, data: concat([DEPLOY_SALT, p.initCode]) }));
    } catch (err) {
      // Another process preparing the chain may have deployed it first: the CREATE2 address is the same.
      if (!(await hasCode(client, p.address))) throw err;
      continue;
    }
    if (!(await hasCode(client, p.address))) throw new Error(`Deploying ${p.name} left no code at ${p.address}`);
    deployed.push(p.name);
  }

  const [gold, gem] = exchange.tokens;
  const symbols = new Map<Address, string>([[gold.address, "GOLD"], [gem.address, "GEM"], [exchange.weth, "WETH"]]);
  const pools = POOLS(gold.address, gem.address, exchange.weth);
  const empty = [];
  for (const pool of pools) {
    const pair = await client.readContract({ address: exchange.factory, abi: factoryAbi, functionName: "getPair", args: [pool.a, pool.b] });
    if (pair !== zeroAddress) {
      const [r0] = await client.readContract({ address: pair, abi: pairAbi, functionName: "getReserves" });
      if (r0 > 0n) continue;
    }
    empty.push(pool);
  }
  const me = wallet.account.address;
  for (const token of [gold, gem]) {
    const needed = empty.reduce((sum, p) => sum + (p.a === token.address ? p.amountA : 0n) + (p.b === token.address ? p.amountB : 0n), 0n);
    if (needed === 0n) continue;
    await send(client, wallet, `Minting ${token.symbol}`, wallet.writeContract({ account: wallet.account, chain: wallet.chain, address: token.address, abi: testTokenAbi, functionName: "mint", args: [me, needed] }));
    await send(client, wallet, `Approving ${token.symbol}`, wallet.writeContract({ account: wallet.account, chain: wallet.chain, address: token.address, abi: testTokenAbi, functionName: "approve", args: [exchange.router, needed] }));
  }
  const pooled: string[] = [];
  for (const pool of empty) {
    const name = `${symbols.get(pool.a)}/${symbols.get(pool.b)}`;
    const base = { account: wallet.account, chain: wallet.chain, address: exchange.router, abi: routerAbi } as const;
    await send(
      client,
      wallet,
      `Adding ${name} liquidity`,
      pool.b === exchange.weth
        ? wallet.writeContract({ ...base, functionName: "addLiquidityETH", args: [pool.a, pool.amountA, pool.amountA, pool.amountB, me, maxUint256], value: pool.amountB })
        : wallet.writeContract({ ...base, functionName: "addLiquidity", args: [pool.a, pool.b, pool.amountA, pool.amountB, 0n, 0n, me, maxUint256] }),
    );
    pooled.push(name);
  }
  return { exchange, deployed, pooled };
}
