// The sponsorship ledger of a drill's project (issues 30 and 40), checked against itself and against the chain once the
// drill is over: nothing held but for signatures that may still land, what was settled is what the project's ops cost on
// chain (their UserOperationEvents' actualGasCost), each intent's hold settled or released exactly once (or still held
// for its live signature), and the journal adds up to the balance row.
import { formatEther, getAbiItem, type Hex } from "viem";
import { entryPointAbi } from "@/contracts/artifacts";
import { publicClient } from "@/lib/chain/clients";
import { serviceDeployment } from "@/lib/chain/contracts";
import type { ChainConfig } from "@/lib/chain/registry";
import type { RunningServer } from "../../test/helpers/server";
import { settle } from "./checks";
import { query } from "./setup";

const USER_OPERATION_EVENT = getAbiItem({ abi: entryPointAbi, name: "UserOperationEvent" });

/**
 * How long the drills wait, once every intent has ended, for nothing to be held but for signatures that may still land:
 * a landing is settled by the relay as it records it, or by the chain follower, whose passes run every 10 s of each
 * minute (inngest/functions/sponsorship.ts), so about a minute at worst.
 */
export const LEDGER_SETTLE_MS = 90_000;

interface BalanceRow {
  credited: string;
  held: string;
  settled: string;
}

const balanceRow = async (server: RunningServer, projectId: string, chainId: number): Promise<BalanceRow | undefined> =>
  (
    await query<BalanceRow>(
      server,
      `select credited::text, held::text, settled::text from sponsorship_balances where project_id = $1 and livemode = false and chain_id = $2`,
      [projectId, chainId],
    )
  )[0];

/** The intents still on their way (their hold may still move). */
const unfinishedIntents = async (server: RunningServer, projectId: string) =>
  (await query<{ n: number }>(server, `select count(*)::int as n from transaction_intents where project_id = $1 and status in ('pending', 'broadcast')`, [projectId]))[0]!.n;

/** What the project holds for signatures that may still land: held holds with a live signature, at the most of them. */
const liveHeld = async (server: RunningServer, projectId: string, chainId: number) =>
  BigInt(
    (
      await query<{ wei: string }>(
        server,
        `select coalesce(sum(h.amount), 0)::text as wei from sponsorship_holds h
          where h.project_id = $1 and h.chain_id = $2 and h.status = 'held'
            and exists (select 1 from paymaster_signatures s where s.hold_id = h.id and s.status in ('live', 'landed'))`,
        [projectId, chainId],
      )
    )[0]!.wei,
  );

/**
 * Waits (at most `ms`) until no intent of the project is on its way and nothing is held for it but for signatures that
 * may still land: the relay settles each landing as it records it, the chain follower (a pass every 10 s of each
 * minute) settles what it finds and releases a hold once no signature of it can land. False when the deadline passed
 * first: the check then reports what is left held.
 */
export async function settleLedger(server: RunningServer, projectId: string, chainId: number, ms: number): Promise<boolean> {
  const held = async () => BigInt((await balanceRow(server, projectId, chainId))?.held ?? "0");
  return settle(
    "ledger",
    Date.now() + ms,
    async () => (await unfinishedIntents(server, projectId)) === 0 && (await held()) === (await liveHeld(server, projectId, chainId)),
    async () => `${formatEther(await held())} coin held (${formatEther(await liveHeld(server, projectId, chainId))} for signatures that may still land), ${await unfinishedIntents(server, projectId)} intents on their way`,
  );
}

export interface LedgerCheck {
  /** The drill's table rows. */
  rows: [string, string | number][];
  /** What does not add up (empty: the ledger is right). */
  problems: string[];
  /** The verdict line's words when it is right. */
  summary: string;
}

interface HoldOfIntent {
  intentId: string;
  intentStatus: string;
  userOperationHash: Hex;
  holdId: string | null;
  holdStatus: string | null;
  amount: string | null;
  settledAmount: string | null;
}

interface HoldEntries {
  holdId: string;
  kind: string;
  n: number;
  total: string;
}

const coin = (wei: bigint) => `${formatEther(wei)} coin`;

/**
 * The ledger of the project on `chain` (test mode), once the drill is over and settleLedger returned:
 * - held = what its holds hold for signatures that may still land (a failed intent's, until its validUntil): none
 *   is held for a signature that can no longer land;
 * - the sum of its settle entries less their reversals = the balance row's `settled` = the sum of actualGasCost of
 *   the UserOperationEvents of its intents' ops (final hashes) on chain, and no op of its accounts on chain that no
 *   intent answers for;
 * - each intent has one hold, settled (at its op's actualGasCost, one settle entry not reversed) when its op is on
 *   chain, released (no settle entry standing) or held for a live signature when it is not;
 * - the journal adds up to the balance row: credit - debit - reversed credits = credited, settle - reversed settles =
 *   settled, hold - release - settle = held.
 */
export async function checkLedger(server: RunningServer, chain: ChainConfig, projectId: string, senders: Hex[], options: { erc7677Senders?: Hex[] } = {}): Promise<LedgerCheck> {
  const problems: string[] = [];
  const chainId = chain.chainId;
  const balance = await balanceRow(server, projectId, chainId);
  if (!balance) return { rows: [["ledger", "no balance row"]], summary: "no ledger", problems: [`project ${projectId} has no sponsorship balance on chain ${chainId} (test mode): its intents held nothing`] };
  const credited = BigInt(balance.credited);
  const held = BigInt(balance.held);
  const settled = BigInt(balance.settled);

  // The journal, by kind.
  const kinds = await query<{ kind: string; n: number; total: string }>(
    server,
    `select kind, count(*)::int as n, sum(amount)::text as total from sponsorship_entries where project_id = $1 and livemode = false and chain_id = $2 group by kind`,
    [projectId, chainId],
  );
  const journal = (kind: string) => BigInt(kinds.find((k) => k.kind === kind)?.total ?? "0");
  const entries = (kind: string) => kinds.find((k) => k.kind === kind)?.n ?? 0;
  // Reversals undo a credit (a deposit's: cause deposit) or a settle entry (any other cause).
  const [reversed] = await query<{ credits: string; settles: string }>(
    server,
    `select coalesce(sum(amount) filter (where cause = 'deposit'), 0)::text as credits, coalesce(sum(amount) filter (where cause <> 'deposit'), 0)::text as settles
       from sponsorship_entries where project_id = $1 and livemode = false and chain_id = $2 and kind = 'reversal'`,
    [projectId, chainId],
  );
  const journalCredited = journal("credit") - journal("debit") - BigInt(reversed!.credits);
  const journalSettled = journal("settle") - BigInt(reversed!.settles);
  const journalHeld = journal("hold") - journal("release") - journal("settle");
  const live = await liveHeld(server, projectId, chainId);
  if (held !== live) problems.push(`held is ${held} wei (${coin(held)}) once every intent has ended, ${live} wei of it for signatures that may still land: the rest can no longer land`);
  if (journalCredited !== credited) problems.push(`journal credit - debit - reversed credits = ${journalCredited} wei, the balance row says credited = ${credited}`);
  if (journalSettled !== settled) problems.push(`journal settle entries less their reversals sum to ${journalSettled} wei, the balance row says settled = ${settled}`);
  if (journalHeld !== held) problems.push(`journal hold - release - settle = ${journalHeld} wei, the balance row says held = ${held}`);

  // Each intent's hold and the journal entries of each hold.
  const holds = await query<HoldOfIntent>(
    server,
    `select i.id as "intentId", i.status as "intentStatus", i.user_operation_hash as "userOperationHash",
            h.id as "holdId", h.status as "holdStatus", h.amount::text as amount, h.settled_amount::text as "settledAmount"
       from transaction_intents i left join sponsorship_holds h on h.intent_id = i.id
      where i.project_id = $1 and i.chain_id = $2 and i.source = 'api'`,
    [projectId, chainId],
  );
  const perHold = await query<HoldEntries>(
    server,
    `select hold_id as "holdId", kind, count(*)::int as n, sum(amount)::text as total
       from sponsorship_entries where project_id = $1 and chain_id = $2 and hold_id is not null group by hold_id, kind`,
    [projectId, chainId],
  );
  const entriesOf = new Map<string, Map<string, HoldEntries>>();
  for (const e of perHold) entriesOf.set(e.holdId, (entriesOf.get(e.holdId) ?? new Map()).set(e.kind, e));
  // Settle entries still standing (not reversed) by intent, whatever hold they name: an intent settled twice shows here.
  const settlesByIntent = await query<{ intentId: string; n: number }>(
    server,
    `select intent_id as "intentId", (count(*) filter (where kind = 'settle') - count(*) filter (where kind = 'reversal'))::int as n
       from sponsorship_entries where project_id = $1 and chain_id = $2 and kind in ('settle', 'reversal') and intent_id is not null group by intent_id`,
    [projectId, chainId],
  );
  const twice = settlesByIntent.filter((s) => s.n > 1);
  for (const s of twice) problems.push(`intent ${s.intentId} settled ${s.n} times`);

  // The chain: every UserOperationEvent of the project's accounts (the drill's chain is its own, from block 0), at
  // either EntryPoint; the ops of ERC-7677 senders are sponsored operations, not intents (their holds are theirs).
  const viaErc7677 = new Set((options.erc7677Senders ?? []).map((s) => s.toLowerCase()));
  const own = new Set([...senders.map((s) => s.toLowerCase()), ...viaErc7677]);
  const { entryPoint, entryPointV08 } = serviceDeployment();
  const logs = await publicClient(chain).getLogs({ address: [entryPoint, entryPointV08], event: USER_OPERATION_EVENT, fromBlock: 0n, toBlock: "latest" });
  const erc7677Ops = new Set<string>();
  const costOf = new Map<string, bigint>();
  for (const { args } of logs) {
    if (!own.has(args.sender!.toLowerCase())) continue;
    costOf.set(args.userOpHash!.toLowerCase(), (costOf.get(args.userOpHash!.toLowerCase()) ?? 0n) + args.actualGasCost!);
    if (viaErc7677.has(args.sender!.toLowerCase())) erc7677Ops.add(args.userOpHash!.toLowerCase());
  }
  const intentHashes = new Set(holds.map((h) => h.userOperationHash.toLowerCase()));
  let onChain = 0n;
  for (const [hash, cost] of costOf) {
    if (intentHashes.has(hash) || erc7677Ops.has(hash)) onChain += cost;
    else problems.push(`op ${hash} of the project's accounts is on chain (actualGasCost ${cost} wei) but no intent of the project answers for it: nothing settles what the paymaster paid`);
  }
  if (journalSettled !== onChain) problems.push(`settle entries less their reversals sum to ${journalSettled} wei, the project's ops cost ${onChain} wei on chain (UserOperationEvent actualGasCost)`);

  const count = { settled: 0, released: 0, held: 0 };
  for (const h of holds) {
    const cost = costOf.get(h.userOperationHash.toLowerCase());
    const label = `intent ${h.intentId} (${h.intentStatus})`;
    if (!h.holdId) {
      problems.push(`${label} has no hold: its op was sponsored without holding its cost`);
      continue;
    }
    const e = entriesOf.get(h.holdId) ?? new Map<string, HoldEntries>();
    const sum = (kind: string) => BigInt(e.get(kind)?.total ?? "0");
    // A settle entry a reorg reversed no longer stands.
    const settles = (e.get("settle")?.n ?? 0) - (e.get("reversal")?.n ?? 0);
    const standing = sum("settle") - sum("reversal");
    if (h.holdStatus === "held") count.held++;
    else if (h.holdStatus === "settled") count.settled++;
    else count.released++;
    if (cost !== undefined) {
      if (h.holdStatus !== "settled") problems.push(`${label}: its op is on chain (${cost} wei) but its hold is ${h.holdStatus}`);
      else if (BigInt(h.settledAmount ?? "-1") !== cost || standing !== cost) {
        problems.push(`${label}: settled at ${h.settledAmount} wei (journal ${standing}), its op cost ${cost} wei on chain`);
      }
    } else if (h.holdStatus === "settled") {
      // Held still is right for a signature that may land (held beside the others: see `held` above).
      problems.push(`${label}: its op is not on chain but its hold is settled at ${h.settledAmount} wei`);
    }
    if (settles > 1) problems.push(`${label}: hold ${h.holdId} has ${settles} settle entries`);
    if (h.holdStatus === "released" && settles > 0) problems.push(`${label}: hold ${h.holdId} is released yet has a settle entry`);
    const net = sum("hold") - sum("release") - sum("settle");
    const expected = h.holdStatus === "held" ? BigInt(h.amount!) : 0n;
    if (net !== expected) problems.push(`${label}: hold ${h.holdId} (${h.holdStatus}) journals hold - release - settle = ${net} wei, expected ${expected}`);
  }

  const rows: [string, string | number][] = [
    ["ledger: credited", coin(credited)],
    ["ledger: held", held.toString()],
    ["ledger: settled (balance row), wei", settled.toString()],
    ["ledger: settle entries less reversals, wei", journalSettled.toString()],
    ["ledger: actualGasCost on chain, wei", onChain.toString()],
    ["ledger: holds settled / released / held", `${count.settled} / ${count.released} / ${count.held}`],
    ["ledger: entries hold/settle/release/credit/reversal", `${entries("hold")}/${entries("settle")}/${entries("release")}/${entries("credit")}/${entries("reversal")}`],
    ["ledger: intents settled twice", twice.length],
    ["ledger: journal = balance row", journalCredited === credited && journalSettled === settled && journalHeld === held ? "yes" : "NO"],
  ];
  const summary = `ledger: ${count.settled} holds settled at ${onChain} wei = actualGasCost on chain, ${count.released} released, ${count.held} held for signatures that may still land, journal = balance`;
  return { rows, problems, summary };
}
