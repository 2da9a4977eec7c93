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
import { cpuMeter, cpuMeterOnce, now, pool, quantile, sleep, type Api, type CpuGroups, type RunResult } from "./lib";
import { histogramQuantile, pgStatementCalls, scrape, stageHistograms, statementsBetween, STAGES, type Scrape } from "./metrics";

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
  const result: RunResult = { label, total: players.length, submitMs: [], landMs: [], submitSeconds: 0, landSeconds: 0, bundleSizes: [], failed: 0, polls: 0 };
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
            result.polls!++;
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
const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
const median = (values: number[]) => quantile(values, 0.5);
/** CPU milliseconds of a run per landed op: one group's, or all groups' together. */
const cpuPerOp = (r: RunResult, group?: string) =>
  (1000 * (group ? (r.cpu?.[group] ?? 0) : sum(Object.values(r.cpu ?? {})))) / Math.max(r.landMs.length, 1);
const meanBundle = (r: RunResult) => (r.bundleSizes.length ? sum(r.bundleSizes) / r.bundleSizes.length : NaN);

function printTable(results: RunResult[]) {
  console.log(
    `${"run".padEnd(34)}${pad("ops", 6)}${pad("submitted/s", 13)}${pad("landed/s", 10)}${pad("submit p50/p99 ms", 19)}${pad("to status=1 p50/p99 ms", 24)}${pad("ops/bundle mean/max", 21)}${pad("failed", 8)}${pad("once", 6)}${pad("dup", 5)}`,
  );
  for (const r of results) {
    const bundles = r.bundleSizes.length ? `${meanBundle(r).toFixed(1)} / ${Math.max(...r.bundleSizes)}` : "-";
    console.log(
      `${r.label.padEnd(34)}${pad(String(r.total), 6)}${pad(perSecond(r.submitMs.length, r.submitSeconds), 13)}${pad(perSecond(r.landMs.length, r.landSeconds), 10)}` +
        `${pad(ms(r.submitMs), 19)}${pad(ms(r.landMs), 24)}${pad(bundles, 21)}${pad(String(r.failed), 8)}${pad(String(r.landedOnce ?? "-"), 6)}${pad(String(r.duplicated ?? "-"), 5)}`,
    );
  }
  const withPg = results.some((r) => r.pgStatementsPerOp !== undefined);
  console.log(`\nCPU per landed op, ms (the run's CPU seconds by process group over its landed ops; 2 cores in all), and SQL statements per landed intent:`);
  const groups = [...new Set(results.flatMap((r) => Object.keys(r.cpu ?? {})))];
  console.log(`${"run".padEnd(34)}${groups.map((g) => pad(g, 10)).join("")}${pad("total", 10)}${pad("SQL/op", 10)}${withPg ? pad("pg_stat/op", 12) : ""}`);
  const perOp = (value: number | undefined, width: number) => pad(value === undefined ? "-" : value.toFixed(1), width);
  for (const r of results) {
    console.log(
      `${r.label.padEnd(34)}${groups.map((g) => pad(cpuPerOp(r, g).toFixed(1), 10)).join("")}${pad(cpuPerOp(r).toFixed(1), 10)}` +
        `${perOp(r.statementsPerOp, 10)}${withPg ? perOp(r.pgStatementsPerOp, 12) : ""}`,
    );
  }
  const errors = results.filter((r) => r.firstError);
  for (const r of errors) console.log(`  ${r.label.trim()}: ${r.firstError}`);
}

/** p50 and p95 of each stage of transaction_intent_stage_seconds per service run, in ms; "-" where a stage saw nothing. */
function printStages(results: RunResult[]) {
  const runs = results.filter((r) => r.stages);
  const stages = [...new Set([...STAGES, ...runs.flatMap((r) => [...r.stages!.keys()])])];
  console.log(`\nStages of an intent, p50 / p95 ms (transaction_intent_stage_seconds, the run's observations over all instances; linear within buckets):`);
  console.log(`${"run".padEnd(34)}${stages.map((stage) => pad(stage, 14)).join("")}${pad("settled, s", 12)}`);
  for (const r of runs) {
    const cell = (stage: string) => {
      const buckets = r.stages!.get(stage);
      if (!buckets || (buckets.at(-1)?.count ?? 0) <= 0) return pad("-", 14);
      const q = (x: number) => {
        const value = 1000 * histogramQuantile(x, buckets);
        return value >= 100 ? value.toFixed(0) : value.toFixed(1);
      };
      return pad(`${q(0.5)} / ${q(0.95)}`, 14);
    };
    console.log(`${r.label.padEnd(34)}${stages.map(cell).join("")}${pad(r.settleSeconds!.toFixed(1), 12)}`);
  }
}

/** One concurrent service run against the floor run of the same kind, for the targets (bench/api.ts prints them). */
export interface ServiceRunSummary {
  label: string;
  landedPerSecond: number;
  floorLandedPerSecond: number;
  serverCpuMs: number;
  totalCpuMs: number;
  floorTotalCpuMs: number;
  statementsPerOp?: number;
  meanBundle: number;
}

export interface IntentSummary {
  /** The concurrent service runs: first ops and deployed accounts, on one instance, then on all of them. */
  runs: ServiceRunSummary[];
  /** POST /v1/transaction_intents at one client (sequential), ms. */
  oneClient: { p50: number; p95: number };
  /** The earlier targets' ratios (issue 18), service ÷ floor, first ops and deployed accounts: landed/s, POST p50 ÷ build-and-sign p50, to status=1 p50. */
  landed: [number, number];
  submitP50: [number, number];
  landP50: [number, number];
  /** Ops that landed exactly once over all service runs, and those that did not (lost, failed or duplicated). */
  landedOnce: number;
  notOnce: number;
}

const rate = (r: RunResult) => r.landMs.length / r.landSeconds;

/** The sequential run after the concurrent ones: its POSTs' latency at one client. */
const ONE_CLIENT_OPS = 50;
/** How long a run's stages may take to catch up with its landings (confirmations come blocks later). */
const SETTLE_MS = 60_000;
const SETTLE_QUIET_MS = 10_000;

/**
 * The statements the bench's own requests cost the servers, to be told apart from the intents': a scrape of
 * /metrics (its gauges are read from the database) over all instances, and one poll of the run's shape (the list
 * endpoint with 100 players). Measured on the idle servers; the median of a few scrapes leaves background runs out.
 */
async function ownStatements(
  urls: string[],
  poll: () => Promise<unknown>,
  serverCpu: () => number,
): Promise<{ scrape: number; poll: number; scrapeCpu: number; pollCpu: number }> {
  const deltas: number[] = [];
  const cpus: number[] = [];
  let last = await scrape(urls);
  // The kernel counts CPU in 10 ms ticks: enough scrapes and polls that a tick is a small part of the mean.
  const SCRAPES = 20;
  const scrapesCpuBefore = serverCpu();
  for (let i = 0; i < SCRAPES; i++) {
    const next = await scrape(urls);
    deltas.push(statementsBetween(last, next));
    last = next;
  }
  cpus.push((serverCpu() - scrapesCpuBefore) / SCRAPES);
  const perScrape = median(deltas);
  const POLLS = 50;
  const cpuBefore = serverCpu();
  for (let i = 0; i < POLLS; i++) await poll();
  const pollCpu = Math.max(0, (serverCpu() - cpuBefore) / POLLS);
  const perPoll = Math.max(0, (statementsBetween(last, await scrape(urls)) - perScrape) / POLLS);
  return { scrape: perScrape, poll: Math.round(perPoll * 10) / 10, scrapeCpu: median(cpus), pollCpu };
}

/**
 * After a service run: scrapes until every stage the servers have ever observed (a labelled series appears with its
 * first observation) has, since `before`, as many observations as the run has landed intents (confirm comes blocks
 * after land), or nothing new was observed for SETTLE_QUIET_MS (a stage some intents skip), so that a run's tail is
 * its own and not the next run's. Returns the last scrape and how many were taken.
 */
async function settle(urls: string[], before: Scrape, landed: number): Promise<{ after: Scrape; scrapes: number }> {
  const deadline = now() + SETTLE_MS;
  const observed = (buckets: { count: number }[] | undefined) => buckets?.at(-1)?.count ?? 0;
  let scrapes = 0;
  let seen = -1;
  let quietSince = now();
  for (;;) {
    const after = await scrape(urls);
    scrapes++;
    const ever = [...stageHistograms(new Map(), after)].filter(([, buckets]) => observed(buckets) > 0).map(([stage]) => stage);
    const run = stageHistograms(before, after);
    const counts = ever.map((stage) => observed(run.get(stage)));
    if (counts.every((count) => count >= landed) || now() > deadline) return { after, scrapes };
    if (sum(counts) !== seen) {
      seen = sum(counts);
      quietSince = now();
    } else if (now() - quietSince >= SETTLE_QUIET_MS) return { after, scrapes };
    await sleep(500);
  }
}

/**
 * Two rounds of `intents` sponsored ops, each through the service and then directly (the floor): the first op of
 * each account (it deploys the account), then one more op of each now deployed account. Through the service every
 * op is an intent of its own player, whose custodial account was created (not deployed) beforehand. With several
 * instances (`apis`, one client per server on the same database and chain; `urls` their addresses), both rounds run
 * once more over all of them, with new players. Then ONE_CLIENT_OPS POSTs at one client, one after the other: the
 * next op of the first run's players (deployed accounts, the database holding the runs' intents, as a live one does).
 * Per service run, from the servers' /metrics: SQL statements per landed intent (and PostgreSQL's own count when
 * pg_stat_statements is loaded) and the stages of its intents.
 */
export async function benchIntents(
  apis: Api[],
  urls: string[],
  chain: ChainConfig,
  options: { clients: number; intents: number; database: string; databaseUrl?: string; cpu: CpuGroups },
): Promise<IntentSummary> {
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
  const own = await ownStatements(urls, () => {
    const query = new URLSearchParams({ chainId: String(chain.chainId), policy: firstPolicy, status: "1", limit: "100" });
    players.slice(0, 100).forEach((player, i) => query.set(`player[${i}]`, player.id));
    return api("GET", `/v1/transaction_intents?${query}`);
  }, () => cpuMeterOnce(options.cpu, "server"));
  const pgCalls = async () => (options.databaseUrl ? pgStatementCalls(options.databaseUrl) : undefined);

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
  /** A service run, metered until its stages have settled: CPU, statements (less the bench's own), stages. */
  const meteredService = async (run: () => Promise<RunResult>): Promise<RunResult> => {
    const pgBefore = await pgCalls();
    const before = await scrape(urls);
    const cpu = cpuMeter(options.cpu);
    const result = await run();
    const landed = Math.max(result.landMs.length, 1);
    const settling = now();
    const { after, scrapes } = await settle(urls, before, result.landMs.length);
    const settleSeconds = (now() - settling) / 1000;
    const used = cpu();
    const pgAfter = await pgCalls();
    const bench = scrapes * own.scrape + result.polls! * own.poll;
    // The servers' CPU for the bench's own polls and scrapes is not the intents': taken out as the statements are.
    const benchCpu = scrapes * own.scrapeCpu + result.polls! * own.pollCpu;
    return {
      ...result,
      cpu: { ...used, server: Math.max(0, (used.server ?? 0) - benchCpu) },
      benchServerCpuPerOp: (1000 * benchCpu) / landed,
      statementsPerOp: (statementsBetween(before, after) - bench) / landed,
      // PostgreSQL also counts the first scrape (it reads before the counter is rendered) and pgStatementCalls' 3.
      pgStatementsPerOp: pgBefore !== undefined && pgAfter !== undefined ? (pgAfter - pgBefore - bench - own.scrape - 3) / landed : undefined,
      stages: stageHistograms(before, after),
      settleSeconds,
    };
  };
  const service = (label: string, instances: Api[], policy: string, who: Player[], concurrency = clients) =>
    meteredService(() => serviceRun(label, instances, chain, contract.id, policy, who, concurrency));
  const [firstService, firstFloor, nextService, nextFloor] = [
    await service("service: first op (deploys)", [api], firstPolicy, players),
    await metered(() => floorRun("floor:   first op (deploys)", chain, direct, depositCall, clients)),
    await service("service: deployed account", [api], nextPolicy, players),
    await metered(() => floorRun("floor:   deployed account", chain, direct, depositCall, clients)),
  ] as [RunResult, RunResult, RunResult, RunResult];
  const results = [firstService, firstFloor, nextService, nextFloor];
  const pairs: [RunResult, RunResult][] = [
    [firstService, firstFloor],
    [nextService, nextFloor],
  ];
  if (apis.length > 1) {
    const more = await newPlayers(intents, "bench-many-");
    const manyFirst = await service(`service ×${apis.length}: first op`, apis, firstPolicy, more);
    const manyNext = await service(`service ×${apis.length}: deployed account`, apis, nextPolicy, more);
    results.push(manyFirst, manyNext);
    pairs.push([manyFirst, firstFloor], [manyNext, nextFloor]);
  }
  // A policy of its own: the list the run polls (by policy and player) then shows these intents, not the players' last ones.
  const oneClient = await service("service: one client, deployed", [api], await newPolicy("one client"), players.slice(0, ONE_CLIENT_OPS), 1);
  results.push(oneClient);
  printTable(results);
  printStages(results);
  console.log(
    `\nsubmit: service = POST /v1/transaction_intents; floor = build (simulation), sponsor and sign in-process (lib/chain/userop).\n` +
      `to status=1: service = POST start until the list shows response.status=1 (polled every ${POLL_MS} ms); floor = build start until the handleOps receipt.\n` +
      `landed/s: ops on chain over the time from the run's start to the last one. Floor bundles: up to 50 ops, sent from one key without waiting.\n` +
      `once: landed ops with exactly one UserOperationEvent on chain; dup: ops of these accounts seen twice, or on chain without an intent answering with them.\n` +
      `one client: the next op of ${ONE_CLIENT_OPS} of the first run's players (deployed accounts), POSTed one after the other by one client.\n` +
      `A service run is metered (CPU, statements, stages) until its intents' stages are all observed, its confirmations' work included: "settled" ` +
      `is how long that took after the run (at most ${SETTLE_MS / 1000} s, or ${SETTLE_QUIET_MS / 1000} s without a new observation).\n` +
      `SQL/op: db_statements_total of all instances over the run ÷ landed intents, less the bench's own requests measured on the idle servers ` +
      `(${own.poll} statements per poll of the list, ${own.scrape} per scrape of /metrics over the instances); the server column is likewise net of ` +
      `their server CPU (${(1000 * own.pollCpu).toFixed(2)} ms per poll, ${(1000 * own.scrapeCpu).toFixed(2)} ms per scrape: ` +
      `${results.filter((r) => r.benchServerCpuPerOp !== undefined).map((r) => `${r.benchServerCpuPerOp!.toFixed(1)}`).join(" / ")} ms per op of the service runs)` +
      (results.some((r) => r.pgStatementsPerOp !== undefined) ? `; pg_stat/op: pg_stat_statements' calls in the database, the same way.` : `; pg_stat_statements is not loaded: no cross-check.`),
  );
  const oneClientLine = `POST /v1/transaction_intents at one client (${oneClient.submitMs.length} sequential): p50 ${quantile(oneClient.submitMs, 0.5).toFixed(1)} ms, p95 ${quantile(oneClient.submitMs, 0.95).toFixed(1)} ms`;
  console.log(`\n${oneClientLine}`);
  // What the runs spent of the project's sponsorship ledger (issue 30): the servers credit it BENCH_CREDIT (bench/lib.ts)
  // so that no intent is declined for money; "held" is what ops still in flight may cost.
  const { data: balances } = await api<{ data: { credited: string; available: string; held: string; settled: string }[] }>("GET", `/v1/sponsorship/balances?chainId=${chain.chainId}`);
  const b = balances[0]!;
  console.log(
    `\nSponsorship balance of the intents' project on chain ${chain.chainId}: settled ${formatEther(BigInt(b.settled))}, held ${formatEther(BigInt(b.held))}, ` +
      `available ${formatEther(BigInt(b.available))} of ${formatEther(BigInt(b.credited))} credited (coin)`,
  );
  if (apis.length > 1) {
    for (const [one, many] of [
      [firstService, results[4]!],
      [nextService, results[5]!],
    ] as const) {
      console.log(`${many.label}: ${rate(many).toFixed(1)} landed/s over ${apis.length} instances, beside ${rate(one).toFixed(1)} for one (${(rate(many) / rate(one)).toFixed(2)}×)`);
    }
  }
  const serviceRuns = results.filter((r) => r.landedOnce !== undefined);
  const landedOnce = sum(serviceRuns.map((r) => r.landedOnce!));
  return {
    runs: pairs.map(([r, floor]) => ({
      label: r.label,
      landedPerSecond: rate(r),
      floorLandedPerSecond: rate(floor),
      serverCpuMs: cpuPerOp(r, "server"),
      totalCpuMs: cpuPerOp(r),
      floorTotalCpuMs: cpuPerOp(floor),
      statementsPerOp: r.statementsPerOp,
      meanBundle: meanBundle(r),
    })),
    oneClient: { p50: quantile(oneClient.submitMs, 0.5), p95: quantile(oneClient.submitMs, 0.95) },
    landed: [rate(firstService) / rate(firstFloor), rate(nextService) / rate(nextFloor)],
    submitP50: [quantile(firstService.submitMs, 0.5) / quantile(firstFloor.submitMs, 0.5), quantile(nextService.submitMs, 0.5) / quantile(nextFloor.submitMs, 0.5)],
    landP50: [quantile(firstService.landMs, 0.5) / quantile(firstFloor.landMs, 0.5), quantile(nextService.landMs, 0.5) / quantile(nextFloor.landMs, 0.5)],
    landedOnce,
    notOnce: sum(serviceRuns.map((r) => r.total)) - landedOnce + sum(serviceRuns.map((r) => r.duplicated!)),
  };
}
