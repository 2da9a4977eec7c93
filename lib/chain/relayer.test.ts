import { afterAll, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { encodeFunctionData, keccak256, parseEther, toHex, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { accountFactoryAbi } from "@/contracts/artifacts";
import { serviceAccount } from "@/lib/keys/service-keys";
import { startAlto, type AltoBundler } from "@/test/helpers/alto";
import { loopbackServer } from "@/test/helpers/loopback-server";
import { chainOf, clientOf } from "@/test/helpers/chain";
import { serviceDeployment } from "./contracts";
import type { ChainConfig } from "./registry";
import { enqueue, findUserOperationReceipt, UserOperationReceiptTimeoutError, type RelayResult } from "./relayer";
import {
  configureRelayer,
  executorAddresses,
  relayerEvents,
  relayerStatus,
  resetRelayer,
  submitUserOperations,
  waitForUserOperationReceipt,
} from "./relayer/testing";
import { freshAccount, signedOp, type TestAccount } from "./testing";
import { encodeAccountCalls, UserOperationRejectedError, userOperationHash } from "./userop";

const chain = chainOf(31338);
const client = clientOf(31338);
const EXECUTOR_OFFSET = 20;

beforeAll(() => {
  // Test files run in parallel processes sharing the master key (so the executor keys): each file takes its own.
  configureRelayer({ executorOffset: EXECUTOR_OFFSET, executors: 3 });
});

const newOwnerCall = () => ({
  to: serviceDeployment().accountFactory,
  value: 0n,
  data: encodeFunctionData({
    abi: accountFactoryAbi,
    functionName: "createAccount",
    args: [privateKeyToAccount(generatePrivateKey()).address, generatePrivateKey()],
  }),
});

const transferTo = (to: Address, value = 1n) => encodeAccountCalls([{ to, value: 0n, data: "0x" }, { to, value, data: "0x" }]);

async function deployedAccount(): Promise<TestAccount> {
  const account = freshAccount();
  const { receipt } = await enqueue(chain, await signedOp(chain, account, { callData: encodeAccountCalls([newOwnerCall()]), sponsored: true }));
  expect(receipt.success).toBe(true);
  await client.request({ method: "anvil_setBalance" as never, params: [account.address, toHex(parseEther("1"))] as never });
  return { ...account, initCode: "0x" };
}

type RpcCall = { id: number; method: string; params?: [{ to?: string }] };

const nonceCount = (address: Address) => client.getTransactionCount({ address, blockTag: "pending" });

describe("bundling", () => {
  test("50 concurrent ops of one account (2D nonce keys) land in a few bundles, each nonce once", async () => {
    const account = await deployedAccount();
    const recipient = privateKeyToAccount(generatePrivateKey()).address;
    const results = await Promise.all(
      Array.from({ length: 50 }, async (_, i): Promise<RelayResult> => {
        const op = await signedOp(chain, account, { callData: transferTo(recipient), sponsored: i % 2 === 0, nonceKey: BigInt(i + 1) });
        return enqueue(chain, op);
      }),
    );
    expect(results.every((r) => r.receipt.success)).toBe(true);
    expect(new Set(results.map((r) => r.receipt.nonce)).size).toBe(50);
    expect(results.map((r) => r.receipt.nonce >> 64n).sort((a, b) => Number(a - b))).toEqual(Array.from({ length: 50 }, (_, i) => BigInt(i + 1)));
    expect(await client.getBalance({ address: recipient })).toBe(50n);

    const bundles = new Map<Hex, number>();
    for (const r of results) bundles.set(r.transactionHash, r.bundleSize);
    const sizes = [...bundles.values()];
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(50);
    expect(Math.max(...sizes)).toBeGreaterThan(1);
    expect(bundles.size).toBeLessThanOrEqual(10);
  });

  test("an op failing validation is dropped with its error; the others in its bundle land", async () => {
    const accounts = [freshAccount(), freshAccount(), freshAccount()];
    const stranger = privateKeyToAccount(generatePrivateKey());
    const ops = await Promise.all(
      accounts.map((account, i) => signedOp(chain, account, { callData: encodeAccountCalls([newOwnerCall()]), sponsored: true }, i === 1 ? stranger : account.owner)),
    );
    const outcomes = await Promise.allSettled(ops.map((op) => enqueue(chain, op)));
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    const [first, bad, third] = outcomes as [PromiseFulfilledResult<RelayResult>, PromiseRejectedResult, PromiseFulfilledResult<RelayResult>];
    expect(bad.reason).toBeInstanceOf(UserOperationRejectedError);
    expect((bad.reason as UserOperationRejectedError).code).toBe("AA24");
    expect(first.value.transactionHash).toBe(third.value.transactionHash);
    expect(first.value.bundleSize).toBe(2);

    // submitUserOperations reports the same split directly.
    const again = await Promise.all(
      [freshAccount(), freshAccount()].map((account, i) => signedOp(chain, account, { callData: encodeAccountCalls([newOwnerCall()]), sponsored: true }, i === 0 ? stranger : account.owner)),
    );
    const bundle = await submitUserOperations(chain, again);
    expect(bundle.included.map((r) => r.userOpHash)).toEqual([userOperationHash(chain, again[1]!)]);
    expect(bundle.dropped.map((d) => d.userOpHash)).toEqual([userOperationHash(chain, again[0]!)]);
    expect(executorAddresses(chain)).toContain(bundle.executor);
    expect((await client.getTransactionReceipt({ hash: bundle.transactionHash })).status).toBe("success");

    // Every op dropped: the first one's error.
    await expect(submitUserOperations(chain, [again[0]!])).rejects.toBeInstanceOf(UserOperationRejectedError);
  });

  test("ops built to run after their account's deployment share a bundle with the deploying op, which goes first whatever the nonces", async () => {
    const account = freshAccount();
    const recipient = privateKeyToAccount(generatePrivateKey()).address;
    // The deploying op has the largest nonce key: nonce order alone would put it last, and the others would fail AA20.
    const deployer = await signedOp(chain, account, { callData: transferTo(recipient, 0n), sponsored: true, nonceKey: 99n });
    const after = await Promise.all(
      [1n, 2n, 3n].map((nonceKey) => signedOp(chain, account, { callData: transferTo(recipient, 0n), sponsored: true, nonceKey, deployedFirst: true })),
    );
    expect(after.every((op) => op.initCode === "0x")).toBe(true);
    const bundle = await submitUserOperations(chain, [...after, deployer]);
    expect(bundle.dropped).toEqual([]);
    expect(bundle.included.map((r) => r.userOpHash)).toEqual([deployer, ...after].map((op) => userOperationHash(chain, op)));
    expect(bundle.included.every((r) => r.receipt.success && r.transactionHash === bundle.transactionHash)).toBe(true);
  });

  test("a bundle above maxBundleGas is split", async () => {
    const ops = await Promise.all(
      Array.from({ length: 4 }, () => signedOp(chain, freshAccount(), { callData: encodeAccountCalls([newOwnerCall()]), sponsored: true })),
    );
    configureRelayer({ maxBundleGas: 1_000_000n });
    try {
      const results = await Promise.all(ops.map((op) => enqueue(chain, op)));
      expect(results.every((r) => r.receipt.success)).toBe(true);
      const bundles = new Set(results.map((r) => r.transactionHash));
      expect(bundles.size).toBeGreaterThan(1);
      for (const hash of bundles) expect((await client.getTransaction({ hash })).gas).toBeLessThanOrEqual(1_000_000n);
    } finally {
      configureRelayer({ maxBundleGas: 10_000_000n });
    }
  });

  test("one op at a time, enqueue to receipt, each in a bundle of its own", async () => {
    const account = await deployedAccount();
    for (let i = 0; i < 5; i++) {
      const op = await signedOp(chain, account, { callData: transferTo(account.owner.address), sponsored: true });
      const { receipt, bundleSize } = await enqueue(chain, op);
      expect(receipt.success).toBe(true);
      expect(bundleSize).toBe(1);
    }
  });

  test("one op whose simulation reverts without data: AA20 when its account has no code, else simulated again at the next block", async () => {
    // Built to run after a deployment that is not in its bundle (undone by a reorg): neither code nor initCode. v0.6
    // reverts without data there; the op's real cause is named, so its intent waits for the deployment.
    const orphan = await signedOp(chain, freshAccount(), { callData: transferTo(freshAccount().address, 0n), sponsored: true, deployedFirst: true });
    const refused = await submitUserOperations(chain, [orphan]).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(UserOperationRejectedError);
    expect((refused as UserOperationRejectedError).code).toBe("AA20");

    // A node whose state is in motion (right after a reorg): its first simulation of handleOps reverts without data.
    const { entryPoint } = serviceDeployment();
    let simulations = 0;
    const node = await loopbackServer((req, res) => {
      let body = "";
      req.on("data", (chunk) => (body += chunk));
      req.on("end", async () => {
        // The transport batches its calls: a JSON-RPC batch of one, or a single call.
        const asked = JSON.parse(body) as RpcCall | RpcCall[];
        const calls = Array.isArray(asked) ? asked : [asked];
        const simulation = calls.find((c) => c.method === "eth_estimateGas" && c.params?.[0]?.to?.toLowerCase() === entryPoint.toLowerCase());
        if (calls.length === 1 && simulation && simulations++ === 0) {
          const reverted = { jsonrpc: "2.0", id: simulation.id, error: { code: 3, message: "execution reverted", data: "0x" } };
          return void res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(Array.isArray(asked) ? [reverted] : reverted));
        }
        const answer = await fetch(chain.rpcUrl, { method: "POST", headers: { "content-type": "application/json" }, body });
        res.writeHead(answer.status, { "content-type": "application/json" }).end(await answer.text());
      });
    });
    try {
      const op = await signedOp(chain, freshAccount(), { callData: encodeAccountCalls([newOwnerCall()]), sponsored: true });
      const bundle = await submitUserOperations({ ...chain, rpcUrl: node.url }, [op]);
      expect(bundle.dropped).toEqual([]);
      expect(bundle.included.map((r) => [r.userOpHash, r.receipt.success])).toEqual([[userOperationHash(chain, op), true]]);
      expect(simulations).toBe(2);
    } finally {
      await node.close();
    }
  });

  test("the same op enqueued twice shares one outcome", async () => {
    const op = await signedOp(chain, freshAccount(), { callData: encodeAccountCalls([newOwnerCall()]), sponsored: true });
    const [a, b] = await Promise.all([enqueue(chain, op), enqueue(chain, op)]);
    expect(a).toBe(b);
    expect(a.receipt.success).toBe(true);
  });
});

describe("executors and nonces", () => {
  test("concurrent bundles from several executors never collide on nonces, even when a nonce is taken behind the relayer's back", async () => {
    const executors = executorAddresses(chain);
    expect(executors).toEqual([0, 1, 2].map((i) => serviceAccount(`executor-${EXECUTOR_OFFSET + i}`).address));
    // Warm up so the relayer tracks the executors' nonces locally, then use one of them outside the relayer.
    await Promise.all(
      [0, 1, 2].map(async () => submitUserOperations(chain, [await signedOp(chain, freshAccount(), { callData: encodeAccountCalls([newOwnerCall()]), sponsored: true })])),
    );
    const stolen = serviceAccount(`executor-${EXECUTOR_OFFSET}`);
    const hash = await client.sendRawTransaction({
      serializedTransaction: await stolen.signTransaction({
        chainId: chain.chainId,
        type: "eip1559",
        to: stolen.address,
        nonce: await nonceCount(stolen.address),
        gas: 21_000n,
        maxFeePerGas: parseEther("0.00000001"),
        maxPriorityFeePerGas: 1_000_000_000n,
      }),
    });
    await client.waitForTransactionReceipt({ hash });

    const before = await Promise.all(executors.map(nonceCount));
    const ops = await Promise.all(
      Array.from({ length: 12 }, () => signedOp(chain, freshAccount(), { callData: encodeAccountCalls([newOwnerCall()]), sponsored: true })),
    );
    const bundles = await Promise.all(ops.map((op) => submitUserOperations(chain, [op])));
    const txs = await Promise.all(bundles.map((b) => client.getTransaction({ hash: b.transactionHash })));
    const receipts = await Promise.all(bundles.map((b) => client.getTransactionReceipt({ hash: b.transactionHash })));
    expect(receipts.every((r) => r.status === "success")).toBe(true);
    expect(bundles.every((b) => b.included[0]!.receipt.success)).toBe(true);

    const used = txs.map((tx) => `${tx.from.toLowerCase()}:${tx.nonce}`);
    expect(new Set(used).size).toBe(12);
    const perExecutor = executors.map((e) => txs.filter((tx) => tx.from.toLowerCase() === e.toLowerCase()).map((tx) => tx.nonce).sort((a, b) => a - b));
    expect(perExecutor.filter((n) => n.length > 0).length).toBeGreaterThanOrEqual(2);
    // Each executor's nonces follow on from where it stood, without gaps.
    const after = await Promise.all(executors.map(nonceCount));
    perExecutor.forEach((nonces, i) => {
      expect(nonces).toEqual(Array.from({ length: nonces.length }, (_, k) => before[i]! + k));
      expect(after[i]).toBe(before[i]! + nonces.length);
    });
  });

  test("executors are funded on dev chains and reported with their balances", async () => {
    const status = await relayerStatus(chain);
    expect(status.map((s) => s.address)).toEqual(executorAddresses(chain));
    for (const s of status) expect(s.balance).toBeGreaterThan(0n);
  });
});

describe("receipts and restarts", () => {
  test("after a restart, an op that already landed is found and not sent again", async () => {
    const op = await signedOp(chain, freshAccount(), { callData: encodeAccountCalls([newOwnerCall()]), sponsored: true });
    const hash = userOperationHash(chain, op);
    const fromBlock = await client.getBlockNumber();
    const sent = await enqueue(chain, op);

    resetRelayer();
    configureRelayer({ executorOffset: EXECUTOR_OFFSET });
    const executors = executorAddresses(chain);
    const nonces = await Promise.all(executors.map(nonceCount));

    // What the durable layer does before resubmitting: look first.
    const found = await findUserOperationReceipt(chain, hash);
    expect(found).toEqual(sent.receipt);
    expect(await findUserOperationReceipt(chain, hash, { fromBlock })).toEqual(sent.receipt);
    expect(await waitForUserOperationReceipt(chain, hash, { fromBlock, timeoutMs: 1_000 })).toEqual(sent.receipt);
    // Resubmitted anyway: the simulation says its nonce is used, the receipt is found, nothing is sent.
    const again = await enqueue(chain, op);
    expect(again.transactionHash).toBe(sent.transactionHash);
    expect(again.receipt).toEqual(sent.receipt);
    expect(await Promise.all(executors.map(nonceCount))).toEqual(nonces);

    // New work after the restart starts from the chain's nonces.
    const next = await enqueue(chain, await signedOp(chain, freshAccount(), { callData: encodeAccountCalls([newOwnerCall()]), sponsored: true }));
    expect(next.receipt.success).toBe(true);
  });

  test("an op that is nowhere is not found, and waiting for it times out", async () => {
    const hash = keccak256(toHex(`nothing ${Math.random()}`));
    expect(await findUserOperationReceipt(chain, hash)).toBeNull();
    // The op never lands: any answer at all is the timeout firing.
    const err = await waitForUserOperationReceipt(chain, hash, { timeoutMs: 300 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UserOperationReceiptTimeoutError);
    expect((err as UserOperationReceiptTimeoutError).userOpHash).toBe(hash);
  });

  test("events describe sent and mined bundles", async () => {
    const seen: string[] = [];
    const onSent = (e: { transactionHash: Hex }) => seen.push(`sent ${e.transactionHash}`);
    const onMined = (e: { transactionHash: Hex }) => seen.push(`mined ${e.transactionHash}`);
    relayerEvents().on("bundle:sent", onSent).on("bundle:mined", onMined);
    try {
      const result = await enqueue(chain, await signedOp(chain, freshAccount(), { callData: encodeAccountCalls([newOwnerCall()]), sponsored: true }));
      expect(seen).toEqual([`sent ${result.transactionHash}`, `mined ${result.transactionHash}`]);
    } finally {
      relayerEvents().off("bundle:sent", onSent).off("bundle:mined", onMined);
    }
  });
});

describe("through a real bundler (alto)", () => {
  let alto: AltoBundler;
  let viaBundler: ChainConfig;
  const sponsoredOp = () => signedOp(chain, freshAccount(), { callData: encodeAccountCalls([newOwnerCall()]), sponsored: true });

  beforeAll(async () => {
    alto = await startAlto({ rpcUrl: chain.rpcUrl, entryPoint: serviceDeployment().entryPoint });
    viaBundler = { ...chain, bundlerUrl: alto.url };
  });

  afterAll(async () => {
    await alto?.stop();
  });

  // alto runs quietly; its log is what explains a failure here.
  beforeEach(({ onTestFailed }) => {
    onTestFailed(() => console.log(`alto's output:\n${alto.output().slice(-8_000)}`));
  });

  test("ops go out with eth_sendUserOperation, alto bundles them, receipts come from eth_getUserOperationReceipt", async () => {
    const op = await sponsoredOp();
    const result = await enqueue(viaBundler, op);
    expect(result).toMatchObject({ userOpHash: userOperationHash(chain, op), executor: null, bundleSize: 1 });
    expect(result.receipt).toMatchObject({ success: true, sender: op.sender, paymaster: serviceDeployment().paymaster });
    // alto's executor sent it, not ours.
    const tx = await client.getTransaction({ hash: result.transactionHash });
    expect(alto.executors.map((a) => a.toLowerCase())).toContain(tx.from.toLowerCase());

    expect(await findUserOperationReceipt(viaBundler, result.userOpHash)).toEqual(result.receipt);
    // The bundler's receipt says what the chain's own logs say.
    expect(await findUserOperationReceipt(chain, result.userOpHash)).toEqual(result.receipt);
    expect(await findUserOperationReceipt(viaBundler, keccak256(toHex(`nothing ${Math.random()}`)))).toBeNull();
  });

  test("a forged signature is refused by the bundler and reported with its AA code", async () => {
    const forged = await signedOp(chain, freshAccount(), { callData: encodeAccountCalls([newOwnerCall()]), sponsored: true }, privateKeyToAccount(generatePrivateKey()));
    const err = await enqueue(viaBundler, forged).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UserOperationRejectedError);
    expect((err as UserOperationRejectedError).code).toBe("AA24");

    // Next to a good op: that one lands, the forged one is dropped with the same reason.
    const good = await sponsoredOp();
    const bundle = await submitUserOperations(viaBundler, [forged, good]);
    expect(bundle.included.map((r) => r.userOpHash)).toEqual([userOperationHash(chain, good)]);
    expect(bundle.dropped.map((d) => d.userOpHash)).toEqual([userOperationHash(chain, forged)]);
    expect((bundle.dropped[0]!.error as UserOperationRejectedError).code).toBe("AA24");
  });

  test("five ops sent at once all land", async () => {
    const ops = await Promise.all(Array.from({ length: 5 }, sponsoredOp));
    const results = await Promise.all(ops.map((op) => enqueue(viaBundler, op)));
    expect(results.map((r) => r.userOpHash)).toEqual(ops.map((op) => userOperationHash(chain, op)));
    expect(results.every((r) => r.receipt.success && r.executor === null)).toBe(true);
  });

  test("after a restart, an op the bundler holds or has landed is not refused", async () => {
    const op = await sponsoredOp();
    // alto holds the op in its mempool until bundling is switched back on.
    await alto.request("debug_bundler_setBundlingMode", ["manual"]);
    const first = enqueue(viaBundler, op);
    first.catch(() => undefined);
    try {
      await expect.poll(() => alto.request("debug_bundler_dumpMempool", [serviceDeployment().entryPoint]), { timeout: 5_000, interval: 20 }).toHaveLength(1);
      // A restart forgets the op was sent; sending it again meets "Already known".
      resetRelayer();
      configureRelayer({ executorOffset: EXECUTOR_OFFSET });
      const again = enqueue(viaBundler, op);
      again.catch(() => undefined);
      await alto.request("debug_bundler_setBundlingMode", ["auto"]);
      const [a, b] = await Promise.all([first, again]);
      expect(b.receipt).toEqual(a.receipt);
      expect(a.receipt.success).toBe(true);
    } finally {
      await alto.request("debug_bundler_setBundlingMode", ["auto"]);
    }

    // Once it landed, sending it again (AA10/AA25 at the bundler) gives its receipt.
    const landed = await first;
    resetRelayer();
    configureRelayer({ executorOffset: EXECUTOR_OFFSET });
    const bundlesBefore = await Promise.all(alto.executors.map(nonceCount));
    expect(await enqueue(viaBundler, op)).toEqual(landed);
    expect(await Promise.all(alto.executors.map(nonceCount))).toEqual(bundlesBefore);
  });
});
