import os from "node:os";
import { formatEther, parseEther } from "viem";
import type { AdminCommand } from "@/lib/admin-commands";
import type { CreditResult, StatusResult } from "@/lib/sponsorship/admin";

export const sponsorshipUsage = `  npm run cli -- sponsorship credit --project PROJECT_ID --mode test|live --chain CHAIN_ID --amount 0.5 [--note TEXT] [--json]
      credits the project's sponsorship balance on a chain, in the chain's native coin (an audited ledger entry)
  npm run cli -- sponsorship correct --project PROJECT_ID --mode test|live --chain CHAIN_ID --amount -0.1 --note TEXT [--json]
      corrects it (a negative amount debits it), saying why
  npm run cli -- sponsorship status [--chain CHAIN_ID] [--json]
      per chain, the paymaster's EntryPoint deposit against every project's balance (available + held)`;

export class SponsorshipUsageError extends Error {}

/** `--amount -0.1` as `--amount=-0.1`: node's parseArgs takes a value starting with a dash for an option otherwise. */
export const joinNegativeAmounts = (argv: string[]) =>
  argv.flatMap((arg, i) => (arg === "--amount" && /^-\d/.test(argv[i + 1] ?? "") ? [] : i > 0 && argv[i - 1] === "--amount" && /^-\d/.test(arg) ? [`--amount=${arg}`] : [arg]));

interface Values {
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
