import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { PGlite } from "@electric-sql/pglite";
import { and, eq } from "drizzle-orm";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import { formatEther, parseEther } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { entryPointAbi } from "@/contracts/artifacts";
import { ourPaymasters } from "@/lib/chain/contracts";
import { findChain } from "@/lib/chain/registry";
import { getDb, type Db } from "@/lib/db/client";
import * as schema from "@/lib/db/schema";
import { sponsorshipBalances, sponsorshipEntries } from "@/lib/db/schema";
import { embeddedKeyFiles } from "@/lib/keys/master";
import { createProject, type ProjectWithKeys } from "@/lib/projects/service";
import { AdminCommandError, runAdminCommand } from "@/lib/admin-commands";
import { call, newProject } from "./helpers/api";
import { joinNegativeAmounts, sponsorshipCommand } from "@/cli/sponsorship";
import { clientOf } from "./helpers/chain";
import { rememberSecrets } from "./helpers/secrets";

// `npm run cli -- sponsorship …` run as an operator runs it, as a child process on the database: the run's
// PostgreSQL database with DATABASE_URL, otherwise an embedded data directory of its own (a test's PGlite lives in
// its process's memory, out of the CLI's reach), which this test opens between commands.

/** A chain configured by RPC URL alone, for this file only: the 31337 node behind an id nobody else uses, so its balances are this test's. */
const OWN_CHAIN = 31350;

const execute = promisify(execFile);
let env: NodeJS.ProcessEnv;
let dir: string | undefined;
let project: ProjectWithKeys;

/** The CLI's database, for the duration of `fn` (an embedded one is closed again: the CLI takes it whole). */
async function withDb<T>(fn: (db: Db) => Promise<T>): Promise<T> {
  if (!dir) return fn(await getDb());
  const client = await PGlite.create(path.join(dir, "pglite"));
  try {
    return await fn(drizzlePglite(client, { schema, casing: "snake_case" }) as unknown as Db);
  } finally {
    await client.close();
  }
}

async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await execute(process.execPath, ["--import", "tsx", "cli/index.ts", ...args], { env, cwd: process.cwd() });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

beforeAll(async () => {
  env = { ...process.env, [`CHAIN_${OWN_CHAIN}_RPC_URL`]: process.env.CHAIN_31337_RPC_URL };
  delete env.LOG_FILE;
  if (process.env.DATABASE_URL) {
    project = await createProject(await getDb(), "funded from the CLI");
  } else {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "sponsorship-cli-"));
    env.DATA_DIR = dir;
    for (const name of ["PGLITE_DATA_DIR", "PGLITE_TEMPLATE"]) delete env[name];
    // The run's migrated template, loaded into the directory the CLI opens.
    const client = await PGlite.create(path.join(dir, "pglite"), { loadDataDir: new Blob([fs.readFileSync(process.env.PGLITE_TEMPLATE!)]) });
    project = await createProject(drizzlePglite(client, { schema, casing: "snake_case" }) as unknown as Db, "funded from the CLI");
    await client.close();
    // This installation's keys (the paymaster's address derives from them), as its .data/ would hold them.
    const [from, to] = [embeddedKeyFiles(process.env.DATA_DIR), embeddedKeyFiles(dir)];
    for (const name of ["current", "keyring", "derivation"] as const) if (fs.existsSync(from[name])) fs.copyFileSync(from[name], to[name]);
  }
  rememberSecrets(project.keys);
}, 120_000);

afterAll(() => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

const entriesOf = (db: Db, livemode: boolean, chainId: number) =>
  db
    .select()
    .from(sponsorshipEntries)
    .where(and(eq(sponsorshipEntries.projectId, project.id), eq(sponsorshipEntries.livemode, livemode), eq(sponsorshipEntries.chainId, chainId)))
    .orderBy(sponsorshipEntries.createdAt);

describe("npm run cli -- sponsorship", () => {
  it("credits a project in coin units, as an audited entry naming who and where; corrects it with a note", async () => {
    const credited = await cli("sponsorship", "credit", "--project", project.id, "--mode", "test", "--chain", "31337", "--amount", "0.5", "--note", "launch budget", "--json");
    expect(credited.code, credited.stderr).toBe(0);
    const result = JSON.parse(credited.stdout);
    expect(result).toMatchObject({
      project: { id: project.id },
      mode: "test",
      chainId: 31337,
      currency: "ETH",
      entry: { kind: "credit", cause: "funding", amount: parseEther("0.5").toString(), note: "launch budget", reference: `cli:${os.userInfo().username}@${os.hostname()}` },
      // The local chains' test-mode credit of 1, and this one.
      balance: { credited: parseEther("1.5").toString(), available: parseEther("1.5").toString(), held: "0", settled: "0" },
    });

    const corrected = await cli("sponsorship", "correct", "--project", project.id, "--mode", "test", "--chain", "31337", "--amount", "-0.1", "--note", "credited twice");
    expect(corrected.code, corrected.stderr).toBe(0);
    expect(corrected.stdout).toMatch(/Debited 0\.1 ETH from project "funded from the CLI"/);
    expect(corrected.stdout).toMatch(/available 1\.4 ETH/);

    await withDb(async (db) => {
      const entries = await entriesOf(db, false, 31337);
      // The local credit comes in the first credit's transaction: the same instant.
      expect(entries.map((e) => [e.kind, e.cause, e.amount]).sort()).toEqual([
        ["credit", "funding", parseEther("0.5").toString()],
        ["credit", "local_grant", parseEther("1").toString()],
        ["debit", "correction", parseEther("0.1").toString()],
      ]);
      expect(entries.find((e) => e.kind === "debit")).toMatchObject({ note: "credited twice", reference: expect.stringMatching(/^cli:.+@.+/) });
      const [balance] = await db
        .select()
        .from(sponsorshipBalances)
        .where(and(eq(sponsorshipBalances.projectId, project.id), eq(sponsorshipBalances.livemode, false), eq(sponsorshipBalances.chainId, 31337)));
      expect(balance!.credited).toBe(parseEther("1.4").toString());
    });
    if (!dir) {
      // The same balance through the API.
      const { body } = await call("GET", "/v1/sponsorship/balances", { key: project.keys.test.secret, query: { chainId: 31337 } });
      expect(body.data[0].available).toBe(parseEther("1.4").toString());
    }
  }, 120_000);

  it("refuses what would be a mistake, saying why, and writes nothing", async () => {
    // The command line's own checks (before any database), in this process.
    const base = { project: project.id, mode: "test", chain: "31337" };
    const usage: [string, Record<string, string | undefined>, RegExp][] = [
      ["credit", { ...base, amount: "-0.1" }, /positive --amount/],
      ["credit", { ...base, amount: "0.1234567890123456789" }, /at most 18 decimals/],
      ["credit", { ...base, amount: "1e3" }, /--amount in the chain's native coin/],
      ["credit", { ...base, amount: "0" }, /must not be zero/],
      ["credit", { ...base, mode: undefined, amount: "1" }, /--mode test or --mode live/],
      ["credit", { ...base, chain: "main", amount: "1" }, /--chain must be a chain id/],
      ["credit", { ...base, project: undefined, amount: "1" }, /needs --project/],
      ["correct", { ...base, amount: "-1" }, /needs --note/],
      ["refund", base, /Unknown command: sponsorship refund/],
    ];
    for (const [verb, values, message] of usage) expect(() => sponsorshipCommand(verb, values), verb).toThrow(message);
    expect(sponsorshipCommand("correct", { ...base, amount: "-1.5", note: " why " })).toMatchObject({ amount: (-parseEther("1.5")).toString(), cause: "correction", note: "why" });
    expect(joinNegativeAmounts(["sponsorship", "correct", "--amount", "-0.1", "--note", "-x"])).toEqual(["sponsorship", "correct", "--amount=-0.1", "--note", "-x"]);

    // As the operator sees them: a usage error exits 2 with the usage; a refusal of the ledger exits 1.
    const usageError = await cli("sponsorship", "credit", "--project", project.id, "--mode", "test", "--chain", "31337", "--amount", "-0.1");
    expect(usageError).toMatchObject({ code: 2, stderr: expect.stringMatching(/positive --amount[\s\S]*npm run cli -- sponsorship status/) });
    const refused: [string[], RegExp][] = [
      [["--project", project.id, "--mode", "live", "--chain", "31337"], /a test chain: credit the project's test mode/],
      [["--project", "pro_nobody", "--mode", "test", "--chain", "31337"], /No such project: pro_nobody/],
    ];
    for (const [args, message] of refused) {
      const res = await cli("sponsorship", "credit", ...args, "--amount", "1");
      expect(res.code, `${args.join(" ")}: ${res.stdout}`).toBe(1);
      expect(res.stderr).toMatch(message);
    }
    await withDb(async (db) => expect(await entriesOf(db, false, 31337)).toHaveLength(3));
  }, 300_000);

  it("status shows each chain's paymaster deposit against every project's balance, flagging a chain it does not cover", async () => {
    // Both paymasters' deposits (v0.6 and v0.8, each at its EntryPoint) cover the chain's balances together.
    let deposit = 0n;
    for (const { entryPoint, paymaster } of ourPaymasters(findChain(31337)!)) {
      deposit += await clientOf(31337).readContract({ address: entryPoint, abi: entryPointAbi, functionName: "balanceOf", args: [paymaster] });
    }
    // More than the deposit, on a chain only this test uses (a live chain: no viem chain has its id).
    const over = deposit + parseEther("5");
    const credited = await cli("sponsorship", "credit", "--project", project.id, "--mode", "live", "--chain", String(OWN_CHAIN), "--amount", formatEther(over));
    expect(credited.code, credited.stderr).toBe(0);

    const status = await cli("sponsorship", "status", "--json");
    expect(status.code, status.stderr).toBe(0);
    const rows = JSON.parse(status.stdout) as { chainId: number; deposit: string; balances: string; covered: boolean; margin: string }[];
    expect(rows.map((r) => r.chainId).sort()).toEqual([31337, 31338, 31339, OWN_CHAIN]);
    const own = rows.find((r) => r.chainId === OWN_CHAIN)!;
    const balances = await withDb(async (db) => BigInt((await entriesOf(db, true, OWN_CHAIN))[0]!.amount));
    expect(own).toMatchObject({ mode: "live", currency: "ETH", balances: balances.toString(), covered: false });
    expect(BigInt(own.deposit)).toBeGreaterThan(0n);
    expect(BigInt(own.margin)).toBe(BigInt(own.deposit) - balances);
    expect(BigInt(own.margin)).toBeLessThan(0n);
    for (const r of rows.filter((r) => r.chainId !== OWN_CHAIN)) expect(BigInt(r.deposit)).toBeGreaterThan(0n);

    const text = await cli("sponsorship", "status", "--chain", String(OWN_CHAIN));
    expect(text.stdout).toMatch(new RegExp(`chain ${OWN_CHAIN} \\(Chain ${OWN_CHAIN}, live\\): paymaster deposit [\\d.]+ ETH, projects' balances [\\d.]+ ETH: NOT COVERED: short by [\\d.]+ ETH`));

    // Corrected back below the deposit: covered again.
    const back = await cli("sponsorship", "correct", "--project", project.id, "--mode", "live", "--chain", String(OWN_CHAIN), "--amount", `-${formatEther(balances)}`, "--note", "test over");
    expect(back.code, back.stderr).toBe(0);
    const after = JSON.parse((await cli("sponsorship", "status", "--chain", String(OWN_CHAIN), "--json")).stdout);
    expect(after).toEqual([expect.objectContaining({ chainId: OWN_CHAIN, balances: "0", covered: true })]);
  }, 300_000);
});

describe("the sponsorship admin commands (what a server owning the embedded database runs for the CLI)", () => {
  it("credit and report as the CLI does, and refuse through AdminCommandError with the same words", async () => {
    const db = await getDb();
    const own = await newProject("funded through the server");
    const command = { command: "sponsorship.credit", project: own.id, mode: "test", chainId: 31338, cause: "funding", reference: "cli:ops@host" } as const;
    const result = (await runAdminCommand(db, { ...command, amount: parseEther("2").toString() })) as { balance: { available: string } };
    expect(result.balance.available).toBe(parseEther("3").toString());
    await expect(runAdminCommand(db, { ...command, amount: "0" })).rejects.toThrow(AdminCommandError);
    await expect(runAdminCommand(db, { ...command, amount: "-5" })).rejects.toThrow(/A credit is positive/);
    await expect(runAdminCommand(db, { ...command, cause: "correction", amount: "-5" })).rejects.toThrow(/needs a --note/);
    await expect(runAdminCommand(db, { command: "sponsorship.status", chainId: 999 })).rejects.toThrow(/No configured chain 999/);
    const status = (await runAdminCommand(db, { command: "sponsorship.status", chainId: 31338 })) as { chainId: number; covered: boolean }[];
    expect(status).toEqual([expect.objectContaining({ chainId: 31338, covered: expect.any(Boolean) })]);
  });
});
