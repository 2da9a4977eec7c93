// The floor: the same sponsored ops built, sponsored and signed in this process with lib/chain/userop and sent with
// viem as EntryPoint.handleOps bundles, with no API, database or job runner in between.
import { parseEther, type Hex, type TransactionReceipt } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { entryPointAbi } from "@/contracts/artifacts";
import { publicClient, walletClient } from "@/lib/chain/clients";
import { serviceDeployment } from "@/lib/chain/contracts";
import type { ChainConfig } from "@/lib/chain/registry";
import { receiptsFromLogs } from "@/lib/chain/relayer";
import { setBalance, type TestAccount } from "@/lib/chain/testing";
import { buildUserOperation, signUserOperation, sponsorshipWindow, toEntryPointOp, userOperationHash, type UserOp } from "@/lib/chain/userop";
import { now, pool, sleep, type RunResult } from "./lib";

/** As the service's relayer: up to 50 ops per bundle, gathered for 20 ms after the first, receipts polled every 20 ms. */
const MAX_BUNDLE = 50;
const BATCH_WINDOW_MS = 20;
const POLL_MS = 20;

async function receiptOf(chain: ChainConfig, hash: Hex, timeoutMs = 120_000): Promise<TransactionReceipt> {
  const deadline = now() + timeoutMs;
  for (;;) {
    const receipt = await publicClient(chain)
      .getTransactionReceipt({ hash })
      .catch(() => null);
    if (receipt) return receipt;
    if (now() > deadline) throw new Error(`bundle ${hash} was not mined within ${timeoutMs / 1000} s`);
    await sleep(POLL_MS);
  }
}

/**
 * One op per account (`callData(account)`, sponsored by our paymaster, signed by the owner; deploying the account
 * when it has no code yet), built on `clients` workers and sent as they are ready from one funded key, bundles
 * in flight at once.
 */
export async function floorRun(
  label: string,
  chain: ChainConfig,
  accounts: TestAccount[],
  callData: (account: TestAccount) => Hex,
  clients: number,
): Promise<RunResult> {
  const { entryPoint } = serviceDeployment();
  const sender = privateKeyToAccount(generatePrivateKey());
  await setBalance(chain, sender.address, parseEther("10000"));
  const wallet = walletClient(chain, sender);
  let nonce = await publicClient(chain).getTransactionCount({ address: sender.address });
  const sponsorship = await sponsorshipWindow(chain, 3_600);

  const result: RunResult = { label, total: accounts.length, submitMs: [], landMs: [], submitSeconds: 0, landSeconds: 0, bundleSizes: [], failed: 0 };
  const ready: { op: UserOp; t0: number }[] = [];
  let building = true;
  const start = now();

  const fail = (ops: number, err: unknown) => {
    result.failed += ops;
    result.firstError ??= (err as Error).message.split("\n")[0];
  };

  const built = pool(clients, accounts.length, async (i) => {
    const account = accounts[i]!;
    const t0 = now();
    try {
      const unsigned = await buildUserOperation(chain, { sender: account.address, initCode: account.initCode, callData: callData(account), sponsored: true, sponsorship });
      ready.push({ op: await signUserOperation(chain, unsigned, account.owner), t0 });
      result.submitMs.push(now() - t0);
    } catch (err) {
      fail(1, err);
    }
  }).finally(() => {
    building = false;
    result.submitSeconds = (now() - start) / 1000;
  });

  const sendBundle = async (batch: typeof ready, bundleNonce: number) => {
    try {
      await landBundle(batch, bundleNonce);
    } catch (err) {
      fail(batch.length, err);
    }
  };
  const landBundle = async (batch: typeof ready, bundleNonce: number) => {
    const hash = await wallet.writeContract({
      address: entryPoint,
      abi: entryPointAbi,
      functionName: "handleOps",
      args: [batch.map(({ op }) => toEntryPointOp(op)), sender.address],
      nonce: bundleNonce,
    });
    const receipt = await receiptOf(chain, hash);
    const landedAt = now();
    const events = receiptsFromLogs(receipt.logs, hash, receipt.blockNumber);
    result.bundleSizes.push(events.size);
    for (const { op, t0 } of batch) {
      if (events.get(userOperationHash(chain, op))?.success) {
        result.landMs.push(landedAt - t0);
        result.landSeconds = Math.max(result.landSeconds, (landedAt - start) / 1000);
      } else {
        fail(1, new Error(`the op of ${op.sender} failed or is missing in bundle ${hash} (status ${receipt.status})`));
      }
    }
  };

  const bundles: Promise<void>[] = [];
  while (building || ready.length > 0) {
    if (ready.length === 0) {
      await sleep(2);
      continue;
    }
    const first = now();
    while (building && ready.length < MAX_BUNDLE && now() - first < BATCH_WINDOW_MS) await sleep(2);
    bundles.push(sendBundle(ready.splice(0, MAX_BUNDLE), nonce++));
  }
  await built;
  await Promise.all(bundles);
  return result;
}
