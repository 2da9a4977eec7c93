// The top self-time frames of the CPU profiles (node --cpu-prof) in a directory, summed by function and file.
import fs from "node:fs";
import path from "node:path";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** "node_modules/next/dist/…/x.js" rather than the absolute file URL. */
function shortUrl(url: string): string {
  const file = url.replace(/^file:\/\//, "");
  const at = file.lastIndexOf("node_modules/");
  if (at >= 0) return file.slice(at + "node_modules/".length);
  return path.relative(process.cwd(), file) || file;
}

export function printProfile(dir: string, top = 25) {
  for (const name of fs.readdirSync(dir).filter((f) => f.endsWith(".cpuprofile"))) {
    const profile = JSON.parse(fs.readFileSync(path.join(dir, name), "utf8")) as Profile;
    const byId = new Map(profile.nodes.map((n) => [n.id, n]));
    const self = new Map<string, number>();
    let total = 0;
    profile.samples.forEach((id, i) => {
      const delta = profile.timeDeltas[i] ?? 0;
      total += delta;
      const frame = byId.get(id)!.callFrame;
      const key = `${frame.functionName || "(anonymous)"}  ${shortUrl(frame.url)}${frame.url ? `:${frame.lineNumber + 1}` : ""}`;
      self.set(key, (self.get(key) ?? 0) + delta);
    });
    // Self time by package (node_modules/<package>), our bundled code (.next chunks) or node itself.
    const byPackage = new Map<string, number>();
    for (const [key, us] of self) {
      const file = key.split("  ")[1] ?? "";
      const pkg = /^((?:@[^/]+\/)?[^/]+)\//.exec(file)?.[1];
      const group = file.startsWith(".next/") ? "(bundled: app, lib, next)" : file.startsWith("node:") ? "(node internals)" : file === "" ? key.split("  ")[0]! : (pkg ?? file);
      byPackage.set(group, (byPackage.get(group) ?? 0) + us);
    }
    console.log(`\nCPU profile ${name}: ${(total / 1e6).toFixed(1)} s sampled; self time by package:`);
    for (const [group, us] of [...byPackage].sort((a, b) => b[1] - a[1]).slice(0, 15)) {
      console.log(`${((100 * us) / total).toFixed(1).padStart(6)} %  ${(us / 1e6).toFixed(2).padStart(7)} s  ${group}`);
    }
    console.log(`top self time by function:`);
    for (const [key, us] of [...self].sort((a, b) => b[1] - a[1]).slice(0, top)) {
      console.log(`${((100 * us) / total).toFixed(1).padStart(6)} %  ${(us / 1e6).toFixed(2).padStart(7)} s  ${key}`);
    }
  }
}

// `tsx bench/profile.ts <dir>`: the summary of profiles written earlier.
if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) printProfile(process.argv[2] ?? ".");
