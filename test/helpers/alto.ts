import { spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { parseEther, toHex, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";

/** A real ERC-4337 bundler (@pimlico/alto) run by a test against one of the test anvils. */
export interface AltoBundler {
  url: string;
  /** The accounts alto sends its bundles from. */
  executors: Address[];
  /** A JSON-RPC call to alto (debug_bundler_* methods are enabled). */
  request(method: string, params?: unknown[]): Promise<unknown>;
  /** Everything alto printed so far (it is kept quiet; show this when a test fails). */
  output(): string;
  stop(): Promise<void>;
}

export interface AltoOptions {
  rpcUrl: string;
  entryPoint: Address;
  /** Executor keys (fresh ones by default); alto bundles from these. */
  executorKeys?: Hex[];
}

/** alto's CLI script, run with this node directly: `npx alto` would add a wrapper process between us and it. */
function altoScript(): string {
  for (let dir = process.cwd(); ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, "node_modules", "@pimlico", "alto", "esm", "cli", "alto.js");
    if (fs.existsSync(candidate)) return candidate;
    if (path.dirname(dir) === dir) throw new Error("@pimlico/alto not found: npm install");
  }
}

/** A port free right now. alto always binds 0.0.0.0, so the probe does too. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "0.0.0.0", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

async function rpc(url: string, method: string, params: unknown[] = []): Promise<unknown> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  const body = (await response.json()) as { result?: unknown; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result;
}

/**
 * Starts alto on a free port, its utility and executor keys funded with anvil_setBalance, and resolves once it
 * answers eth_supportedEntryPoints. Tuned for anvil: safe mode off (its ERC-7562 checks run a JavaScript
 * debug_traceCall tracer, which anvil cannot), a static 1 gwei tip (anvil suggests the last tip it saw, so fees
 * would climb block after block), and short bundle intervals so an op lands in about 100 ms. It deploys its
 * simulation contracts (which its bundling needs) with the utility key at start.
 */
export async function startAlto(options: AltoOptions): Promise<AltoBundler> {
  const executorKeys = options.executorKeys ?? [generatePrivateKey(), generatePrivateKey()];
  const utilityKey = generatePrivateKey();
  for (const key of [utilityKey, ...executorKeys]) {
    await rpc(options.rpcUrl, "anvil_setBalance", [privateKeyToAccount(key).address, toHex(parseEther("1000"))]);
  }
  const port = await freePort();
  const args = [
    altoScript(),
    ...["--entrypoints", options.entryPoint],
    ...["--rpc-url", options.rpcUrl],
    ...["--port", String(port)],
    ...["--executor-private-keys", executorKeys.join(",")],
    ...["--utility-private-key", utilityKey],
    ...["--safe-mode", "false"],
    ...["--static-max-priority-fee-per-gas", "1"],
    ...["--min-bundle-interval", "20", "--max-bundle-interval", "100", "--block-time", "100"],
    // debug_bundler_setBundlingMode lets a test hold ops in the mempool.
    "--enable-debug-endpoints",
    ...["--log-level", "info", "--public-client-log-level", "warn", "--wallet-client-log-level", "warn"],
  ];
  // Its own process group, so stopping it takes any child it started along.
  const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"], detached: true });
  let output = "";
  const collect = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-200_000);
  };
  child.stdout!.on("data", collect);
  child.stderr!.on("data", collect);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const killGroup = (signal: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, signal);
    } catch {
      // already gone
    }
  };
  // A test process that dies must not leave alto behind.
  const onExit = () => killGroup("SIGKILL");
  process.once("exit", onExit);

  const stop = async () => {
    process.off("exit", onExit);
    if (child.exitCode === null && child.signalCode === null) {
      killGroup("SIGTERM");
      const killer = setTimeout(() => killGroup("SIGKILL"), 3_000);
      await exited;
      clearTimeout(killer);
    }
    // Children of its group that outlived it.
    killGroup("SIGKILL");
  };

  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      await stop();
      throw new Error(`alto exited (${child.exitCode ?? child.signalCode}) before it answered:\n${output.slice(-4_000)}`);
    }
    try {
      const supported = (await rpc(url, "eth_supportedEntryPoints")) as string[];
      if (supported.some((a) => a.toLowerCase() === options.entryPoint.toLowerCase())) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`alto did not answer within 60 s:\n${output.slice(-4_000)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url,
    executors: executorKeys.map((key) => privateKeyToAccount(key).address),
    request: (method, params) => rpc(url, method, params),
    output: () => output,
    stop,
  };
}
