// `npm start`: builds the app when needed, then serves it (on 127.0.0.1:3000 unless HOST/PORT say otherwise).
import { spawn } from "node:child_process";
import path from "node:path";
import { buildIfStale, nextBin } from "./build-if-stale.mjs";

buildIfStale();

const host = process.env.HOST ?? "127.0.0.1";
const port = process.env.PORT ?? "3000";
const server = spawn(process.execPath, [nextBin, "start", "-H", host, "-p", port], {
  cwd: path.resolve(import.meta.dirname, ".."),
  stdio: "inherit",
  env: { ...process.env, HOST: host, PORT: port },
});
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => server.kill(signal));
server.on("exit", (code, signal) => process.exit(code ?? (signal ? 0 : 1)));
