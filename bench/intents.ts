// Sponsored transaction intents through the API, next to the floor: the same ops sent directly (bench/floor.ts).
import { encodeFunctionData, type Hex } from "viem";
import { entryPointAbi } from "@/contracts/artifacts";
import { publicClient } from "@/lib/chain/clients";
import { serviceDeployment } from "@/lib/chain/contracts";
import type { ChainConfig } from "@/lib/chain/registry";
import { receiptsFromLogs } from "@/lib/chain/relayer";
import { freshAccount, type TestAccount } from "@/lib/chain/testing";
import { encodeAccountCalls } from "@/lib/chain/userop";
import { floorRun } from "./floor";
import { now, pool, quantile, sleep, type Api, type RunResult } from "./lib";

/** The call every op makes: EntryPoint.depositTo(<the account>) with no value, as in test/intents.test.ts. */
const DEPOSIT_ABI = entryPointAbi.filter((item) => item.type === "function" && item.name === "depositTo");
const depositCall = (account: TestAccount): Hex =>
  encodeAccountCalls([
    { to: serviceDeployment().entryPoint, value: 0n, data: encodeFunctionData({ abi: DEPOSIT_ABI, functionName: "depositTo", args: [account.address] }) },
  ]);

/** How often the landing of pending intents is looked up, and how long to wait for the last ones. */
const POLL_MS = 100;
const LAND_TIMEOUT_MS = 120_000;

interface Intent {
  id: string;
  player: { id: string };
  response?: { status: number; transactionHash: Hex };
}

interface Player {
  id: string;
  account: string;
}

/**
 * `players.length` intents, one per player, from `clients` concurrent clients. Meanwhile the pending ones are looked
 * up every POLL_MS with the list endpoint (`status=1`, the policy and up to 100 players a request), so each
 * intent's time to `response.status=1` is as a client sees it, without a GET per intent.
 */
async function serviceRun(label: string, api: Api, chain: ChainConfig, contract: string, policy: string, players: Player[], clients: number): Promise<RunResult> {
  const result: RunResult = { label, total: players.length, submitMs: [], landMs: [], submitSeconds: 0, landSeconds: 0, bundleSizes: [], failed: 0 };
  const pending = new Map<string, number>(); // player id → when its POST started
  const transactions = new Set<Hex>();
  let posting = true;
  const start = now();

  const poll = async () => {
    let deadline = Infinity;
    while (posting || (pending.size > 0 && now() < deadline)) {
      if (!posting) deadline = Math.min(deadline, now() + LAND_TIMEOUT_MS);
      const ids = [...pending.keys()];
      const chunks = Array.from({ length: Math.ceil(ids.length / 100) }, (_, i) => ids.slice(i * 100, i * 100 + 100));
      await Promise.all(
        chunks.map(async (chunk) => {
          const query = new URLSearchParams({ chainId: String(chain.chainId), policy, status: "1", limit: "100" });
          chunk.forEach((id, i) => query.set(`player[${i}]`, id));
          let page: { data: Intent[] };
          try {
            page = await api<{ data: Intent[] }>("GET", `/v1/transaction_intents?${query}`);
          } catch (err) {
            result.firstError ??= `polling: ${(err as Error).message}`;
            return;
          }
          const seenAt = now();
          for (const intent of page.data) {
            const t0 = pending.get(intent.player.id);
            if (t0 === undefined || intent.response?.status !== 1) continue;
            pending.delete(intent.player.id);
            result.landMs.push(seenAt - t0);
            result.landSeconds = Math.max(result.landSeconds, (seenAt - start) / 1000);
            transactions.add(intent.response.transactionHash);
          }
        }),
      );
      await sleep(POLL_MS);
    }
  };
  const polled = poll();

  await pool(clients, players.length, async (i) => {
    const player = players[i]!;
    const t0 = now();
    try {
      await api<Intent>("POST", "/v1/transaction_intents", {
        chainId: chain.chainId,
        player: player.id,
        policy,
        interactions: [{ contract, functionName: "depositTo", functionArgs: [player.account] }],
      });
      result.submitMs.push(now() - t0);
      pending.set(player.id, t0);
    } catch (err) {
      result.failed++;
      result.firstError ??= (err as Error).message;
    }
  });
  result.submitSeconds = (now() - start) / 1000;
  posting = false;
  await polled;
  if (pending.size > 0) {
    result.failed += pending.size;
    result.firstError ??= `${pending.size} intents without response.status=1 after ${LAND_TIMEOUT_MS / 1000} s`;
  }

  // Ops per bundle, from the chain: the EntryPoint's UserOperationEvents in each transaction the intents landed in.
  const client = publicClient(chain);
  for (const hash of transactions) {
    const receipt = await client.getTransactionReceipt({ hash });
    result.bundleSizes.push(receiptsFromLogs(receipt.logs, hash, receipt.blockNumber).size);
  }
  return result;
}

const pad = (value: string, width: number) => value.padStart(width);
const ms = (values: number[]) => `${quantile(values, 0.5).toFixed(0)} / ${quantile(values, 0.99).toFixed(0)}`;
const perSecond = (count: number, seconds: number) => (seconds > 0 ? (count / seconds).toFixed(1) : "-");

function printTable(results: RunResult[]) {
  console.log(
    `${"run".padEnd(34)}${pad("ops", 6)}${pad("submitted/s", 13)}${pad("landed/s", 10)}${pad("submit p50/p99 ms", 19)}${pad("to status=1 p50/p99 ms", 24)}${pad("ops/bundle mean/max", 21)}${pad("failed", 8)}`,
  );
  for (const r of results) {
    const bundles = r.bundleSizes.length
      ? `${(r.bundleSizes.reduce((a, b) => a + b, 0) / r.bundleSizes.length).toFixed(1)} / ${Math.max(...r.bundleSizes)}`
      : "-";
    console.log(
      `${r.label.padEnd(34)}${pad(String(r.total), 6)}${pad(perSecond(r.submitMs.length, r.submitSeconds), 13)}${pad(perSecond(r.landMs.length, r.landSeconds), 10)}` +
        `${pad(ms(r.submitMs), 19)}${pad(ms(r.landMs), 24)}${pad(bundles, 21)}${pad(String(r.failed), 8)}`,
    );
  }
  const errors = results.filter((r) => r.firstError);
  for (const r of errors) console.log(`  ${r.label.trim()}: ${r.firstError}`);
}

/**
 * Two rounds of `intents` sponsored ops, each through the service and then directly (the floor): the first op of
 * each account (it deploys the account), then one more op of each now deployed account. Through the service every
 * op is an intent of its own player, whose custodial account was created (not deployed) beforehand.
 */
export async function benchIntents(api: Api, chain: ChainConfig, options: { clients: number; intents: number; database: string }) {
  const { clients, intents } = options;
  const contract = await api<{ id: string }>("POST", "/v1/contracts", { name: "EntryPoint", chainId: chain.chainId, address: serviceDeployment().entryPoint, abi: DEPOSIT_ABI });
  const newPolicy = async (name: string) => {
    const policy = await api<{ id: string }>("POST", "/v1/policies", { name, chainId: chain.chainId, strategy: { sponsorSchema: "pay_for_user" } });
    await api("POST", "/v1/policy_rules", { policy: policy.id, type: "contract_functions", contract: contract.id, functionName: "depositTo" });
    return policy.id;
  };
  const newPlayers = async (count: number, prefix: string) => {
    const players: Player[] = [];
    await pool(clients, count, async (i) => {
      const player = await api<{ id: string }>("POST", "/v1/players", { name: `${prefix}${i}` });
      const account = await api<{ id: string }>("POST", "/v1/accounts", { chainId: chain.chainId, player: player.id });
      players[i] = { id: player.id, account: account.id };
    });
    return players;
  };

  // Warm-up: the intent path once, waiting for it to land.
  const [warm] = await newPlayers(1, "warm-up");
  await api("POST", "/v1/transaction_intents", {
    chainId: chain.chainId,
    player: warm!.id,
    policy: await newPolicy("warm-up"),
    optimistic: true,
    interactions: [{ contract: contract.id, functionName: "depositTo", functionArgs: [warm!.account] }],
  });

  const players = await newPlayers(intents, "bench-");
  const direct = Array.from({ length: intents }, freshAccount);
  const firstPolicy = await newPolicy("first op");
  const nextPolicy = await newPolicy("deployed");

  console.log(
    `\nSponsored transaction intents: ${options.database}, anvil chain ${chain.chainId} (1 s blocks, transactions mined at once), ` +
      `${clients} concurrent clients, ${intents} ops per run.\n` +
      `Each op: EntryPoint.depositTo(its account) from a custodial account, paid by a pay_for_user policy (contract_functions rule).\n`,
  );
  const results = [
    await serviceRun("service: first op (deploys)", api, chain, contract.id, firstPolicy, players, clients),
    await floorRun("floor:   first op (deploys)", chain, direct, depositCall, clients),
    await serviceRun("service: deployed account", api, chain, contract.id, nextPolicy, players, clients),
    await floorRun("floor:   deployed account", chain, direct, depositCall, clients),
  ];
  printTable(results);
  console.log(
    `\nsubmit: service = POST /v1/transaction_intents; floor = build (simulation), sponsor and sign in-process (lib/chain/userop).\n` +
      `to status=1: service = POST start until the list shows response.status=1 (polled every ${POLL_MS} ms); floor = build start until the handleOps receipt.\n` +
      `landed/s: ops on chain over the time from the run's start to the last one. Floor bundles: up to 50 ops, sent from one key without waiting.`,
  );
  for (const [service, floor] of [
    [results[0]!, results[1]!],
    [results[2]!, results[3]!],
  ] as const) {
    const floorRate = floor.landMs.length / floor.landSeconds;
    const created = service.submitMs.length / service.submitSeconds;
    const landed = service.landMs.length / service.landSeconds;
    console.log(
      `${service.label.slice("service: ".length).padEnd(20)} service ÷ floor: intents created/s ${(created / floorRate).toFixed(2)}, ` +
        `landed/s ${(landed / floorRate).toFixed(2)} (floor ${floorRate.toFixed(1)} ops/s)`,
    );
  }
}
