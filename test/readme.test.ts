import { execFile } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rememberSecrets } from "./helpers/secrets";
import { startServer, type RunningServer } from "./helpers/server";

/**
 * The documentation's commands, run as written (issue 33, point 4): the fenced `sh` blocks of the
 * README's quick start and of docs/api.md's curl tour are read from the files at run time (an edited
 * page is what is tested) and run with bash against a production server, as a newcomer pastes them
 * after `npm start` (the server started here stands for `npm install` and `npm start`). Only what must
 * differ is substituted: the base URL `http://127.0.0.1:3000` (the server's port), and `.data/`, which
 * is the server's data dir (bash runs in a temporary directory whose `.data` links to it).
 */

const root = path.resolve(import.meta.dirname, "..");
const DOCUMENTED_URL = "http://127.0.0.1:3000";
const read = (file: string) => fs.readFileSync(path.join(root, file), "utf8");

/** The text under a `## heading` of a Markdown page, up to the next heading of the same level. */
function section(markdown: string, heading: string): string {
  const lines = markdown.split("\n");
  const start = lines.findIndex((line) => line.trim() === `## ${heading}`);
  if (start < 0) throw new Error(`no "## ${heading}" section`);
  let fenced = false;
  let end = start + 1;
  for (; end < lines.length; end++) {
    const line = lines[end]!;
    if (line.startsWith("```")) fenced = !fenced;
    else if (!fenced && /^##? /.test(line)) break;
  }
  return lines.slice(start + 1, end).join("\n");
}

/** The fenced blocks of a piece of Markdown: the info string (`sh`, `js`, or empty) and the text. */
function fences(markdown: string): { lang: string; body: string }[] {
  return [...markdown.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)].map((m) => ({ lang: m[1]!, body: m[2]! }));
}

const shBlocks = (file: string, heading: string) => {
  const blocks = fences(section(read(file), heading)).filter((b) => b.lang === "sh").map((b) => b.body);
  if (!blocks.length) throw new Error(`no sh block under "## ${heading}" in ${file}`);
  return blocks;
};

/** The JSON values printed one after the other (curl -s prints no newline between bodies). */
function jsonValues(text: string): unknown[] {
  const values: unknown[] = [];
  let depth = 0;
  let start = 0;
  let inString = false;
  let escaped = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (inString) {
      if (escaped) escaped = false;
      else if (c === "\\") escaped = true;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "{" || c === "[") {
      if (depth++ === 0) start = i;
    } else if (c === "}" || c === "]") {
      if (--depth === 0) values.push(JSON.parse(text.slice(start, i + 1)));
    } else if (depth === 0 && c.trim()) throw new Error(`not JSON at ${i}: ${JSON.stringify(text.slice(i, i + 80))}`);
  }
  if (depth !== 0) throw new Error(`truncated JSON output: ${text.slice(start, start + 200)}`);
  return values;
}

let server: RunningServer;
let workDir: string;
let sk: string;

beforeAll(async () => {
  server = await startServer();
  workDir = fs.mkdtempSync(path.join(os.tmpdir(), "readme-"));
  fs.symlinkSync(server.dataDir, path.join(workDir, ".data"));
  const saved = JSON.parse(fs.readFileSync(path.join(server.dataDir, "default-project.json"), "utf8"));
  rememberSecrets(saved); // the run's logs are grepped for them (test/helpers/global-setup.ts)
  sk = saved.keys.test.secret;
}, 600_000);
afterAll(async () => {
  if (workDir) fs.rmSync(workDir, { recursive: true, force: true });
  await server?.stop();
});

/** A newcomer's shell: PATH and HOME, none of the test run's settings (DATABASE_URL, NODE_OPTIONS, …). */
const cleanEnv = (extra: Record<string, string>): NodeJS.ProcessEnv => {
  const env: Record<string, string | undefined> = { PATH: process.env.PATH, HOME: process.env.HOME, ...extra };
  return env as NodeJS.ProcessEnv;
};

/** Runs a script with bash in the work dir (so `./.data` is the server's), failing on the first failing command. */
function bash(script: string): Promise<{ stdout: string; stderr: string }> {
  const env = cleanEnv({ LANG: "C.UTF-8" });
  return new Promise((resolve, reject) => {
    execFile("bash", ["-e", "-o", "pipefail", "-c", script], { cwd: workDir, env, timeout: 180_000, maxBuffer: 16 << 20 }, (error, stdout, stderr) =>
      error ? reject(new Error(`${error.message}\nstdout: ${stdout}\nstderr: ${stderr}`)) : resolve({ stdout, stderr }),
    );
  });
}

const localize = (script: string) => script.replaceAll(DOCUMENTED_URL, server.url);

async function get(pathname: string) {
  const res = await fetch(`${server.url}${pathname}`, { headers: { authorization: `Bearer ${sk}` } });
  expect(res.status, pathname).toBe(200);
  return res.json();
}

/** The intent once it has a response, polled with a generous deadline (where the page sleeps a second or two). */
async function landed(id: string) {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const intent = await get(`/v1/transaction_intents/${id}`);
    if (intent.response) return intent;
    if (Date.now() > deadline) throw new Error(`intent ${id} did not land: ${JSON.stringify(intent)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

type Json = Record<string, any>;

describe("the README's quick start, run as written", () => {
  it("names only npm scripts that exist (README.md and CONTRIBUTING.md)", () => {
    const scripts = Object.keys(JSON.parse(read("package.json")).scripts);
    for (const file of ["README.md", "CONTRIBUTING.md"]) {
      const named = [...read(file).matchAll(/\bnpm run ([\w:.-]+)/g)].map((m) => m[1]);
      for (const m of read(file).matchAll(/\bnpm (start|test)\b/g)) named.push(m[1]);
      expect(named.length, file).toBeGreaterThan(0);
      for (const name of named) expect(scripts, `${file} names "npm run ${name}"`).toContain(name);
    }
  });

  it("Run it: the two commands and the banner they print", () => {
    const [run] = shBlocks("README.md", "Run it");
    expect(run!.split("\n").map((line) => line.replace(/#.*/, "").trim()).filter(Boolean)).toEqual(["npm install", "npm start"]);
    // The printed banner shown in the README (a fenced block without a language), "…" standing for what varies.
    const printed = fences(section(read("README.md"), "Run it")).filter((b) => b.lang === "");
    expect(printed.map((b) => b.body)).toEqual([expect.stringContaining("Created project"), expect.stringContaining("Chains (EntryPoint")]);
    // Printed relative to the working directory (.data/default-project.json after npm start).
    const savedIn = path.relative(root, path.join(server.dataDir, "default-project.json"));
    const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/ +/g, " +");
    for (const line of printed.flatMap((b) => b.body.split("\n")).filter((l) => l.trim())) {
      const pattern = line
        .trim()
        .split("…")
        .map((part) =>
          escape(localize(part).replaceAll(".data/default-project.json", savedIn))
            // The test's chains are not npm start's: their RPC and their deposit differ.
            .replace(/\\\(port \+\d+\\\)/, "\\([^)]*\\)")
            .replace(/deposit \+\d+/, "deposit +\\d+"),
        )
        .join("\\S*");
      expect(server.output(), line).toMatch(new RegExp(pattern));
    }
  });

  it("the banner's Try line creates a player", async () => {
    const tryLine = server.output().match(/Try: +(curl .*)/)?.[1];
    expect(tryLine).toContain(server.url);
    const { stdout } = await bash(tryLine!.replace(/^curl /, "curl -s "));
    expect(JSON.parse(stdout)).toMatchObject({ object: "player", id: expect.stringMatching(/^pla_/), name: "Alice" });
  });

  it("A first sponsored intent: the curl block lands a sponsored intent (status 1)", async () => {
    const blocks = shBlocks("README.md", "A first sponsored intent");
    expect(blocks).toHaveLength(1);
    const { stdout, stderr } = await bash(localize(blocks[0]!));
    expect(stderr).toBe("");
    // What it prints: the policy rule, then the intent as read after the pause.
    const printed = jsonValues(stdout) as Json[];
    expect(printed.map((v) => v.object)).toEqual(["policyRule", "transactionIntent"]);
    const [rule, shown] = printed as [Json, Json];
    expect(rule).toMatchObject({ type: "contract_functions", functionName: "depositTo" });
    expect(shown.id).toMatch(/^tin_/);
    expect(shown.chainId).toBe(31337);
    // "once landed": the response the README shows, waited for as long as a busy machine needs.
    const intent = await landed(shown.id);
    expect(intent.response).toMatchObject({ status: 1, transactionHash: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
    if (shown.response) expect(shown.response).toEqual(intent.response);
    // Sponsored by the block's policy, whose rule allows the call it made.
    expect(intent.interactions).toMatchObject([{ contract: rule.contract.id, functionName: "depositTo" }]);
    const policy = await get(`/v1/policies/${intent.policy.id}`);
    expect(policy.policyRules.map((r: Json) => r.id ?? r)).toContain(rule.id);
    expect(intent.player.id).toMatch(/^pla_/);
    // The player's account was created and deployed by this first operation.
    const account = await get(`/v1/accounts/${intent.account.id}`);
    expect(account).toMatchObject({ deployed: true, chainId: 31337 });
  }, 240_000);

  it("A first sponsored intent: the same with the official SDK (the js block) lands too", async () => {
    const blocks = fences(section(read("README.md"), "A first sponsored intent")).filter((b) => b.lang === "js");
    expect(blocks).toHaveLength(1);
    // Run as an ES module from the repository (where the SDK is installed), then "a moment later" as its last line says: polled.
    const code = `${localize(blocks[0]!.body)}
for (let tries = 0; ; tries++) {
  const got = await openfort.transactionIntents.get({ id: intent.id });
  if (got.response) { console.log(JSON.stringify(got)); break; }
  if (tries > 480) throw new Error("intent " + intent.id + " did not land");
  await new Promise((r) => setTimeout(r, 250));
}`;
    const env = cleanEnv({ SK: sk });
    const stdout = await new Promise<string>((resolve, reject) =>
      execFile(process.execPath, ["--input-type=module", "-e", code], { cwd: root, env, timeout: 180_000 }, (error, out, err) =>
        error ? reject(new Error(`${error.message}\n${out}\n${err}`)) : resolve(out),
      ),
    );
    const intent = JSON.parse(stdout);
    expect(intent).toMatchObject({ object: "transactionIntent", chainId: 31337, response: { status: 1 } });
    expect(intent.policy.id).toMatch(/^pol_/);
  }, 240_000);
});

describe("docs/api.md's tour with curl, run as written", () => {
  let hooks: http.Server;
  let hookUrl: string;
  beforeAll(async () => {
    // The tour's webhook URL (https://example.com/hooks) is replaced by one on this machine: tests reach only loopback.
    hooks = http.createServer((req, res) => {
      req.resume();
      req.on("end", () => res.writeHead(200).end("ok"));
    });
    await new Promise<void>((resolve) => hooks.listen(0, "127.0.0.1", resolve));
    hookUrl = `http://127.0.0.1:${(hooks.address() as AddressInfo).port}/hooks`;
  });
  afterAll(() => new Promise<void>((resolve) => (hooks ? hooks.close(() => resolve()) : resolve())));

  it("its blocks, one shell session, print what the page says and the intent lands", async () => {
    const blocks = shBlocks("docs/api.md", "A tour with curl");
    const script = localize(blocks.join("\n")).replaceAll("https://example.com/hooks", hookUrl);
    expect(script).not.toContain("example.com");
    const { stdout } = await bash(script);
    const printed = jsonValues(stdout) as Json[];
    for (const value of printed) expect(value.error, JSON.stringify(value)).toBeUndefined();
    const objects = printed.map((v) => (Array.isArray(v) ? "array" : v.object));
    expect(objects).toEqual(expect.arrayContaining(["player", "list", "contract", "account", "readContract", "signature", "policyRule", "transactionIntent"]));

    const players = printed.filter((v) => v.object === "player");
    expect(players.map((p) => [p.name, p.metadata])).toEqual([
      ["Alice", { level: "3" }],
      ["Bob", { level: 3 }],
    ]);
    // "same address": the account created on 31338 for the player of the 31337 one.
    const accounts = printed.find((v) => v.object === "list" && v.data?.[0]?.object === "account");
    expect(accounts!.data.map((a: Json) => a.chainId).sort()).toEqual([31337, 31338]);
    expect(new Set(accounts!.data.map((a: Json) => a.address)).size).toBe(1);
    expect(printed.find((v) => v.object === "readContract")).toMatchObject({ functionName: "getNonce", result: { type: "BigNumber", hex: "0x00" } });
    expect(printed.find((v) => v.object === "signature")!.signature).toMatch(/^0x[0-9a-f]+$/);

    const shown = printed.find((v) => v.object === "transactionIntent")!;
    const intent = await landed(shown.id);
    expect(intent.response).toMatchObject({ status: 1, transactionHash: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
  }, 240_000);
});
