import { execFile, execFileSync, spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { CHAIN_CONFIG_VARS } from "@/lib/chain/registry";
import { serverNodeOptions } from "../../scripts/node-options.mjs";
import { createFreshDatabase } from "./fresh-database";

const root = path.resolve(import.meta.dirname, "../..");

async function freePort(port = 0): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.listen(port, "127.0.0.1", () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
    srv.on("error", reject);
  });
}

/** A free port whose next port is free too (the two local chains' ports). */
async function freePortPair(): Promise<number> {
  for (;;) {
    const port = await freePort();
    if (await freePort(port + 1).then(() => true, () => false)) return port;
  }
}

export interface RunningServer {
  url: string;
  env: NodeJS.ProcessEnv;
  dataDir: string;
  /** The server process's pid (changes on restart). */
  pid: () => number;
  /** Everything the server printed, over all its starts. */
  output: () => string;
  /**
   * SIGKILLs the process, as a crash or the OOM killer would: no shutdown, data dir and database
   * stay. (`next start` serves from its own process: there is no child left running.)
   */
  kill(): Promise<void>;
  /** Starts it again after `kill()`: same port, data dir, database, master key and environment. */
  restart(): Promise<void>;
  /** Sends a signal (SIGTERM: a clean stop) without waiting; `exited` answers how the process ended. */
  signal(signal: NodeJS.Signals): void;
  exited(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stop(): Promise<void>;
}

/**
 * A production server (`next start`) as a user runs it, on a fresh database of its own:
 * a new `.data/` with PGlite, or a new database on the DATABASE_URL server. `extraEnv` adds to
 * (or overrides) its environment. `shareDatabaseOf` runs it on another running server's PostgreSQL
 * database instead (a second instance of the same installation); that server drops the database. `nodeArgs` go to
 * node before next's script (e.g. --cpu-prof, which NODE_OPTIONS does not take). `embedded` runs it as `npm start` runs on a
 * machine with nothing installed, whatever this process's environment: on PGlite, starting its own two anvil chains.
 */
export async function startServer(
  extraEnv: Record<string, string> = {},
  options: { shareDatabaseOf?: RunningServer; nodeArgs?: string[]; embedded?: boolean } = {},
): Promise<RunningServer> {
  const { shareDatabaseOf, nodeArgs = [], embedded = false } = options;
  execFileSync(process.execPath, [path.join(root, "scripts/build-if-stale.mjs")], { cwd: root, stdio: "inherit" });
  const port = await freePort();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "wallet-server-"));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATA_DIR: dataDir,
    HOST: "127.0.0.1",
    PORT: String(port),
    NODE_ENV: "production",
    RELAY_EXECUTOR_OFFSET: String(1000 + port),
    ...extraEnv,
  };
  delete env.PGLITE_DATA_DIR;
  if (embedded) {
    for (const name of Object.keys(env)) if (name === "DATABASE_URL" || CHAIN_CONFIG_VARS.test(name)) delete env[name];
    env.ANVIL_PORT = String(await freePortPair());
  }
  delete env.VITEST;
  delete env.LOG_FILE; // its logs stay in its output (kept for the run's secret check at stop)
  let dropDatabase = async () => {};
  if (shareDatabaseOf) {
    if (!shareDatabaseOf.env.DATABASE_URL) throw new Error("only a server on PostgreSQL (DATABASE_URL) can share its database");
    env.DATABASE_URL = shareDatabaseOf.env.DATABASE_URL;
  } else if (env.DATABASE_URL) {
    const database = await createFreshDatabase(env.DATABASE_URL, "srv");
    env.DATABASE_URL = database.url;
    dropDatabase = database.drop;
  }
  // As npm start sets them (scripts/node-options.mjs).
  env.NODE_OPTIONS = serverNodeOptions(env);
  let output = "";
  const url = `http://127.0.0.1:${port}`;
  let child: ChildProcess;

  async function launch() {
    const startedAt = output.length;
    child = spawn(process.execPath, [...nodeArgs, path.join(root, "node_modules/next/dist/bin/next"), "start", "-H", "127.0.0.1", "-p", String(port), "--keepAliveTimeout", "65000"], {
      cwd: root,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout!.on("data", (d) => (output += d));
    child.stderr!.on("data", (d) => (output += d));
    const deadline = Date.now() + 60_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`server exited early:\n${output.slice(startedAt)}`);
      try {
        const res = await fetch(`${url}/v1/players`);
        // ready once the database is up and the pipeline answers (401 without a key)
        if (res.status === 401 && output.slice(startedAt).includes("Database:")) break;
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) throw new Error(`server did not start:\n${output.slice(startedAt)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  const exit = async (signal: NodeJS.Signals) => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once("exit", r));
    child.kill(signal);
    await exited;
  };

  await launch();
  return {
    url,
    env,
    dataDir,
    pid: () => child.pid!,
    output: () => output,
    kill: () => exit("SIGKILL"),
    signal: (signal) => void child.kill(signal),
    exited: () =>
      child.exitCode !== null || child.signalCode !== null
        ? Promise.resolve({ code: child.exitCode, signal: child.signalCode })
        : new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal }))),
    async restart() {
      if (child.exitCode === null && child.signalCode === null) throw new Error("restart() needs the server to be dead: kill() it first");
      output += `\n----- restart -----\n`;
      await launch();
    },
    async stop() {
      await exit("SIGTERM");
      // Its log lines join the run's, which are grepped for secrets (test/helpers/global-setup.ts); the banner, which shows the first key by design, does not.
      if (process.env.TEST_LOG_DIR) {
        const lines = output.split("\n").filter((line) => line.startsWith('{"level":'));
        fs.appendFileSync(path.join(process.env.TEST_LOG_DIR, `server-${port}.log`), lines.join("\n") + "\n");
      }
      await dropDatabase();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Runs the CLI as a user would, with the server's environment. */
export function runCli(server: RunningServer, args: string[]): string {
  return execFileSync(path.join(root, "node_modules/.bin/tsx"), ["cli/index.ts", ...args], { cwd: root, env: server.env, encoding: "utf8" });
}

/** runCli without blocking this process meanwhile (what the CLI talks to may live in it: a drill's RPC proxies); its exit code too. */
export function runCliAsync(server: RunningServer, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(path.join(root, "node_modules/.bin/tsx"), ["cli/index.ts", ...args], { cwd: root, env: server.env, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}
