import { parseArgs } from "node:util";
import { getAddress, isAddress } from "viem";
import { dataDir, envRaw } from "@/lib/config";
import { upgradeManagedAccounts, type ManagedUpgrade } from "@/lib/accounts/managed";
import { findChain } from "@/lib/chain/registry";
import { deployChains, describeChains, listChains } from "./chains";
import { describeUpgrade, projectToUpgrade } from "./managed";
import { describeMint, mintTestNft } from "./nft";
import { describeCredit, describeReconciliation, describeStatus, joinNegativeAmounts, sponsorshipCommand, sponsorshipUsage, SponsorshipUsageError } from "./sponsorship";
import { describeRotation, rotateMaster } from "./keys";
import { closeDb, EmbeddedDatabaseBusy, getDb } from "@/lib/db/client";
import { embeddedOwner } from "@/lib/db/embedded";
import { AdminCommandError, runAdminCommand, type AdminCommand } from "@/lib/admin-commands";
import { claimUrl } from "@/lib/projects/claims";
import type { listProjects, ModeKeys, ProjectWithKeys } from "@/lib/projects/service";

const usage = `Usage:
  npm run cli -- project create --name NAME [--json]
  npm run cli -- project list [--json]
  npm run cli -- project claim-link [--project PROJECT_ID] [--json]
  npm run cli -- keys roll --project PROJECT_ID [--mode test|live] [--json]
  npm run cli -- keys rotate-master [--json]   (docs/operating.md: Rotating the master key)
  npm run cli -- chain list [--json]
  npm run cli -- chain deploy [--chain CHAIN_ID] [--json]
  npm run cli -- accounts upgrade-managed --chain CHAIN_ID --implementation 0x… [--project PROJECT_ID] [--json]
      points the project's beacon on that chain at a new account implementation: every ManagedV5 account
      of the project runs it from then on (--project is needed when there is more than one project)
  npm run cli -- dev mint-nft --chain CHAIN_ID --to 0x… [--token-id N] [--json]
      mints a TestNFT to an address on a local chain (deploying TestNFT once), to try ERC6551V1 token-bound accounts
${sponsorshipUsage}

Works on DATABASE_URL, or on the embedded database in .data/ (through the server while it runs).
Use "npm run -s cli -- ..." to get bare JSON on stdout.`;

class UsageError extends Error {}

function commandOf(positionals: string[], values: { name?: string; project?: string; mode?: string }): AdminCommand {
  switch (positionals.join(" ")) {
    case "project create":
      if (!values.name?.trim()) throw new UsageError("project create needs --name NAME");
      return { command: "project.create", name: values.name };
    case "project list":
      return { command: "project.list" };
    case "project claim-link":
      return { command: "project.claimLink", project: values.project };
    case "keys roll": {
      if (!values.project) throw new UsageError("keys roll needs --project PROJECT_ID");
      if (values.mode !== undefined && values.mode !== "test" && values.mode !== "live") throw new UsageError("--mode must be test or live");
      return { command: "keys.roll", project: values.project, modes: values.mode ? [values.mode] : ["test", "live"] };
    }
    default:
      throw new UsageError(`Unknown command: ${positionals.join(" ")}`);
  }
}

/** Runs on the database, or, when a running server owns the embedded one, through that server. */
async function execute(cmd: AdminCommand): Promise<unknown> {
  try {
    return await runAdminCommand(await getDb(), cmd);
  } catch (err) {
    if (!(err instanceof EmbeddedDatabaseBusy)) throw err;
  }
  const owner = embeddedOwner(dataDir());
  if (!owner?.adminUrl || !owner.adminToken) {
    throw new Error("The embedded database is in use by another process that is not a ready server; retry in a moment.");
  }
  const response = await fetch(owner.adminUrl, {
    method: "POST",
    headers: { authorization: `Bearer ${owner.adminToken}`, "content-type": "application/json" },
    body: JSON.stringify(cmd),
  });
  const body = (await response.json()) as { error?: { message: string } };
  if (!response.ok) throw new AdminCommandError(body.error?.message ?? `server answered ${response.status}`);
  return body;
}

const keyLines = (mode: string, keys: ModeKeys) => [`  ${mode}  publishable ${keys.publishable}`, `        secret      ${keys.secret}`];

function describe(cmd: AdminCommand, result: unknown): string {
  switch (cmd.command) {
    case "project.create": {
      const p = result as ProjectWithKeys;
      return [`Created project "${p.name}" (${p.id}). Secret keys are shown only now:`, ...keyLines("test", p.keys.test), ...keyLines("live", p.keys.live)].join("\n");
    }
    case "project.list": {
      const projects = result as Awaited<ReturnType<typeof listProjects>>;
      if (projects.length === 0) return "No projects yet.";
      return projects.map((p) => [`${p.id}  ${p.name}`, ...p.keys.map((k) => `  ${k.mode} ${k.kind.padEnd(11)} ${k.key}`)].join("\n")).join("\n");
    }
    case "project.claimLink": {
      // Whoever has a shell on the server is its operator: the link hands them (or whom they give it to) the project.
      const { project, token } = result as { project: { id: string; name: string }; token: string };
      const base = envRaw("NEXTAUTH_URL") ?? `http://${envRaw("HOST") ?? "127.0.0.1"}:${envRaw("PORT") ?? "3000"}`;
      return [`A new one-time link to claim project "${project.name}" (${project.id}); any earlier one no longer works:`, `  ${claimUrl(base, token)}`].join("\n");
    }
    case "keys.roll": {
      const { id, keys } = result as { id: string; keys: Record<string, ModeKeys> };
      return [
        `Rolled the keys of ${id}; the old ones no longer work. New secret keys are shown only now:`,
        ...Object.entries(keys).flatMap(([mode, k]) => keyLines(mode, k)),
      ].join("\n");
    }
    case "sponsorship.credit":
      return describeCredit(result as Parameters<typeof describeCredit>[0]);
    case "sponsorship.status":
      return describeStatus(result as Parameters<typeof describeStatus>[0]);
    case "sponsorship.reconcile":
      return describeReconciliation(result as Parameters<typeof describeReconciliation>[0]);
  }
}

async function main(argv: string[]) {
  const { values, positionals } = parseArgs({
    args: joinNegativeAmounts(argv),
    allowPositionals: true,
    options: {
      name: { type: "string" },
      project: { type: "string" },
      mode: { type: "string" },
      chain: { type: "string" },
      implementation: { type: "string" },
      to: { type: "string" },
      "token-id": { type: "string" },
      amount: { type: "string" },
      note: { type: "string" },
      from: { type: "string" },
      json: { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false },
    },
  });
  if (values.help || positionals.length === 0) {
    console.log(usage);
    return;
  }
  const verb = positionals.join(" ");
  if (verb === "chain list" || verb === "chain deploy") {
    const chainId = values.chain === undefined ? undefined : Number(values.chain);
    if (chainId !== undefined && !Number.isInteger(chainId)) throw new UsageError("--chain must be a chain id");
    const result = verb === "chain list" ? await listChains() : await deployChains(chainId);
    const text = verb === "chain list" ? describeChains(result as Awaited<ReturnType<typeof listChains>>) : `Deployed on ${chainId ?? "every configured chain"}:\n${JSON.stringify(result, null, 2)}`;
    console.log(values.json ? JSON.stringify(result, null, 2) : text);
    return;
  }
  if (verb === "accounts upgrade-managed") {
    if (values.chain === undefined || !/^\d+$/.test(values.chain)) throw new UsageError("accounts upgrade-managed needs --chain CHAIN_ID");
    if (!values.implementation) throw new UsageError("accounts upgrade-managed needs --implementation 0x… (the new account implementation's address)");
    const chain = findChain(Number(values.chain));
    if (!chain) throw new Error(`No configured chain ${values.chain}; see npm run cli -- chain list`);
    // Projects come from the database (through the server while it owns the embedded one); the upgrade itself is one
    // transaction from the beacon admin key, sent from here.
    const project = projectToUpgrade((await execute({ command: "project.list" })) as Parameters<typeof projectToUpgrade>[0], values.project);
    const result: ManagedUpgrade = await upgradeManagedAccounts({ projectId: project.id, livemode: chain.livemode }, chain.chainId, values.implementation);
    console.log(values.json ? JSON.stringify(result, null, 2) : describeUpgrade(project, result));
    return;
  }
  if (verb === "dev mint-nft") {
    if (values.chain === undefined || !/^\d+$/.test(values.chain)) throw new UsageError("dev mint-nft needs --chain CHAIN_ID");
    if (!values.to || !isAddress(values.to, { strict: false })) throw new UsageError("dev mint-nft needs --to 0x… (the address that will hold the token)");
    if (values["token-id"] !== undefined && !/^\d{1,78}$/.test(values["token-id"])) throw new UsageError("--token-id must be a non-negative integer");
    const chain = findChain(Number(values.chain));
    if (!chain) throw new Error(`No configured chain ${values.chain}; see npm run cli -- chain list`);
    const minted = await mintTestNft(chain, getAddress(values.to), values["token-id"] === undefined ? undefined : BigInt(values["token-id"]));
    console.log(values.json ? JSON.stringify(minted, null, 2) : describeMint(minted));
    return;
  }
  if (positionals[0] === "sponsorship") {
    const cmd = sponsorshipCommand(positionals.slice(1).join(" "), values);
    const result = await execute(cmd);
    console.log(values.json ? JSON.stringify(result, null, 2) : describe(cmd, result));
    // A reconciliation that does not balance fails the command (scripts and cron jobs can alert on it).
    if (cmd.command === "sponsorship.reconcile" && !(result as { balanced: boolean }).balanced) process.exitCode = 1;
    return;
  }
  if (verb === "keys rotate-master") {
    const result = await rotateMaster();
    console.log(values.json ? JSON.stringify(result, null, 2) : describeRotation(result));
    return;
  }
  const cmd = commandOf(positionals, values);
  const result = await execute(cmd);
  console.log(values.json ? JSON.stringify(result, null, 2) : describe(cmd, result));
}

main(process.argv.slice(2))
  .then(() => closeDb())
  .catch(async (err) => {
    await closeDb().catch(() => {});
    const usageProblem = err instanceof UsageError || err instanceof SponsorshipUsageError || String((err as { code?: string }).code).startsWith("ERR_PARSE_ARGS");
    console.error(usageProblem ? `${(err as Error).message}\n\n${usage}` : err instanceof Error ? err.message : String(err));
    process.exit(usageProblem ? 2 : 1);
  });
