// Sponsored transaction intents through the API, next to the floor: the same ops sent directly (bench/floor.ts).
import { encodeFunctionData, formatEther, getAbiItem, type Hex } from "viem";
import { entryPointAbi } from "@/contracts/artifacts";
import { publicClient } from "@/lib/chain/clients";
import { serviceDeployment } from "@/lib/chain/contracts";
import type { ChainConfig } from "@/lib/chain/registry";
import { receiptsFromLogs } from "@/lib/chain/relayer";
import { freshAccount, type TestAccount } from "@/lib/chain/testing";
import { encodeAccountCalls } from "@/lib/chain/userop";
import { floorRun } from "./floor";
import { cpuMeter, now, pool, quantile, sleep, type Api, type CpuGroups, type RunResult } from "./lib";

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
  userOperationHash: Hex;
  response?: { status: number; transactionHash: Hex };
}

interface Player {
  id: string;
  account: string;
  address: Hex;
}

/**
 * `players.length` intents, one per player, from `clients` concurrent clients. Meanwhile the pending ones are looked
 * up every POLL_MS with the list endpoint (`status=1`, the policy and up to 100 players a request), so each
 * intent's time to `response.status=1` is as a client sees it, without a GET per intent.
 */
async function serviceRun(label: string, apis: Api[], chain: ChainConfig, contract: string, policy: string, players: Player[], clients: number): Promise<RunResult> {
  const result: RunResult = { label, total: players.length, submitMs: [], landMs: [], submitSeconds: 0, landSeconds: 0, bundleSizes: [], failed: 0 };
  const api = apis[0]!;
  const pending = new Map<string, number>(); // player id → when its POST started
  const transactions = new Set<Hex>();
  const opHashes = new Set<Hex>();
  const client = publicClient(chain);
  const fromBlock = await client.getBlockNumber({ cacheTime: 0 });
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
            opHashes.add(intent.userOperationHash);
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
      // Several instances: each client's requests go round-robin over them.
      await apis[i % apis.length]!<Intent>("POST", "/v1/transaction_intents", {
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
  for (const hash of transactions) {
    const receipt = await client.getTransactionReceipt({ hash });
    result.bundleSizes.push(receiptsFromLogs(receipt.logs, hash, receipt.blockNumber).size);
  }
  // Exactly once: every landed intent's op has one UserOperationEvent in the run's blocks, and no op of these
  // accounts landed that no intent answered with.
  const senders = new Set(players.map((p) => p.address.toLowerCase()));
  const events = await client.getLogs({ address: serviceDeployment().entryPoint, event: USER_OPERATION_EVENT, fromBlock, toBlock: "latest" });
  const seen = new Map<Hex, number>();
  for (const event of events) {
    if (!senders.has(event.args.sender!.toLowerCase())) continue;
    seen.set(event.args.userOpHash!, (seen.get(event.args.userOpHash!) ?? 0) + 1);
  }
  result.landedOnce = [...opHashes].filter((hash) => seen.get(hash) === 1).length;
  result.duplicated = [...seen.values()].filter((count) => count > 1).length + [...seen.keys()].filter((hash) => !opHashes.has(hash)).length;
  return result;
}

const USER_OPERATION_EVENT = getAbiItem({ abi: entryPointAbi, name: "UserOperationEvent" });

const pad = (value: string, width: number) => value.padStart(width);
const ms = (values: number[]) => `${quantile(values, 0.5).toFixed(0)} / ${quantile(values, 0.99).toFixed(0)}`;
const perSecond = (count: number, seconds: number) => (seconds > 0 ? (count / seconds).toFixed(1) : "-");

function printTable(results: RunResult[]) {
  console.log(
    `${"run".padEnd(34)}${pad("ops", 6)}${pad("submitted/s", 13)}${pad("landed/s", 10)}${pad("submit p50/p99 ms", 19)}${pad("to status=1 p50/p99 ms", 24)}${pad("ops/bundle mean/max", 21)}${pad("failed", 8)}${pad("once", 6)}${pad("dup", 5)}`,
  );
  for (const r of results) {
    const bundles = r.bundleSizes.length
      ? `${(r.bundleSizes.reduce((a, b) => a + b, 0) / r.bundleSizes.length).toFixed(1)} / ${Math.max(...r.bundleSizes)}`
      : "-";
    console.log(
      `${r.label.padEnd(34)}${pad(String(r.total), 6)}${pad(perSecond(r.submitMs.length, r.submitSeconds), 13)}${pad(perSecond(r.landMs.length, r.landSeconds), 10)}` +
        `${pad(ms(r.submitMs), 19)}${pad(ms(r.landMs), 24)}${pad(bundles, 21)}${pad(String(r.failed), 8)}${pad(String(r.landedOnce ?? "-"), 6)}${pad(String(r.duplicated ?? "-"), 5)}`,
    );
  }
  console.log(`\nCPU per op, ms (the run's CPU seconds by process group over its ops; 2 cores in all):`);
  const groups = [...new Set(results.flatMap((r) => Object.keys(r.cpu ?? {})))];
  console.log(`${"run".padEnd(34)}${groups.map((g) => pad(g, 10)).join("")}${pad("total", 10)}`);
  for (const r of results) {
    const cpu = r.cpu ?? {};
    const total = Object.values(cpu).reduce((a, b) => a + b, 0);
    console.log(`${r.label.padEnd(34)}${groups.map((g) => pad(((1000 * (cpu[g] ?? 0)) / r.total).toFixed(1), 10)).join("")}${pad(((1000 * total) / r.total).toFixed(1), 10)}`);
  }
  const errors = results.filter((r) => r.firstError);
  for (const r of errors) console.log(`  ${r.label.trim()}: ${r.firstError}`);
}

export interface IntentRatios {
  /** service ÷ floor, first ops and deployed accounts: landed/s, POST p50 ÷ build-and-sign p50, to status=1 p50. */
  landed: [number, number];
  submitP50: [number, number];
  landP50: [number, number];
  /** Ops that landed exactly once over all service runs, and those that did not (lost, failed or duplicated). */
  landedOnce: number;
  notOnce: number;
}

const rate = (r: RunResult) => r.landMs.length / r.landSeconds;

/**
 * Two rounds of `intents` sponsored ops, each through the service and then directly (the floor): the first op of
 * each account (it deploys the account), then one more op of each now deployed account. Through the service every
 * op is an intent of its own player, whose custodial account was created (not deployed) beforehand. With several
 * instances (`apis`, one client per server on the same database and chain), both rounds run once more over all of
 * them, with new players.
 */
export async function benchIntents(apis: Api[], chain: ChainConfig, options: { clients: number; intents: number; database: string; cpu: CpuGroups }): Promise<IntentRatios> {
  const { clients, intents } = options;
  const api = apis[0]!;
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
      const account = await api<{ id: string; address: Hex }>("POST", "/v1/accounts", { chainId: chain.chainId, player: player.id });
      players[i] = { id: player.id, account: account.id, address: account.address };
    });
    return players;
  };

  // Warm-up: the intent path once on each instance, waiting for it to land.
  const warmPolicy = await newPolicy("warm-up");
  const warm = await newPlayers(apis.length, "warm-up");
  for (const [i, instance] of apis.entries()) {
    await instance("POST", "/v1/transaction_intents", {
      chainId: chain.chainId,
      player: warm[i]!.id,
      policy: warmPolicy,
      optimistic: true,
      interactions: [{ contract: contract.id, functionName: "depositTo", functionArgs: [warm[i]!.account] }],
    });
  }

  const players = await newPlayers(intents, "bench-");
  const direct = Array.from({ length: intents }, freshAccount);
  const firstPolicy = await newPolicy("first op");
  const nextPolicy = await newPolicy("deployed");

  console.log(
    `\nSponsored transaction intents: ${options.database}, anvil chain ${chain.chainId} (1 s blocks, transactions mined at once), ` +
      `${clients} concurrent clients, ${intents} ops per run.\n` +
      `Each op: EntryPoint.depositTo(its account) from a custodial account, paid by a pay_for_user policy (contract_functions rule).\n`,
  );
  const metered = async (run: () => Promise<RunResult>) => {
    const cpu = cpuMeter(options.cpu);
    const result = await run();
    return { ...result, cpu: cpu() };
  };
  const results = [
    await metered(() => serviceRun("service: first op (deploys)", [api], chain, contract.id, firstPolicy, players, clients)),
    await metered(() => floorRun("floor:   first op (deploys)", chain, direct, depositCall, clients)),
    await metered(() => serviceRun("service: deployed account", [api], chain, contract.id, nextPolicy, players, clients)),
    await metered(() => floorRun("floor:   deployed account", chain, direct, depositCall, clients)),
  ];
  if (apis.length > 1) {
    const more = await newPlayers(intents, "bench-many-");
    results.push(
      await metered(() => serviceRun(`service ×${apis.length}: first op`, apis, chain, contract.id, firstPolicy, more, clients)),
      await metered(() => serviceRun(`service ×${apis.length}: deployed account`, apis, chain, contract.id, nextPolicy, more, clients)),
    );
  }
  printTable(results);
  console.log(
    `\nsubmit: service = POST /v1/transaction_intents; floor = build (simulation), sponsor and sign in-process (lib/chain/userop).\n` +
      `to status=1: service = POST start until the list shows response.status=1 (polled every ${POLL_MS} ms); floor = build start until the handleOps receipt.\n` +
      `landed/s: ops on chain over the time from the run's start to the last one. Floor bundles: up to 50 ops, sent from one key without waiting.\n` +
      `once: landed ops with exactly one UserOperationEvent on chain; dup: ops of these accounts seen twice, or on chain without an intent answering with them.`,
  );
  // What the runs spent of the project's sponsorship ledger (issue 30): the servers credit it BENCH_CREDIT (bench/lib.ts)
  // so that no intent is declined for money; "held" is what ops still in flight may cost.
  const { data: balances } = await api<{ data: { credited: string; available: string; held: string; settled: string }[] }>("GET", `/v1/sponsorship/balances?chainId=${chain.chainId}`);
  const b = balances[0]!;
  console.log(
    `\nSponsorship balance of the intents' project on chain ${chain.chainId}: settled ${formatEther(BigInt(b.settled))}, held ${formatEther(BigInt(b.held))}, ` +
      `available ${formatEther(BigInt(b.available))} of ${formatEther(BigInt(b.credited))} credited (coin)`,
  );
  const [firstService, firstFloor, nextService, nextFloor] = results as [RunResult, RunResult, RunResult, RunResult];
  if (apis.length > 1) {
    for (const [one, many] of [
      [firstService, results[4]!],
      [nextService, results[5]!],
    ] as const) {
      console.log(`${many.label}: ${rate(many).toFixed(1)} landed/s over ${apis.length} instances, beside ${rate(one).toFixed(1)} for one (${(rate(many) / rate(one)).toFixed(2)}×)`);
    }
  }
  const service = results.filter((r) => r.landedOnce !== undefined);
  const landedOnce = service.reduce((sum, r) => sum + r.landedOnce!, 0);
  return {
    landed: [rate(firstService) / rate(firstFloor), rate(nextService) / rate(nextFloor)],
    submitP50: [quantile(firstService.submitMs, 0.5) / quantile(firstFloor.submitMs, 0.5), quantile(nextService.submitMs, 0.5) / quantile(nextFloor.submitMs, 0.5)],
    landP50: [quantile(firstService.landMs, 0.5) / quantile(firstFloor.landMs, 0.5), quantile(nextService.landMs, 0.5) / quantile(nextFloor.landMs, 0.5)],
    landedOnce,
    notOnce: service.reduce((sum, r) => sum + r.total, 0) - landedOnce + service.reduce((sum, r) => sum + r.duplicated!, 0),
  };
}
