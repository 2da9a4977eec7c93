import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { log } from "@/lib/log";
import { envRaw } from "@/lib/config";

export interface AnvilOptions {
  chainId: number;
  /** 0 picks a free port. */
  port: number;
  host?: string;
  /** Load the chain from this file at start and dump it there periodically and on exit. */
  stateFile?: string;
  /** Seconds between blocks mined even without transactions (transactions still mine at once), so confirmations advance. */
  blockTime?: number;
  /**
   * false: transactions wait for the next of those blocks, as on a real chain (anvil's interval mining alone), instead
   * of each mining one at once beside them (mixed mining, the default).
   */
  mineEachTransaction?: boolean;
}

export interface AnvilNode {
  chainId: number;
  rpcUrl: string;
  pid: number;
  stop(): Promise<void>;
}

const ARCH: Record<string, string> = { x64: "amd64", arm64: "arm64" };

/**
 * The real anvil binary from @foundry-rs/anvil's platform package (not its node wrapper, whose
 * child outlives a kill), or ANVIL_BIN. Looked up in node_modules from the working directory
 * upwards: a bundler would rewrite `require.resolve`.
 */
export function anvilBinary(): string {
  const configured = envRaw("ANVIL_BIN");
  if (configured) return configured;
  const pkg = `@foundry-rs/anvil-${process.platform}-${ARCH[process.arch] ?? process.arch}`;
  const file = process.platform === "win32" ? "anvil.exe" : "anvil";
  for (let dir = process.cwd(); ; dir = path.dirname(dir)) {
    const candidate = path.join(/*turbopackIgnore: true*/ dir, "node_modules", pkg, "bin", file);
    if (fs.existsSync(candidate)) return candidate;
    if (path.dirname(dir) === dir) throw new Error(`anvil not found: install ${pkg} (npm install) or set ANVIL_BIN`);
  }
}

const running = new Set<ChildProcess>();
let exitHookInstalled = false;

function killAllOnExit() {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // SIGTERM, not SIGKILL: a process that exits while anvil is dumping its state (Next.js exits on
  // SIGINT before our own shutdown finishes) must not cut the file short. anvil finishes the dump
  // and exits by itself; one that lingers is found answering on its port by the next start.
  process.on("exit", () => {
    for (const child of running) child.kill("SIGTERM");
  });
}

const parses = (file: string) => {
  try {
    JSON.parse(fs.readFileSync(file, "utf8"));
    return true;
  } catch {
    return false;
  }
};

/**
 * anvil rewrites its state file in place, so a crash in the middle of a dump leaves it cut short and
 * anvil then refuses to start. Each start keeps a copy of a state that loads (`.last-good`); a file
 * that does not load is set aside and that copy (the chain as it was at the previous start) used.
 */
export function recoverStateFile(stateFile: string): "fresh" | "ok" | "restored" | "reset" {
  if (!fs.existsSync(stateFile)) return "fresh";
  const lastGood = `${stateFile}.last-good`;
  if (parses(stateFile)) {
    fs.copyFileSync(stateFile, lastGood);
    return "ok";
  }
  fs.renameSync(stateFile, `${stateFile}.damaged-${Date.now()}`);
  if (fs.existsSync(lastGood) && parses(lastGood)) {
    fs.copyFileSync(lastGood, stateFile);
    return "restored";
  }
  return "reset";
}

/** Spawns anvil and resolves once it listens. */
export function startAnvil(options: AnvilOptions): Promise<AnvilNode> {
  const host = options.host ?? "127.0.0.1";
  const args = ["--chain-id", String(options.chainId), "--port", String(options.port), "--host", host];
  if ((options.blockTime ?? 1) > 0) args.push("--block-time", String(options.blockTime ?? 1), ...(options.mineEachTransaction === false ? [] : ["--mixed-mining"]));
  if (options.stateFile) {
    const recovered = recoverStateFile(options.stateFile);
    if (recovered === "restored" || recovered === "reset") {
      log.warn(
        { chainId: options.chainId, stateFile: options.stateFile },
        `anvil's state file was damaged (set aside); ${recovered === "restored" ? "using the chain as it was at the previous start" : "starting the chain afresh"}`,
      );
    }
    args.push("--state", options.stateFile, "--state-interval", "5");
  }
  // The binary lives in node_modules, outside what the build should trace.
  const child = spawn(/*turbopackIgnore: true*/ anvilBinary(), args, { stdio: ["ignore", "pipe", "pipe"] });
  running.add(child);
  killAllOnExit();

  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  exited.then(() => running.delete(child));

  return new Promise((resolve, reject) => {
    let output = "";
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`anvil (chain ${options.chainId}) did not start within 20 s:\n${output.slice(-2000)}`));
    }, 20_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const listening = /Listening on ([\d.:[\]a-zA-Z]+):(\d+)/.exec(output);
      if (!listening) return;
      clearTimeout(timer);
      child.stdout!.off("data", onData);
      // Keep draining so a full pipe never blocks the node.
      child.stdout!.resume();
      resolve({
        chainId: options.chainId,
        rpcUrl: `http://${host}:${listening[2]}`,
        pid: child.pid!,
        stop: async () => {
          if (child.exitCode !== null || child.signalCode !== null) return;
          // SIGTERM lets anvil dump its state file.
          child.kill("SIGTERM");
          const killer = setTimeout(() => child.kill("SIGKILL"), 5_000);
          await exited;
          clearTimeout(killer);
        },
      });
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.once("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`anvil (chain ${options.chainId}) exited with code ${code}:\n${output.slice(-2000)}`));
    });
  });
}
