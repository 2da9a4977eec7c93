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
