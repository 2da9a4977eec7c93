// `npm run drill -- chain [--short]`: the books follow the chain (issue 40). A production server on PostgreSQL whose
// chain mines every 2 s (not on each transaction), reached through two fault-injecting JSON-RPC proxies on loopback
// (5 % errors, requests that hang past the client's timeout, one node lagging two blocks), under every kind of
// sponsored op at once (./chain-load.ts), while the chain is reorged 1 to 3 blocks deep, its base fee spikes ×20 for
// 10 blocks and its pool is dropped. After each reorg and drop: the executors' transactions in the node are gone within
// a minute, and a fresh intent lands within 3 blocks. At the end, read from the chain: every op on it once, every
// intent's final state, hash and block as the chain has them, the ledger equal to the chain (reconciliation: 0 wei
// unattributed, no mismatch, 0 wei held for signatures that can no longer land), each intent's last webhook its final
// state.
import { getAbiItem, type Address } from "viem";
import { entryPointAbi } from "@/contracts/artifacts";
import { startAnvil } from "@/lib/chain/anvil";
import { publicClient } from "@/lib/chain/clients";
import { ourPaymasters } from "@/lib/chain/contracts";
import { findChain, type ChainConfig } from "@/lib/chain/registry";
import type { ChainReconciliation } from "@/lib/follower/reconcile";
import { serviceAccount } from "@/lib/keys/service-keys";
import { prepareChain } from "@/lib/prepare-chains";
import { runCliAsync } from "../../test/helpers/server";
import { now, sleep } from "../lib";
import { startLoad, type LoadKind } from "./chain-load";
import { printTable, publishedEvents, settle, unfinishedRuns, verdict } from "./checks";
import { describeErrors } from "./client";
import { checkLedger } from "./ledger";
import { startRpcProxy } from "./rpc-proxy";
import { CHAIN_ID, query, setupProject, startDrillServer, startReceiver, subscribe, tempDir, type Fixture } from "./setup";
import crypto from "node:crypto";

const TOPICS = ["transaction_intent.broadcast", "transaction_intent.successful", "transaction_intent.failed", "transaction_intent.cancelled"];
const FINAL_TOPICS: Record<string, string> = { successful: "transaction_intent.successful", failed: "transaction_intent.failed", cancelled: "transaction_intent.cancelled" };

type Fault = "reorg-1" | "reorg-2" | "reorg-3" | "spike" | "drop";

interface Options {
  /** Loops of each load kind. */
  loops: number;
  players: number;
  /** The faults, in order, one every `gapMs`. */
  faults: Fault[];
  gapMs: number;
  /** The most the drill waits at the end for intents to settle and the books to balance. */
  settleMs: number;
}

const randomFaults = (n: number): Fault[] => Array.from({ length: n }, (_, i) => (["reorg-1", "reorg-2", "reorg-3", "spike", "drop"] as const)[(i * 7 + Math.floor(Math.random() * 5)) % 5]!);
const FULL: Options = { loops: 2, players: 8, faults: randomFaults(24), gapMs: 12_000, settleMs: 300_000 };
const SHORT: Options = { loops: 1, players: 4, faults: ["reorg-1", "spike", "reorg-2", "drop", "reorg-3"], gapMs: 9_000, settleMs: 180_000 };

interface Recovery {
  fault: Fault;
  /** The probe intent, the block it was made at and the one it landed in. */
  probe: { id: string; madeAt: number; landedIn: number | null } | null;
  /** Seconds until no transaction of our executors was left in the node's pool (null: not within a minute). */
  poolEmptySeconds: number | null;
  /** Blocks from a fresh intent's creation to its landing (null: it did not land within a minute). */
  probeBlocks: number | null;
}

const rpcOf = (chain: ChainConfig) => <T = unknown>(method: string, params: unknown[] = []) => publicClient(chain).request({ method: method as never, params: params as never }) as Promise<T>;

/** Our executors' transactions in the node's pool, pending and queued. */
async function pooled(chain: ChainConfig, executors: Address[]): Promise<number> {
  const content = await rpcOf(chain)<{ pending: Record<string, object>; queued: Record<string, object> }>("txpool_content");
  const ours = new Set(executors.map((a) => a.toLowerCase()));
  let n = 0;
  for (const section of [content.pending, content.queued]) for (const [from, txs] of Object.entries(section)) if (ours.has(from.toLowerCase())) n += Object.keys(txs).length;
  return n;
}

/**
 * One fault on the node itself (not through the proxies: the operator's chain does this, not the service's view of it).
 * Answers the transactions it took away: those of the blocks a reorg replaced (anvil drops them), or the pool dropped.
 */
async function inject(chain: ChainConfig, fault: Fault): Promise<number> {
  const rpc = rpcOf(chain);
  if (fault.startsWith("reorg-")) {
    const depth = Number(fault.slice(6));
    const head = await publicClient(chain).getBlockNumber({ cacheTime: 0 });
    const blocks = await Promise.all(Array.from({ length: depth }, (_, i) => publicClient(chain).getBlock({ blockNumber: head - BigInt(i) })));
    await rpc("anvil_reorg", [depth, []]);
    return blocks.reduce((n, b) => n + b.transactions.length, 0);
  } else if (fault === "drop") {
    // When the pool holds something (between two blocks, most of the time it is empty): up to 10 s for it.
    let status = { pending: "0x0", queued: "0x0" };
    for (let i = 0; i < 100 && Number(status.pending) + Number(status.queued) === 0; i++) {
      status = await rpc<{ pending: string; queued: string }>("txpool_status");
      if (Number(status.pending) + Number(status.queued) === 0) await sleep(100);
    }
    await rpc("anvil_dropAllTransactions");
    return Number(status.pending) + Number(status.queued);
  } else {
    // The base fee ×20 for 10 blocks: set before each of them (anvil's next block takes it, then the market moves on).
    const base = (await publicClient(chain).getBlock()).baseFeePerGas ?? 1_000_000_000n;
    for (let i = 0; i < 10; i++) {
      const at = await publicClient(chain).getBlockNumber({ cacheTime: 0 });
      await rpc("anvil_setNextBlockBaseFeePerGas", [`0x${(base * 20n).toString(16)}`]);
      while ((await publicClient(chain).getBlockNumber({ cacheTime: 0 })) === at) await sleep(200);
    }
    return 0;
  }
}

/**
 * After a reorg or a drop: in how many blocks a fresh intent lands (counted from when it exists), then how long from
 * the fault until none of our executors' transactions is left in the node's pool (a bundle stuck above a lost nonce
 * would stay there).
 */
async function recovery(chain: ChainConfig, fixture: Fixture, executors: Address[], fault: Fault, probes: Set<string>): Promise<Recovery> {
  const started = now();
  let made: Recovery["probe"] = null;
  const probeBlocks = await (async () => {
    const player = fixture.players[Math.floor(Math.random() * fixture.players.length)]!;
    const created = await fixture.api.postIdempotent<{ id: string }>("/v1/transaction_intents", {
      chainId: CHAIN_ID,
      player: player.id,
      policy: fixture.policy,
      confirmationBlocks: 2,
      interactions: [{ contract: fixture.contract, functionName: "depositTo", functionArgs: [player.account] }],
    });
    if (!created) return null;
    // From the moment the intent exists (its POST answered): the relay's time, not the API's.
    const head = await publicClient(chain).getBlockNumber({ cacheTime: 0 });
    probes.add(created.id);
    made = { id: created.id, madeAt: Number(head), landedIn: null };
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      const intent = await fixture.api.call<{ response?: { blockNumber: number } }>("GET", `/v1/transaction_intents/${created.id}`);
      if (intent.response) {
        made.landedIn = intent.response.blockNumber;
        return intent.response.blockNumber - Number(head);
      }
      await sleep(250);
    }
    return null;
  })();
  let poolEmptySeconds: number | null = null;
  while (now() - started < 60_000) {
    if ((await pooled(chain, executors)) === 0) {
      poolEmptySeconds = (now() - started) / 1000;
      break;
    }
    await sleep(250);
  }
  return { fault, probe: made, poolEmptySeconds, probeBlocks };
}

/** At the end: each executor with nothing left in the pool and its pending nonce its mined one (no gap, nothing stuck). */
async function executorsClean(chain: ChainConfig, executors: Address[]): Promise<string[]> {
  const problems: string[] = [];
  if ((await pooled(chain, executors)) > 0) problems.push(`${await pooled(chain, executors)} executor transactions left in the pool`);
  for (const address of executors) {
    const [latest, pending] = await Promise.all([publicClient(chain).getTransactionCount({ address, blockTag: "latest" }), publicClient(chain).getTransactionCount({ address, blockTag: "pending" })]);
    if (latest !== pending) problems.push(`executor ${address}: mined nonce ${latest}, pending ${pending}`);
  }
  return problems;
}

interface IntentRow {
  id: string;
  status: string;
  userOperationHash: string;
  transactionHash: string | null;
  blockNumber: number | null;
  blockHash: string | null;
  response: { status?: number } | null;
  error: string | null;
  accountId: string;
}

const USER_OPERATION_EVENT = getAbiItem({ abi: entryPointAbi, name: "UserOperationEvent" });

/**
 * Every intent's final state from the chain: landed ones' transaction and block on the chain with their op's event in
 * it (successful as the event says); none left on its way; those not landed not on chain (by their op's hash).
 */
async function checkIntents(chain: ChainConfig, rows: IntentRow[]) {
  const client = publicClient(chain);
  const events = (await Promise.all(ourPaymasters(chain).map(({ entryPoint }) => client.getLogs({ address: entryPoint, event: USER_OPERATION_EVENT, fromBlock: 0n, toBlock: "latest" })))).flat();
  const byHash = new Map<string, typeof events>();
  const bySlot = new Map<string, number>();
  for (const e of events) {
    byHash.set(e.args.userOpHash!.toLowerCase(), [...(byHash.get(e.args.userOpHash!.toLowerCase()) ?? []), e]);
    const slot = `${e.address.toLowerCase()}:${e.args.sender!.toLowerCase()}:${e.args.nonce}`;
    bySlot.set(slot, (bySlot.get(slot) ?? 0) + 1);
  }
  const problems: string[] = [];
  for (const [hash, list] of byHash) if (list.length > 1) problems.push(`op ${hash} on chain ${list.length} times`);
  for (const [slot, n] of bySlot) if (n > 1) problems.push(`sender and nonce ${slot} used ${n} times`);
  const count = { landed: 0, failedCalls: 0, waitingSignature: 0, cancelled: 0, rejected: 0 };
  for (const row of rows) {
    const onChain = byHash.get(row.userOperationHash.toLowerCase())?.[0];
    const label = `intent ${row.id} (${row.status})`;
    if (row.status === "pending" || row.status === "broadcast") {
      problems.push(`${label}: still on its way${onChain ? ` though its op is on chain in ${onChain.transactionHash}` : ""}`);
      continue;
    }
    if (row.transactionHash) {
      count.landed++;
      if (row.status === "failed") count.failedCalls++;
      if (!onChain) {
        problems.push(`${label}: landed in ${row.transactionHash} (block ${row.blockNumber}), but its op ${row.userOperationHash} is not on the chain`);
        continue;
      }
      if (onChain.transactionHash.toLowerCase() !== row.transactionHash.toLowerCase() || onChain.blockHash.toLowerCase() !== (row.blockHash ?? "").toLowerCase() || Number(onChain.blockNumber) !== row.blockNumber) {
        problems.push(`${label}: recorded in ${row.transactionHash} block ${row.blockNumber} ${row.blockHash}, the chain has it in ${onChain.transactionHash} block ${onChain.blockNumber} ${onChain.blockHash}`);
      }
      if ((row.status === "successful") !== onChain.args.success) problems.push(`${label}: the chain says success=${onChain.args.success}`);
    } else {
      if (row.status === "awaiting_signature") count.waitingSignature++;
      else if (row.status === "cancelled") count.cancelled++;
      else count.rejected++;
      if (onChain) problems.push(`${label}: not landed for the service, but its op is on chain in ${onChain.transactionHash}`);
    }
  }
  return { problems, count, events: events.length };
}

/** Each intent's last webhook (of successful, failed, cancelled) is its final state; a landed intent has one. */
function checkWebhooks(rows: IntentRow[], got: { topic: string; objectId: string; at: number }[]) {
  const problems: string[] = [];
  const finals = new Map<string, string>();
  for (const d of [...got].sort((a, b) => a.at - b.at)) if (Object.values(FINAL_TOPICS).includes(d.topic)) finals.set(d.objectId, d.topic);
  for (const row of rows) {
    const want = FINAL_TOPICS[row.status];
    const last = finals.get(row.id);
    if (want && last !== want) problems.push(`intent ${row.id} is ${row.status}, its last webhook ${last ?? "none"}`);
    if (!want && last) problems.push(`intent ${row.id} is ${row.status}, yet its last webhook is ${last}`);
  }
  return problems;
}

export async function chainDrill(short: boolean): Promise<number> {
  const options = short ? SHORT : FULL;
  tempDir("chain");
  process.env.KEY_ENCRYPTION_KEY ??= crypto.randomBytes(32).toString("hex");
  // Our contracts deployed on a node mining each transaction (under 2 s blocks, prepareChain's deployments, one after
  // the other, took 113 s of a short drill's 4 minutes); then it mines every 2 s, not on each transaction.
  const node = await startAnvil({ chainId: CHAIN_ID, port: 0, blockTime: 0 });
  process.env.LOCAL_CHAINS = String(CHAIN_ID);
  process.env[`CHAIN_${CHAIN_ID}_RPC_URL`] = node.rpcUrl;
  const chain = findChain(CHAIN_ID)!;
  await prepareChain(chain);
  await publicClient(chain).request({ method: "evm_setIntervalMining" as never, params: [2] as never });
  // The service sees the chain through two providers: one failing requests (and hanging some), one lagging.
  const flaky = await startRpcProxy(node.rpcUrl, { errorRate: 0.05, timeoutRate: 0.01, lagBlocks: 0 });
  const lagging = await startRpcProxy(node.rpcUrl, { errorRate: 0.05, timeoutRate: 0, lagBlocks: 2 });
  const { server, saveLog, finish } = await startDrillServer("chain", { LOCAL_CHAINS: String(CHAIN_ID), [`CHAIN_${CHAIN_ID}_RPC_URL`]: `${flaky.url},${lagging.url}` });
  const secrets = new Map<string, string>();
  const receiver = await startReceiver(secrets);
  let code = 1;
  try {
    const fixture = await setupProject(server, chain, "chain drill", options.players);
    await subscribe(fixture, receiver.url, TOPICS, secrets);
    const open = await fixture.api.call<{ id: string }>("POST", "/v1/policies", { name: "open", chainId: CHAIN_ID, strategy: { sponsorSchema: "pay_for_user" } });
    await fixture.api.call("POST", "/v1/policy_rules", { policy: open.id, type: "contract_functions", wildcard: true, functionName: "All functions" });
    const offset = Number(server.env.RELAY_EXECUTOR_OFFSET);
    const executors = Array.from({ length: Number(server.env.RELAY_EXECUTORS ?? 3) }, (_, i) => serviceAccount(`executor-${offset + i}`).address);
    console.log(
      `\nChain drill${short ? " (short)" : ""}: blocks every 2 s; the server on two RPC proxies (5 % errors, 1 % requests hanging, one node 2 blocks behind); ` +
        `${options.loops} loop(s) of each load kind; faults every ${options.gapMs / 1000} s: ${options.faults.join(", ")}.`,
    );

    const load = await startLoad({ server: server.url, publishable: fixture.publishable, chain, fixture, openPolicy: open.id }, options.loops);
    const recoveries: Recovery[] = [];
    let removed = 0;
    const probes = new Set<string>();
    for (const fault of options.faults) {
      await sleep(options.gapMs * (0.7 + Math.random() * 0.6));
      const head = await publicClient(chain).getBlockNumber({ cacheTime: 0 });
      const taken = await inject(chain, fault);
      removed += taken;
      console.log(`  ${fault} at block ${head}${fault === "spike" ? "" : `, ${taken} transactions taken away`}; ${load.intents.size} intents and ${load.signed.size} ERC-7677 signatures so far`);
      if (fault !== "spike") {
        const r = await recovery(chain, fixture, executors, fault, probes);
        recoveries.push(r);
        console.log(`    executors' pool empty after ${r.poolEmptySeconds === null ? "> 60" : r.poolEmptySeconds.toFixed(1)} s; a fresh intent landed ${r.probeBlocks === null ? "not within a minute" : `${r.probeBlocks} block(s) after it was made`}`);
      }
    }
    await load.stop();
    // After the storm: the providers answer again, and the books must come to equal the chain.
    for (const proxy of [flaky, lagging]) proxy.faults = { errorRate: 0, timeoutRate: 0, lagBlocks: 0 };
    console.log(`  load stopped: ${load.intents.size} intents, ${load.signed.size} ERC-7677 signatures (${load.reasked} re-asked); settling (at most ${options.settleMs / 1000} s)…`);

    const settleStarted = now();
    let reconciliation: ChainReconciliation | null = null;
    // Exit 1 when not balanced: its JSON is the answer either way (none when the command itself failed).
    const reconcile = async () => {
      const { stdout, stderr } = await runCliAsync(server, ["sponsorship", "reconcile", "--chain", String(CHAIN_ID), "--json"]);
      try {
        return JSON.parse(stdout) as ChainReconciliation;
      } catch {
        console.log(`  reconcile failed: ${stderr.split("\n").slice(0, 3).join(" ")}`);
        return null;
      }
    };
    const intentRows = () =>
      query<IntentRow>(
        server,
        `select id, status, user_operation_hash as "userOperationHash", transaction_hash as "transactionHash", block_number as "blockNumber", block_hash as "blockHash", response, error, account_id as "accountId"
           from transaction_intents where project_id = $1`,
        [fixture.projectId],
      );
    // Settled: no intent on its way, each as the chain has it (the follower lands those landed outside), every event
    // published delivered and no relay or delivery run left, and the books reconciled with the chain up to its head.
    let left = "";
    const settled = await settle(
      "settling",
      Date.now() + options.settleMs,
      async () => {
        const rows = await intentRows();
        const unchecked = (await checkIntents(chain, rows)).problems.length;
        const events = await publishedEvents(server, fixture.projectId, TOPICS);
        const received = new Set(receiver.got.map((d) => d.webhookId));
        const undelivered = events.filter((e) => !received.has(e.id)).length;
        const runs = await unfinishedRuns(server);
        left = `${unchecked} intents not as the chain has them, ${undelivered} events not delivered, ${runs} runs unfinished`;
        if (unchecked || undelivered || runs) return false;
        reconciliation = await reconcile();
        const head = Number(await publicClient(chain).getBlockNumber({ cacheTime: 0 }));
        return reconciliation !== null && reconciliation.balanced && reconciliation.toBlock >= head - 3;
      },
      async () => {
        const r = reconciliation as ChainReconciliation | null;
        return `${left}; books ${r ? `${r.balanced ? "balanced" : "not balanced"} to block ${r.toBlock}` : "not reconciled yet"}`;
      },
    );
    const settleSeconds = (now() - settleStarted) / 1000;
    const final = (await reconcile())!;
    const rows = await intentRows();
    const intents = await checkIntents(chain, rows);
    const webhooks = checkWebhooks(rows, receiver.got);
    const executorProblems = await executorsClean(chain, executors);
    // Each intent's calls ran once: one op of it on the chain, whatever signings (rebuilds) it had.
    const twice = await query<{ intentId: string; n: number }>(
      server,
      `select intent_id as "intentId", count(*)::int as n from chain_landings where status <> 'removed' and intent_id is not null and project_id = $1 group by 1 having count(*) > 1`,
      [fixture.projectId],
    );
    const ledger = await checkLedger(server, chain, fixture.projectId, load.intentSenders, { erc7677Senders: load.erc7677Senders });
    const log = saveLog();

    const kinds = (kind: LoadKind) => [...load.intents.values()].filter((k) => k === kind).length;
    const reorgs = server.output().split("the last block read left the chain").length - 1 + server.output().split("landings recorded ahead of it left the chain").length - 1;
    const reversed = server.output().split("a landing's block left the chain").length - 1;
    const filled = server.output().split("filled").length - 1;
    const paymasters = final.paymasters.flatMap((p): [string, string | number][] => [
      [`v${p.version} paymaster: chain Σ actualGasCost (ops)`, `${p.chain.wei} (${p.chain.events})`],
      [`v${p.version} paymaster: ledger Σ settlements`, p.settledWei],
      [`v${p.version} paymaster: unattributed wei (ops)`, `${p.unattributed.wei} (${p.unattributed.events})`],
      [`v${p.version} paymaster: mismatch wei`, p.mismatchWei],
    ]);
    printTable(`Chain drill${short ? " (short)" : ""} on PostgreSQL:`, [
      ["faults injected (transactions they took away)", `${options.faults.length} (${removed})`],
      ["reorgs found by the follower / landings removed (server log)", `${reorgs} / ${reversed}`],
      ["lost nonces filled (server log)", filled],
      ["intents custodial v0.6 / v0.8 / owner-landed", `${kinds("custodial")} / ${kinds("custodialV8")} / ${kinds("owner")}`],
      ["intents through /rpc", rows.filter((r) => r.id && !load.intents.has(r.id) && !probes.has(r.id)).length],
      ["ERC-7677 signatures (re-asked)", `${load.signed.size} (${load.reasked})`],
      ["ops of our paymasters on chain", intents.events],
      ["intents landed (calls reverted)", `${intents.count.landed} (${intents.count.failedCalls})`],
      ["intents awaiting a signature / cancelled / rejected", `${intents.count.waitingSignature} / ${intents.count.cancelled} / ${intents.count.rejected}`],
      ...paymasters,
      ["holds for signatures that can no longer land", `${final.staleHolds.count} (${final.staleHolds.wei} wei)`],
      ["executors' pool empty after a fault, worst s", Math.max(0, ...recoveries.map((r) => r.poolEmptySeconds ?? Infinity)).toFixed(1)],
      ["fresh intent after a fault, worst blocks", Math.max(0, ...recoveries.map((r) => r.probeBlocks ?? Infinity))],
      ["proxy requests / errors injected / hangs / lagged", `${flaky.counts.requests + lagging.counts.requests} / ${flaky.counts.errorsBefore + flaky.counts.errorsAfter + lagging.counts.errorsBefore + lagging.counts.errorsAfter} / ${flaky.counts.hangs} / ${lagging.counts.lagged}`],
      ["webhooks received", receiver.got.length],
      ["settled in s", settled ? settleSeconds.toFixed(0) : `> ${options.settleMs / 1000}`],
      ...ledger.rows,
    ]);
    console.log(`  failed tries (retried with the same key): ${describeErrors(fixture.api.errors)}`);
    for (const [why, n] of load.refusals) console.log(`  refused ×${n}: ${why}`);
    for (const [type, body] of fixture.api.refusals) console.log(`  API refused ${type}: ${body}`);
    console.log(`  server output: ${log}`);
    code = verdict(
      "chain",
      [
        ["intents or ops not as the chain has them", intents.problems],
        ["intents with more than one landing in the books (calls run twice, or a landing not undone)", twice.map((t) => `${t.intentId}: ${t.n} landings`)],
        ["ledger not the chain (reconciliation)", final.balanced ? [] : [JSON.stringify({ paymasters: final.paymasters.map((p) => ({ v: p.version, mismatch: p.mismatchWei, unattributed: p.unattributed, missing: p.missing })), staleHolds: final.staleHolds })]],
        ["ledger problems", ledger.problems],
        ["last webhooks not the final state", webhooks],
        ["executors' pool not empty within a minute", recoveries.filter((r) => r.poolEmptySeconds === null).map((r) => r.fault)],
        ["executors not clean at the end", executorProblems],
        [
          "fresh intents not landed within 3 blocks",
          recoveries
            .filter((r) => r.probeBlocks === null || r.probeBlocks > 3)
            .map((r) => `${r.fault}: ${r.probeBlocks ?? "not landed"} (intent ${r.probe?.id ?? "not made"}, made at block ${r.probe?.madeAt}, landed in ${r.probe?.landedIn})`),
        ],
        ["books not balanced in time", settled ? [] : [`after ${options.settleMs / 1000} s`]],
      ],
      `${options.faults.length} faults (${reorgs} reorgs followed), ${rows.length} intents as the chain has them, ${intents.events} ops of our paymasters on chain each charged once, 0 wei unattributed, 0 wei held for dead signatures; executors' pool empty within ${Math.max(0, ...recoveries.map((r) => r.poolEmptySeconds ?? 0)).toFixed(1)} s and fresh intents in ${Math.max(0, ...recoveries.map((r) => r.probeBlocks ?? 0))} block(s) after each fault`,
    );
    return code;
  } finally {
    await receiver.close();
    await finish(code === 0);
    await flaky.close();
    await lagging.close();
    await node.stop();
  }
}


