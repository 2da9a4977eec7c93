// Builds the Next.js app when there is no build yet or a source changed since the last one.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(import.meta.dirname, "..");
export const nextBin = path.join(root, "node_modules", "next", "dist", "bin", "next");
const SOURCES = ["app", "components", "lib", "inngest", "public", "instrumentation.ts", "next.config.mjs", "postcss.config.mjs", "package.json", "tsconfig.json"];

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

const seconds = (since) => `${Math.round((performance.now() - since) / 1000)} s`;

/** Builds when stale, printing one line per phase under `tag` (Next.js prints its own phases in between). */
export function buildIfStale(tag = "[build]") {
  const buildId = path.join(root, ".next", "BUILD_ID");
  const builtAt = fs.existsSync(buildId) ? fs.statSync(buildId).mtimeMs : 0;
  const changedAt = Math.max(...SOURCES.map((s) => newestMtime(path.join(root, s))));
  if (builtAt >= changedAt) return;
  console.log(`${tag} ${builtAt ? "sources changed since the last build: rebuilding the app…" : "building the app (first run only)…"}`);
  const started = performance.now();
  const build = spawnSync(process.execPath, [nextBin, "build"], { cwd: root, stdio: "inherit" });
  if (build.status !== 0) {
    console.error(`${tag} build failed after ${seconds(started)}`);
    process.exit(build.status ?? 1);
  }
  console.log(`${tag} build done in ${seconds(started)}`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) buildIfStale();
