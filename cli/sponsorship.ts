import os from "node:os";
import { formatEther, parseEther } from "viem";
import type { AdminCommand } from "@/lib/admin-commands";
import type { ChainReconciliation } from "@/lib/follower/reconcile";
import type { CreditResult, StatusResult } from "@/lib/sponsorship/admin";

export const sponsorshipUsage = `  npm run cli -- sponsorship credit --project PROJECT_ID --mode test|live --chain CHAIN_ID --amount 0.5 [--note TEXT] [--json]
      credits the project's sponsorship balance on a chain, in the chain's native coin (an audited ledger entry)
  npm run cli -- sponsorship correct --project PROJECT_ID --mode test|live --chain CHAIN_ID --amount -0.1 --note TEXT [--json]
      corrects it (a negative amount debits it), saying why
  npm run cli -- sponsorship status [--chain CHAIN_ID] [--json]
      per chain, the paymaster's EntryPoint deposit against every project's balance (available + held)
  npm run cli -- sponsorship reconcile --chain CHAIN_ID [--from BLOCK] [--to BLOCK] [--json]
      per paymaster, the chain's sum of actualGasCost beside the ledger's settlements, the unattributed operations
      (the operator's) and holds no signature can land for any more; exits 1 when they differ`;

export class SponsorshipUsageError extends Error {}

/** `--amount -0.1` as `--amount=-0.1`: node's parseArgs takes a value starting with a dash for an option otherwise. */
export const joinNegativeAmounts = (argv: string[]) =>
  argv.flatMap((arg, i) => (arg === "--amount" && /^-\d/.test(argv[i + 1] ?? "") ? [] : i > 0 && argv[i - 1] === "--amount" && /^-\d/.test(arg) ? [`--amount=${arg}`] : [arg]));

interface Values {
  from?: string;
  to?: string;
  project?: string;
  mode?: string;
  chain?: string;
  amount?: string;
  note?: string;
}

/** Who runs the command, from where: kept on the ledger entry (the OS user and host; the operator's to read). */
export function operatorReference(): string {
  let user: string;
  try {
    user = os.userInfo().username;
  } catch {
    user = process.env.USER ?? process.env.LOGNAME ?? "unknown";
  }
  return `cli:${user}@${os.hostname()}`;
}

const chainOf = (value: string | undefined, verb: string) => {
  if (value === undefined) throw new SponsorshipUsageError(`sponsorship ${verb} needs --chain CHAIN_ID`);
  if (!/^\d{1,15}$/.test(value) || Number(value) < 1) throw new SponsorshipUsageError("--chain must be a chain id");
  return Number(value);
};

/** The command of `sponsorship credit|correct|status`, its amount in coin units turned into wei. */
export function sponsorshipCommand(verb: string, values: Values): AdminCommand {
  if (verb === "status") return { command: "sponsorship.status", ...(values.chain !== undefined && { chainId: chainOf(values.chain, verb) }) };
  if (verb === "reconcile") {
    const block = (value: string | undefined, name: string) => {
      if (value === undefined) return undefined;
      if (!/^\d{1,15}$/.test(value)) throw new SponsorshipUsageError(`--${name} must be a block number`);
      return Number(value);
    };
    const from = block(values.from, "from");
    const to = block(values.to, "to");
    if (from !== undefined && to !== undefined && from > to) throw new SponsorshipUsageError("--from must not be after --to");
    return { command: "sponsorship.reconcile", chainId: chainOf(values.chain, verb), ...(from !== undefined && { from }), ...(to !== undefined && { to }) };
  }
  if (verb !== "credit" && verb !== "correct") throw new SponsorshipUsageError(`Unknown command: sponsorship ${verb}`);
  if (!values.project) throw new SponsorshipUsageError(`sponsorship ${verb} needs --project PROJECT_ID`);
  if (values.mode !== "test" && values.mode !== "live") throw new SponsorshipUsageError(`sponsorship ${verb} needs --mode test or --mode live`);
  const chainId = chainOf(values.chain, verb);
  const raw = values.amount?.trim();
  if (!raw || !/^-?\d+(\.\d{1,18})?$/.test(raw)) {
    throw new SponsorshipUsageError(`sponsorship ${verb} needs --amount in the chain's native coin (e.g. 0.5; at most 18 decimals${verb === "correct" ? ", negative to debit" : ""})`);
  }
  const amount = parseEther(raw);
  if (amount === 0n) throw new SponsorshipUsageError("--amount must not be zero");
  if (verb === "credit" && amount < 0n) throw new SponsorshipUsageError("sponsorship credit takes a positive --amount; take an amount back with sponsorship correct");
  const note = values.note?.trim();
  if (verb === "correct" && !note) throw new SponsorshipUsageError("sponsorship correct needs --note saying why");
  return {
    command: "sponsorship.credit",
    project: values.project,
    mode: values.mode,
    chainId,
    amount: amount.toString(),
    cause: verb === "credit" ? "funding" : "correction",
    ...(note && { note }),
    reference: operatorReference(),
  };
}

const coins = (wei: string, symbol: string) => `${formatEther(BigInt(wei))} ${symbol}`;

export function describeCredit(result: CreditResult): string {
  const { entry, balance, currency: symbol } = result;
  const what = entry?.kind === "debit" ? `Debited ${coins(entry.amount, symbol)} from` : `Credited ${coins(entry?.amount ?? "0", symbol)} to`;
  return [
    `${what} project "${result.project.name}" (${result.project.id}) in ${result.mode} mode on chain ${result.chainId}${entry ? ` (entry ${entry.id}${entry.usd ? `, $${entry.usd}` : ""})` : ""}.`,
    `Balance now: available ${coins(balance.available, symbol)}, held ${coins(balance.held, symbol)}, settled ${coins(balance.settled, symbol)}, credited ${coins(balance.credited, symbol)}.`,
  ].join("\n");
}

export function describeStatus(rows: StatusResult): string {
  if (rows.length === 0) return "No chains configured.";
  const lines = rows.map((r) => {
    const head = `chain ${r.chainId} (${r.name}, ${r.mode})`;
    const balances = `projects' balances ${coins(r.balances, r.currency)}`;
    if (r.deposit === null) return `${head}: paymaster deposit unknown (${r.error ?? "unreadable"}); ${balances}`;
    const margin = BigInt(r.margin!);
    const verdict = r.covered
      ? `covered, ${coins(margin.toString(), r.currency)} to spare`
      : `NOT COVERED: short by ${coins((-margin).toString(), r.currency)}; top the paymaster up (EntryPoint.depositTo(paymaster))`;
    return `${head}: paymaster deposit ${coins(r.deposit, r.currency)}, ${balances}: ${verdict}`;
  });
  return lines.join("\n");
}

export function describeReconciliation(r: ChainReconciliation): string {
  const lines = [`chain ${r.chainId}, blocks ${r.fromBlock} to ${r.toBlock} (head ${r.head}; confirmed blocks the chain follower has read):`];
  for (const p of r.paymasters) {
    lines.push(
      `  paymaster v${p.version} ${p.paymaster}: chain ${p.chain.wei} wei in ${p.chain.events} operations | ledger settled ${p.settledWei} wei | unattributed ${p.unattributed.wei} wei in ${p.unattributed.events} | mismatch ${p.mismatchWei} wei`,
    );
    for (const e of p.unattributed.sample) lines.push(`    unattributed (the operator's): ${e.userOpHash} sender ${e.sender} nonce ${e.nonce} in ${e.transactionHash} (block ${e.blockNumber}), ${e.actualGasCost} wei`);
    for (const e of p.missing.sample) lines.push(`    not on the ledger as on chain: ${e.userOpHash} in ${e.transactionHash} (block ${e.blockNumber}), ${e.actualGasCost} wei`);
  }
  lines.push(`  holds held for signatures that can no longer land: ${r.staleHolds.count} (${r.staleHolds.wei} wei)${r.staleHolds.ids.length ? `: ${r.staleHolds.ids.join(", ")}` : ""}`);
  lines.push(r.balanced ? "The ledger is the chain." : "NOT BALANCED: see above (unattributed operations are the operator's; a mismatch or a stale hold is a bug to report).");
  return lines.join("\n");
}
