import { afterAll, beforeAll, expect, test } from "vitest";
import { encodeFunctionData, getAbiItem, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { accountFactoryAbi, entryPointAbi } from "@/contracts/artifacts";
import { startAnvil, type AnvilNode } from "./anvil";
import { publicClient } from "./clients";
import { prepareChain } from "@/lib/prepare-chains";
import { serviceDeployment } from "./contracts";
import { enqueue } from "./relayer";
import { configureRelayer, executorAddresses, relayerEvents } from "./relayer/testing";
import type { ChainConfig } from "./registry";
import { freshAccount, signedOp } from "./testing";
import { encodeAccountCalls, userOperationHash, type Fees } from "./userop";

// Mining is switched off here, so this file runs its own anvil rather than one the other test files share.
let node: AnvilNode;
let chain: ChainConfig;

beforeAll(async () => {
  node = await startAnvil({ chainId: 31390, port: 0 });
  chain = {
    chainId: 31390,
    name: "Stuck transactions (anvil)",
    rpcUrl: node.rpcUrl,
    livemode: false,
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    dev: true,
    local: null,
    bundlerUrl: null,
    deployerKey: null,
    usdPrice: null,
  };
  await prepareChain(chain);
  configureRelayer({ executorOffset: 30, bumpAfterMs: 300 });
});

afterAll(async () => {
  await node?.stop();
});

const rpc = (method: string, params: unknown[] = []) => publicClient(chain).request({ method: method as never, params: params as never });

test("a bundle stuck in the mempool is resubmitted with the same nonce and fees +12.5% until mined, and lands once", async () => {
  const client = publicClient(chain);
  const op = await signedOp(chain, freshAccount(), {
    callData: encodeAccountCalls([
      {
        to: serviceDeployment().accountFactory,
        value: 0n,
        data: encodeFunctionData({ abi: accountFactoryAbi, functionName: "createAccount", args: [privateKeyToAccount(generatePrivateKey()).address, generatePrivateKey()] }),
      },
    ]),
    sponsored: true,
  });
  const hash = userOperationHash(chain, op);
  const executors = executorAddresses(chain);
  const noncesBefore = await Promise.all(executors.map((address) => client.getTransactionCount({ address, blockTag: "latest" })));

  // Nothing is mined until we say so.
  await rpc("evm_setIntervalMining", [0]);
  await rpc("evm_setAutomine", [false]);
  const sent: { transactionHash: Hex; nonce: bigint; fees: Fees; replaces?: Hex }[] = [];
  const onSent = (event: (typeof sent)[number]) => sent.push(event);
  relayerEvents().on("bundle:sent", onSent);
  try {
    const started = Date.now();
    const relayed = enqueue(chain, op);
    while (sent.length < 3) {
      if (Date.now() - started > 10_000) throw new Error(`only ${sent.length} submissions after 10 s`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    // The node holds one transaction for the executor: each replacement evicted the previous one.
    const status = (await rpc("txpool_status")) as { pending: Hex };
    expect(Number(status.pending)).toBe(1);
    await rpc("evm_mine");
    const result = await relayed;

    const [first, ...bumps] = sent;
    expect(bumps.every((b) => b.nonce === first!.nonce)).toBe(true);
    expect(bumps.map((b) => b.replaces)).toEqual(sent.slice(0, -1).map((s) => s.transactionHash));
    for (let i = 1; i < sent.length; i++) {
      expect(sent[i]!.fees.maxFeePerGas * 1000n).toBeGreaterThanOrEqual(sent[i - 1]!.fees.maxFeePerGas * 1125n);
      expect(sent[i]!.fees.maxPriorityFeePerGas * 1000n).toBeGreaterThanOrEqual(sent[i - 1]!.fees.maxPriorityFeePerGas * 1125n);
    }
    // What was mined is the newest replacement; the earlier ones never will be.
    const minedHash = result.transactionHash;
    expect(sent.map((s) => s.transactionHash)).toContain(minedHash);
    const mined = await client.getTransaction({ hash: minedHash });
    expect(mined.maxFeePerGas! * 1000n).toBeGreaterThanOrEqual(first!.fees.maxFeePerGas * 1125n);
    for (const s of sent.filter((s) => s.transactionHash !== minedHash)) {
      await expect(client.getTransactionReceipt({ hash: s.transactionHash })).rejects.toThrow();
    }
    expect(result.receipt.success).toBe(true);

    // Landed exactly once, and the executor used exactly one nonce.
    const events = await client.getLogs({
      address: serviceDeployment().entryPoint,
      event: getAbiItem({ abi: entryPointAbi, name: "UserOperationEvent" }),
      args: { userOpHash: hash },
      fromBlock: 0n,
    });
    expect(events).toHaveLength(1);
    const noncesAfter = await Promise.all(executors.map((address) => client.getTransactionCount({ address, blockTag: "latest" })));
    expect(noncesAfter.reduce((a, b) => a + b, 0) - noncesBefore.reduce((a, b) => a + b, 0)).toBe(1);
  } finally {
    relayerEvents().off("bundle:sent", onSent);
    await rpc("evm_setAutomine", [true]);
  }
});

/** A sponsored op of a fresh account that deploys it and calls nothing else: a real op, a few hundred thousand gas. */
const simpleOp = () => signedOp(chain, freshAccount(), { callData: "0x", sponsored: true });

/** The executors' transactions the node holds in its pool (pending and queued). */
async function pooled(): Promise<number> {
  const content = (await rpc("txpool_content")) as { pending: Record<string, object>; queued: Record<string, object> };
  const ours = new Set(executorAddresses(chain).map((a) => a.toLowerCase()));
  let n = 0;
  for (const section of [content.pending, content.queued]) {
    for (const [from, txs] of Object.entries(section)) if (ours.has(from.toLowerCase())) n += Object.keys(txs).length;
  }
  return n;
}

test("a reorg that takes an executor's mined bundle: its next bundle takes the freed nonce, never waits above it", async () => {
  configureRelayer({ executors: 1, executorOffset: 40 });
  const client = publicClient(chain);
  const [executor] = executorAddresses(chain);
  await enqueue(chain, await simpleOp());
  const snapshot = await rpc("evm_snapshot");
  const before = await client.getTransactionCount({ address: executor!, blockTag: "latest" });
  const first = await enqueue(chain, await simpleOp());
  expect(await client.getTransactionCount({ address: executor!, blockTag: "latest" })).toBe(before + 1);
  // The block with that bundle leaves the chain: the executor's nonce on chain is back where it was.
  await rpc("evm_revert", [snapshot]);
  await rpc("anvil_mine", ["0x2"]);
  await expect(client.getTransactionReceipt({ hash: first.transactionHash })).rejects.toThrow();
  const sent: { nonce: bigint }[] = [];
  const onSent = (event: { nonce: bigint }) => sent.push(event);
  relayerEvents().on("bundle:sent", onSent);
  try {
    const started = Date.now();
    const next = await enqueue(chain, await simpleOp());
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(sent[0]!.nonce).toBe(BigInt(before));
    expect((await client.getTransactionReceipt({ hash: next.transactionHash })).status).toBe("success");
    expect(await pooled()).toBe(0);
  } finally {
    relayerEvents().off("bundle:sent", onSent);
  }
}, 60_000);

test("the node loses a nonce below a waiting bundle (a reorg took the block): the gap is filled within a few blocks and the bundle lands", async () => {
  configureRelayer({ executors: 1, executorOffset: 41, bumpAfterMs: 60_000 });
  const client = publicClient(chain);
  const [executor] = executorAddresses(chain);
  await enqueue(chain, await simpleOp());
  const snapshot = await rpc("evm_snapshot");
  const gone = await enqueue(chain, await simpleOp()); // mined at nonce n, then reorged away
  const filled: { nonce: bigint }[] = [];
  const onFilled = (event: { nonce: bigint }) => filled.push(event);
  relayerEvents().on("nonce:filled", onFilled);
  await rpc("evm_setAutomine", [false]);
  try {
    const waiting = enqueue(chain, await simpleOp()); // sent at n + 1, not mined yet
    for (let i = 0; i < 100 && (await pooled()) < 1; i++) await new Promise((resolve) => setTimeout(resolve, 50));
    await rpc("evm_revert", [snapshot]);
    const n = BigInt(await client.getTransactionCount({ address: executor!, blockTag: "latest" }));
    await expect(client.getTransactionReceipt({ hash: gone.transactionHash })).rejects.toThrow();
    // Blocks come again, one a second: nothing of ours can be mined at n + 1 until n is used.
    await rpc("evm_setIntervalMining", [1]);
    const started = Date.now();
    const landed = await waiting;
    expect(Date.now() - started).toBeLessThan(30_000);
    expect((await client.getTransactionReceipt({ hash: landed.transactionHash })).status).toBe("success");
    expect(filled.map((f) => f.nonce)).toContain(n);
    expect(await pooled()).toBe(0);
  } finally {
    relayerEvents().off("nonce:filled", onFilled);
    await rpc("evm_setIntervalMining", [0]);
    await rpc("evm_setAutomine", [true]);
  }
}, 60_000);
