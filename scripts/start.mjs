// `npm start`: builds the app when needed, then serves it (on 127.0.0.1:3000 unless HOST/PORT say otherwise).
import { spawn } from "node:child_process";
import path from "node:path";
import { buildIfStale, nextBin } from "./build-if-stale.mjs";
import { serverNodeOptions } from "./node-options.mjs";

const started = performance.now();
const elapsed = () => `${Math.round((performance.now() - started) / 1000)} s`;

buildIfStale("[start]");

const host = process.env.HOST ?? "127.0.0.1";
const port = process.env.PORT ?? "3000";
const url = `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
console.log(`[start] starting the server on ${url} (${elapsed()} since npm start)`);
// Idle keep-alive connections outlive a typical load balancer's 60 s, and clients (which follow the
// server's hint) drop them before the server does instead of racing it at 5 s.
const server = spawn(process.execPath, [nextBin, "start", "-H", host, "-p", port, "--keepAliveTimeout", "65000"], {
  cwd: path.resolve(import.meta.dirname, ".."),
  stdio: "inherit",
  env: { ...process.env, HOST: host, PORT: port, NODE_OPTIONS: serverNodeOptions(process.env) },
});
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => server.kill(signal));
server.on("exit", (code, signal) => process.exit(code ?? (signal ? 0 : 1)));

// The last phase line: when the API first answers (the server boots its database and chains before that).
const probeHost = host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host;
const probeUrl = `http://${probeHost.includes(":") ? `[${probeHost}]` : probeHost}:${port}/v1/openapi.json`;
for (;;) {
  await new Promise((resolve) => setTimeout(resolve, 250));
  if (server.exitCode !== null) break;
  const answered = await fetch(probeUrl, { signal: AbortSignal.timeout(5_000) }).then(
    (res) => res.body?.cancel().then(() => res.ok) ?? res.ok,
    () => false,
  );
  if (answered) {
    console.log(`[start] ready: ${url}/v1 answers, ${elapsed()} after npm start`);
    break;
  }
}
