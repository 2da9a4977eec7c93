// `npm start`: builds the app when needed, then serves it (on 127.0.0.1:3000 unless HOST/PORT say otherwise).
import { spawn } from "node:child_process";
import path from "node:path";
import { buildIfStale, nextBin } from "./build-if-stale.mjs";

buildIfStale();

const host = process.env.HOST ?? "127.0.0.1";
const port = process.env.PORT ?? "3000";
// Idle keep-alive connections outlive a typical load balancer's 60 s, and clients (which follow the
// server's hint) drop them before the server does instead of racing it at 5 s.
const server = spawn(process.execPath, [nextBin, "start", "-H", host, "-p", port, "--keepAliveTimeout", "65000"], {
  cwd: path.resolve(import.meta.dirname, ".."),
  stdio: "inherit",
  env: { ...process.env, HOST: host, PORT: port },
});
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => server.kill(signal));
server.on("exit", (code, signal) => process.exit(code ?? (signal ? 0 : 1)));
