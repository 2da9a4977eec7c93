// `npm start`: builds the app when there is no build or the sources changed since, then serves it.
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "..");
const nextBin = path.join(root, "node_modules", "next", "dist", "bin", "next");
const SOURCES = ["app", "components", "lib", "inngest", "public", "instrumentation.ts", "next.config.mjs", "package.json", "tsconfig.json"];

function newestMtime(p) {
  let stat;
  try {
    stat = fs.statSync(p);
  } catch {
    return 0;
  }
  if (!stat.isDirectory()) return stat.mtimeMs;
  return fs.readdirSync(p).reduce((max, name) => Math.max(max, newestMtime(path.join(p, name))), stat.mtimeMs);
}

const buildId = path.join(root, ".next", "BUILD_ID");
const builtAt = fs.existsSync(buildId) ? fs.statSync(buildId).mtimeMs : 0;
const changedAt = Math.max(...SOURCES.map((s) => newestMtime(path.join(root, s))));
if (builtAt < changedAt) {
  console.log(builtAt ? "Sources changed since the last build: rebuilding…" : "First start: building the app…");
  const build = spawnSync(process.execPath, [nextBin, "build"], { cwd: root, stdio: "inherit" });
  if (build.status !== 0) process.exit(build.status ?? 1);
}

const host = process.env.HOST ?? "127.0.0.1";
const port = process.env.PORT ?? "3000";
const server = spawn(process.execPath, [nextBin, "start", "-H", host, "-p", port], {
  cwd: root,
  stdio: "inherit",
  env: { ...process.env, HOST: host, PORT: port },
});
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => server.kill(signal));
server.on("exit", (code, signal) => process.exit(code ?? (signal ? 0 : 1)));
