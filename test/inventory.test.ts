import { InngestTestEngine } from "@inngest/test";
import Openfort from "@openfort/openfort-node";
import { and, eq } from "drizzle-orm";
import { createWalletClient, getAddress, http, parseEther, toHex, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testMultiTokenAbi, testMultiTokenBytecode, testNftAbi, testNftBytecode, testTokenAbi, testTokenBytecode } from "@/contracts/artifacts";
import { startAnvil, type AnvilNode } from "@/lib/chain/anvil";
import { publicClient, walletClient } from "@/lib/chain/clients";
import { viemChain, type ChainConfig } from "@/lib/chain/registry";
import { getDb } from "@/lib/db/client";
import { tokenTransfers } from "@/lib/db/schema";
import { indexChain } from "@/lib/inventory/indexer";
import { holdings } from "@/lib/inventory/service";
import type { ProjectWithKeys } from "@/lib/projects/service";
import { call, expectError, newProject } from "./helpers/api";
import { chainOf, clientOf, fundedWallet, mined } from "./helpers/chain";
import { routeServer } from "./helpers/sdk-server";
import { indexTokenTransfers, PASSES_PER_RUN } from "@/inngest/functions/inventory";
import { CRON_EVENT } from "@/inngest/runner";

const CHAIN = 31337;
let project: ProjectWithKeys;
let key: string;
let minter: Awaited<ReturnType<typeof fundedWallet>>;
let token: Address, nft: Address, multi: Address;
/** Registered contracts: the NFT with an empty ABI (so both inventories must work out what it is). */
const con = {} as Record<"token" | "nft" | "multi", string>;
let player: string;
let account: { id: string; address: Address };
const BIG_ID = 2n ** 60n;

const client = () => clientOf(CHAIN);

async function deploy(abi: readonly unknown[], bytecode: Hex, args: unknown[]): Promise<Address> {
  const hash = await minter.deployContract({ abi: abi as never, bytecode, args: args as never });
  return getAddress((await mined(CHAIN, hash)).contractAddress!);
}

const blockTime = async (hash: Hex) => Number((await client().getBlock({ blockHash: (await mined(CHAIN, hash)).blockHash })).timestamp);

/** Sends a transaction from the (counterfactual) account itself: anvil impersonates it. */
async function fromAccount(write: (wallet: ReturnType<typeof createWalletClient>) => Promise<Hex>) {
  await client().request({ method: "anvil_setBalance" as never, params: [account.address, toHex(parseEther("1"))] as never });
  await client().request({ method: "anvil_impersonateAccount" as never, params: [account.address] as never });
  try {
    const wallet = createWalletClient({ account: account.address, chain: viemChain(chainOf(CHAIN)), transport: http(chainOf(CHAIN).rpcUrl) });
    return await blockTime(await write(wallet));
  } finally {
    await client().request({ method: "anvil_stopImpersonatingAccount" as never, params: [account.address] as never });
  }
}

const get = (path: string, query: Record<string, unknown> | string = {}) =>
  typeof query === "string" ? call("GET", `${path}?${query}`, { key }) : call("GET", path, { key, query });

beforeAll(async () => {
  project = await newProject("inventory");
  key = project.keys.test.secret;
  minter = await fundedWallet(CHAIN);
  token = await deploy(testTokenAbi, testTokenBytecode, ["Gold", "GLD"]);
  nft = await deploy(testNftAbi, testNftBytecode, ["Heroes", "HERO"]);
  multi = await deploy(testMultiTokenAbi, testMultiTokenBytecode, ["https://example.com/{id}.json"]);
  const register = async (name: string, address: Address, abi: readonly unknown[]) =>
    (await call("POST", "/v1/contracts", { key, json: { name, chainId: CHAIN, address, abi } })).body.id as string;
  con.token = await register("Gold", token, testTokenAbi);
  con.nft = await register("Heroes", nft, []);
  con.multi = await register("Items", multi, testMultiTokenAbi);
  player = (await call("POST", "/v1/players", { key, form: { name: "holder" } })).body.id;
  account = (await call("POST", "/v1/accounts", { key, form: { chainId: CHAIN, player } })).body;
});

describe("inventories", () => {
  it("show native, ERC-20 and NFT holdings of a player's account and of the account, paginated and filtered; a transfer away removes a holding", async () => {
    await client().request({ method: "anvil_setBalance" as never, params: [account.address, toHex(parseEther("1.5"))] as never });
    for (const [path, query] of [[`/v1/players/${player}/inventory/native`, { chainId: CHAIN }], [`/v1/accounts/${account.id}/inventory/native`, {}]] as const) {
      const native = await get(path, query);
      expect(native.status, JSON.stringify(native.body)).toBe(200);
      expect(native.body).toEqual({ object: "inventory", url: path, data: { assetType: "ETH", amount: parseEther("1.5").toString(), lastTransferredAt: null } });
    }

    const minted = await blockTime(await minter.writeContract({ address: token, abi: testTokenAbi, functionName: "mint", args: [account.address, 1000n] }));
    const crypto = await get(`/v1/players/${player}/inventory/cryptocurrency`, { chainId: CHAIN });
    expect(crypto.status, JSON.stringify(crypto.body)).toBe(200);
    // The NFT (empty ABI) is tried as an ERC-20 too, and left out: it has no decimals().
    expect(crypto.body).toMatchObject({ object: "list", start: 0, end: 1, total: 1, data: [{ assetType: "ERC20", address: token, amount: "1000", lastTransferredAt: minted }] });

    const t1 = await blockTime(await minter.writeContract({ address: nft, abi: testNftAbi, functionName: "mint", args: [account.address, 1n] }));
    const t2 = await blockTime(await minter.writeContract({ address: nft, abi: testNftAbi, functionName: "mint", args: [account.address, BIG_ID] }));
    const t3 = await blockTime(await minter.writeContract({ address: multi, abi: testMultiTokenAbi, functionName: "mint", args: [account.address, 7n, 5n] }));
    const t4 = await blockTime(await minter.writeContract({ address: multi, abi: testMultiTokenAbi, functionName: "mintBatch", args: [account.address, [8n, 9n], [1n, 2n]] }));
    // Asked at once after the mints: the request brings the index up to the chain first.
    const all = await get(`/v1/players/${player}/inventory/nft`, { chainId: CHAIN, limit: 100 });
    expect(all.status, JSON.stringify(all.body)).toBe(200);
    expect(all.body.total).toBe(5);
    expect(new Set(all.body.data.map((i: object) => JSON.stringify(i)))).toEqual(
      new Set(
        [
          { assetType: "ERC721", address: nft, tokenId: 1, amount: "1", lastTransferredAt: t1 },
          // Beyond 2^53 the id is a decimal string.
          { assetType: "ERC721", address: nft, tokenId: BIG_ID.toString(), amount: "1", lastTransferredAt: t2 },
          { assetType: "ERC1155", address: multi, tokenId: 7, amount: "5", lastTransferredAt: t3 },
          { assetType: "ERC1155", address: multi, tokenId: 8, amount: "1", lastTransferredAt: t4 },
          { assetType: "ERC1155", address: multi, tokenId: 9, amount: "2", lastTransferredAt: t4 },
        ].map((i) => JSON.stringify(i)),
      ),
    );
    // Newest transfer first; asc is the reverse; pages are slices of the same order.
    const full = (await get(`/v1/accounts/${account.id}/inventory/nft`, { limit: 100 })).body.data as { lastTransferredAt: number }[];
    expect(full.map((i) => i.lastTransferredAt)).toEqual([...full.map((i) => i.lastTransferredAt)].sort((a, b) => b - a));
    const desc = (await get(`/v1/accounts/${account.id}/inventory/nft`, { limit: 2 })).body;
    expect(desc).toMatchObject({ start: 0, end: 2, total: 5, data: full.slice(0, 2) });
    const asc = (await get(`/v1/accounts/${account.id}/inventory/nft`, { limit: 2, skip: 1, order: "asc" })).body;
    expect(asc).toMatchObject({ start: 1, end: 3, total: 5, data: [...full].reverse().slice(1, 3) });

    // Filters: bracket, repeated and comma forms for players (contract), contractId for accounts.
    const only1155 = await get(`/v1/players/${player}/inventory/nft`, `chainId=${CHAIN}&contract[]=${con.multi}`);
    expect(only1155.body.total, JSON.stringify(only1155.body)).toBe(3);
    expect((await get(`/v1/players/${player}/inventory/nft`, `chainId=${CHAIN}&contract=${con.multi}&contract=${con.nft}`)).body.total).toBe(5);
    expect((await get(`/v1/players/${player}/inventory/nft`, `chainId=${CHAIN}&contract=${con.nft},${con.token}`)).body.total).toBe(2);
    expect((await get(`/v1/accounts/${account.id}/inventory/nft`, `contractId[]=${con.token}`)).body.total).toBe(0);
    expect((await get(`/v1/accounts/${account.id}/inventory/cryptocurrency`, `contractId[]=${con.multi}`)).body.total).toBe(0);

    // Moving tokens away: ERC-721 gone, ERC-1155 reduced.
    const other = privateKeyToAccount(generatePrivateKey()).address;
    await fromAccount((w) => w.writeContract({ address: nft, abi: testNftAbi, functionName: "transferFrom", args: [account.address, other, 1n], chain: null, account: account.address }));
    const moved = await fromAccount((w) =>
      w.writeContract({ address: multi, abi: testMultiTokenAbi, functionName: "safeTransferFrom", args: [account.address, other, 7n, 2n, "0x"], chain: null, account: account.address }),
    );
    const after = (await get(`/v1/accounts/${account.id}/inventory/nft`, { limit: 100 })).body;
    expect(after.total).toBe(4);
    expect(after.data.find((i: { tokenId: unknown }) => i.tokenId === 1)).toBeUndefined();
    expect(after.data.find((i: { tokenId: unknown }) => i.tokenId === 7)).toMatchObject({ amount: "3", lastTransferredAt: moved });
  }, 90_000);

  it("are indexed in the background: the cron function reads every registered contract's new transfers, six passes a run", async () => {
    await minter.writeContract({ address: nft, abi: testNftAbi, functionName: "mint", args: [account.address, 3n] }).then((h) => mined(CHAIN, h));
    const steps = Array.from({ length: PASSES_PER_RUN - 1 }, (_, i) => ({ id: `wait-${i}`, handler: () => null }));
    const { ctx } = await new InngestTestEngine({ function: indexTokenTransfers, events: [{ name: CRON_EVENT, data: { cron: "* * * * *" } }], steps }).execute();
    expect((ctx.step.run as unknown as { mock: { calls: unknown[][] } }).mock.calls.map((c) => c[0])).toEqual(Array.from({ length: PASSES_PER_RUN }, (_, i) => `pass-${i}`));
    const rows = await (await getDb())
      .select()
      .from(tokenTransfers)
      .where(and(eq(tokenTransfers.chainId, CHAIN), eq(tokenTransfers.contract, nft.toLowerCase()), eq(tokenTransfers.tokenId, "3")));
    expect(rows).toMatchObject([{ standard: "ERC721", toAddress: account.address.toLowerCase(), amount: "1" }]);
  }, 60_000); // on a database shared by the whole run it indexes every file's contracts: each pass is bounded to 8 s

  it("refuse bad input with 4xx naming the parameter; a player without an account on the chain holds nothing", async () => {
    expectError(await get(`/v1/players/pla_missing/inventory/nft`, { chainId: CHAIN }), 404);
    expectError(await get(`/v1/accounts/acc_missing/inventory/native`), 404);
    expect(expectError(await get(`/v1/players/${player}/inventory/native`, { chainId: 999 }), 400).details).toHaveProperty("chainId");
    expect(expectError(await get(`/v1/players/${player}/inventory/native`), 400).details).toHaveProperty("chainId");
    expect(expectError(await get(`/v1/players/${player}/inventory/nft`, { chainId: 31339 }), 400).details).toHaveProperty("chainId");
    expect(expectError(await get(`/v1/players/${player}/inventory/nft`, `chainId=${CHAIN}&contract[]=0xabc`), 400).details).toHaveProperty(["contract[0]"]);
    expect(expectError(await get(`/v1/accounts/${account.id}/inventory/nft`, { chainId: CHAIN }), 400).details).toHaveProperty("chainId");
    // Another project's contract is no contract of this one.
    const stranger = await newProject("inventory stranger");
    const theirs = (await call("POST", "/v1/contracts", { key: stranger.keys.test.secret, json: { name: "x", chainId: CHAIN, address: nft } })).body.id;
    const err = expectError(await get(`/v1/accounts/${account.id}/inventory/nft`, `contractId[]=${con.nft}&contractId[]=${theirs}`), 400);
    expect(err.details).toHaveProperty(["contractId[1]"]);
    // A contract on another chain does not belong in this chain's inventory.
    const elsewhere = (await call("POST", "/v1/contracts", { key, json: { name: "y", chainId: 31338, address: nft } })).body.id;
    expect(expectError(await get(`/v1/players/${player}/inventory/cryptocurrency`, `chainId=${CHAIN}&contract=${elsewhere}`), 400).details).toHaveProperty(["contract[0]"]);
    // No account on 31338: nothing there.
    expect((await get(`/v1/players/${player}/inventory/native`, { chainId: 31338 })).body.data).toMatchObject({ amount: "0" });
    expect((await get(`/v1/players/${player}/inventory/nft`, { chainId: 31338 })).body).toMatchObject({ total: 0, data: [] });
  });

  it("work through the official SDK", async () => {
    const server = await routeServer();
    try {
      const openfort = new Openfort(key, server.url);
      const native = await openfort.inventories.getAccountNativeInventory({ id: account.id });
      expect(native.data.assetType).toBe("ETH");
      const nfts = await openfort.inventories.getPlayerNftInventory({ id: player, chainId: CHAIN, contract: [con.multi, con.nft], limit: 10, order: "asc" });
      expect(nfts.total).toBe(5);
      expect((await openfort.inventories.getAccountNftInventory({ id: account.id, contractId: [con.multi], skip: 1 })).data).toHaveLength(2);
      const tokens = await openfort.inventories.getPlayerCryptoCurrencyInventory({ id: player, chainId: CHAIN });
      expect(tokens.data[0]).toMatchObject({ assetType: "ERC20", amount: "1000" });
      expect((await openfort.inventories.getAccountCryptoCurrencyInventory({ id: account.id, contractId: [con.token] })).total).toBe(1);
      expect((await openfort.inventories.getPlayerNativeInventory({ id: player, chainId: CHAIN })).object).toBe("inventory");
    } finally {
      await server.close();
    }
  });

  it("are rate limited per project as chain work (429 with Retry-After)", async () => {
    const saved = process.env.RATE_LIMIT_EXPENSIVE_PER_SECOND;
    process.env.RATE_LIMIT_EXPENSIVE_PER_SECOND = "0.1"; // one per 10 s window
    try {
      const statuses: { status: number; retryAfter: string | null }[] = [];
      for (let i = 0; i < 3; i++) {
        const res = await get(`/v1/accounts/${account.id}/inventory/native`);
        statuses.push({ status: res.status, retryAfter: res.headers.get("retry-after") });
      }
      const limited = statuses.find((s) => s.status === 429);
      expect(limited, JSON.stringify(statuses)).toBeDefined();
      expect(Number(limited!.retryAfter)).toBeGreaterThan(0);
    } finally {
      if (saved === undefined) delete process.env.RATE_LIMIT_EXPENSIVE_PER_SECOND;
      else process.env.RATE_LIMIT_EXPENSIVE_PER_SECOND = saved;
    }
  });
});

describe("the transfer index", () => {
  // evm_revert rewinds a whole chain: this runs on an anvil of its own, not the shared test chains.
  let node: AnvilNode;
  let chain: ChainConfig;
  afterAll(async () => node?.stop());

  it("stores each transfer once under concurrent runs and survives a reorg: a transfer in a reverted block disappears", async () => {
    node = await startAnvil({ chainId: 31393, port: 0, blockTime: 0 });
    chain = { chainId: 31393, name: "Reorgs (anvil)", rpcUrl: node.rpcUrl, livemode: false, nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 }, dev: true, local: null, bundlerUrl: null, deployerKey: null, usdPrice: null };
    const rpc = (method: string, params: unknown[] = []) => publicClient(chain).request({ method: method as never, params: params as never });
    const fresh = () => privateKeyToAccount(generatePrivateKey());
    const [holder, taker, late] = [fresh(), fresh(), fresh()];
    for (const a of [holder, taker]) await rpc("anvil_setBalance", [a.address, toHex(parseEther("1"))]);
    const send = async (hash: Hex) => publicClient(chain).waitForTransactionReceipt({ hash });
    const wallet = walletClient(chain, holder);
    const nftHere = (await send(await wallet.deployContract({ abi: testNftAbi, bytecode: testNftBytecode, args: ["R", "R"] }))).contractAddress!;
    await send(await wallet.writeContract({ address: nftHere, abi: testNftAbi, functionName: "mint", args: [holder.address, 1n] }));
    const db = await getDb();
    await Promise.all([indexChain(db, chain, [nftHere]), indexChain(db, chain, [nftHere])]);
    const stored = () => db.select().from(tokenTransfers).where(and(eq(tokenTransfers.chainId, chain.chainId), eq(tokenTransfers.contract, nftHere.toLowerCase())));
    expect(await stored()).toHaveLength(1);
    const held = async (who: Address) => (await holdings(db, chain.chainId, [nftHere], who, { limit: 10 })).items.map((i) => i.tokenId);

    const saved = process.env.INVENTORY_REORG_DEPTH;
    process.env.INVENTORY_REORG_DEPTH = "1";
    try {
      const snapshot = await rpc("evm_snapshot");
      await send(await wallet.writeContract({ address: nftHere, abi: testNftAbi, functionName: "transferFrom", args: [holder.address, taker.address, 1n] }));
      await indexChain(db, chain, [nftHere]);
      expect(await held(taker.address)).toEqual([1]);
      expect(await held(holder.address)).toEqual([]);

      // The block with that transfer is replaced by one with another transaction, and the chain grows past it.
      await rpc("evm_revert", [snapshot]);
      await send(await walletClient(chain, taker).writeContract({ address: nftHere, abi: testNftAbi, functionName: "mint", args: [late.address, 2n] }));
      await rpc("anvil_mine", ["0x2"]);
      const summary = await indexChain(db, chain, [nftHere]);
      expect(summary).toMatchObject({ rewound: 1, caughtUp: true });
      expect(await held(taker.address)).toEqual([]);
      expect(await held(holder.address)).toEqual([1]);
      expect(await held(late.address)).toEqual([2]);
      expect(await stored()).toHaveLength(2);
    } finally {
      if (saved === undefined) delete process.env.INVENTORY_REORG_DEPTH;
      else process.env.INVENTORY_REORG_DEPTH = saved;
    }
  }, 60_000);
});
