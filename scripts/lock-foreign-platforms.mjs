// The npm registry this project is built against serves platform binaries for Linux only, so
// `npm install` leaves the other platforms' optional packages (darwin, win32, …) out of
// package-lock.json and `npm ci` then refuses the lock as out of sync. This records each such
// package with its os/cpu, which is all `npm ci` needs to skip it on a machine it does not fit.
import fs from "node:fs";
import path from "node:path";

const lockPath = path.resolve(process.argv[2] ?? "package-lock.json");
const lock = JSON.parse(fs.readFileSync(lockPath, "utf8"));
const packages = lock.packages;

const OS = ["darwin", "win32", "linux", "android", "freebsd", "openharmony", "netbsd", "openbsd", "sunos", "aix", "wasi"];
const CPU = ["arm64", "x64", "ia32", "arm", "loong64", "ppc64", "riscv64", "s390x", "wasm32"];

function platformOf(name) {
  const parts = name.split("/").pop().split("-");
  const os = parts.find((p) => OS.includes(p));
  // Some packages (foundry's) name x64 "amd64".
  const cpu = parts.map((p) => (p === "amd64" ? "x64" : p)).find((p) => CPU.includes(p));
  return os && cpu ? { os, cpu } : null;
}

let added = 0;
for (const [where, entry] of Object.entries(packages)) {
  for (const [dep, range] of Object.entries(entry.optionalDependencies ?? {})) {
    const platform = platformOf(dep);
    if (!platform) continue;
    const base = where ? `${where}/node_modules/` : "node_modules/";
    if (packages[`${base}${dep}`] || packages[`node_modules/${dep}`]) continue;
    const version = range.replace(/^[\^~=]/, "");
    if (!/^\d+\.\d+\.\d+/.test(version)) continue;
    packages[`node_modules/${dep}`] = {
      version,
      cpu: [platform.cpu],
      ...(entry.dev ? { dev: true } : {}),
      optional: true,
      os: [platform.os],
    };
    added++;
  }
}
fs.writeFileSync(lockPath, JSON.stringify(lock, null, 2) + "\n");
console.log(`recorded ${added} optional packages of other platforms in ${path.basename(lockPath)}`);
