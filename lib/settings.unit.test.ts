import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { rendered } from "@/scripts/config-docs";
import { FOREIGN_VARIABLES, SETTINGS, settingOf } from "./settings";

const root = path.resolve(import.meta.dirname, "..");

/** The module whose readers alone touch process.env. */
const READERS = "lib/config.ts";

/**
 * Files that still read process.env themselves, and why. The names they read must be declared all the same (and
 * their `readBy` must name the file).
 */
const DIRECT_READERS: Record<string, string> = {
  "scripts/start.mjs": "a plain Node script that starts `next start` before any TypeScript loads",
  "scripts/node-options.mjs": "shared by scripts/start.mjs, a plain Node script",
  "lib/chain/clients.ts": "RPC_BATCH; being reworked with lib/chain/rpc-fetch.ts",
};

const SOURCE_DIRS = ["lib", "inngest", "app", "cli", "scripts", "components"];
const isSource = (file: string) => /\.(ts|tsx|mjs|js)$/.test(file) && !/\.test\.tsx?$/.test(file) && !file.endsWith(".d.ts") && !file.endsWith(".d.mts");

function sources(): string[] {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const rel = path.posix.join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== "node_modules" && entry.name !== "migrations") walk(rel);
      } else if (isSource(rel)) files.push(rel);
    }
  };
  for (const dir of SOURCE_DIRS) if (fs.existsSync(path.join(root, dir))) walk(dir);
  return files;
}

const foreign = (name: string) => FOREIGN_VARIABLES.some((pattern) => pattern.test(name));

/** A name as written in code: a template's `${…}` parts read as a chain id. */
const concrete = (written: string) => written.replace(/\$\{[^}]*\}/g, "1");

/** The variables a source file names where it reads them: through the readers, process.env, or a SettingsEnv `env`. */
function namesRead(text: string): string[] {
  const names: string[] = [];
  const patterns = [
    /\b(?:envNumber|envFlag|envText|envRaw|envDefault)\(\s*["'`]([^"'`]+)["'`]/g,
    /\bprocess\.env\.([A-Za-z_][A-Za-z0-9_]*)/g,
    /\bprocess\.env\[\s*["'`]([^"'`]+)["'`]\s*\]/g,
    /(?<![.\w])env\.([A-Z][A-Z0-9_]+)\b/g,
  ];
  for (const pattern of patterns) for (const match of text.matchAll(pattern)) names.push(concrete(match[1]!));
  return names;
}

describe("the configuration reference", () => {
  it("docs/configuration.md and .env.example are what `npm run docs:config` writes from lib/settings.ts", () => {
    for (const [file, text] of Object.entries(rendered())) {
      const current = fs.existsSync(path.join(root, file)) ? fs.readFileSync(path.join(root, file), "utf8") : "";
      expect(current === text, `${file} is stale: run npm run docs:config`).toBe(true);
    }
  });

  it("declares each setting once, with a description, a default and the files that read it", () => {
    const names = SETTINGS.map((s) => s.name);
    expect(names.filter((name, i) => names.indexOf(name) !== i)).toEqual([]);
    for (const setting of SETTINGS) {
      expect(setting.name, setting.name).toMatch(/^[A-Z][A-Z0-9_]*(<id>[A-Z0-9_]*)?$/);
      expect(setting.description.length, setting.name).toBeGreaterThan(10);
      expect(setting.default.length, setting.name).toBeGreaterThan(0);
      expect(setting.readBy.length, setting.name).toBeGreaterThan(0);
    }
  });

  it("names in each setting's readBy only files that read it", () => {
    for (const setting of SETTINGS) {
      // A family is named in code by its fixed part after the chain id (`CHAIN_${id}_RPC_URL`) or by a pattern.
      const needle = setting.name.includes("<id>") ? setting.name.split("<id>")[1]! : setting.name;
      for (const file of setting.readBy) {
        expect(fs.existsSync(path.join(root, file)), `${setting.name}: ${file} does not exist`).toBe(true);
        const text = fs.readFileSync(path.join(root, file), "utf8");
        // A family may also be matched by a regular expression (`CHAIN_\d+_(RPC|BUNDLER)_URL`): its first word then.
        const named = text.includes(needle) || (setting.name.includes("<id>") && text.includes(needle.split("_")[1]!));
        expect(named, `${setting.name}: ${file} does not read it`).toBe(true);
      }
    }
  });

  it("the code reads only declared settings, each from a file its declaration names", () => {
    const undeclared: string[] = [];
    const unlisted: string[] = [];
    for (const file of sources()) {
      if (file === "lib/settings.ts") continue;
      for (const name of namesRead(fs.readFileSync(path.join(root, file), "utf8"))) {
        if (foreign(name)) continue;
        const setting = settingOf(name);
        if (!setting) undeclared.push(`${file}: ${name}`);
        else if (!setting.readBy.includes(file)) unlisted.push(`${file}: ${name} (declared as read by ${setting.readBy.join(", ")})`);
      }
    }
    expect(undeclared, "declare these in lib/settings.ts").toEqual([]);
    expect(unlisted, "name these files in the settings' readBy").toEqual([]);
  });

  it("documents the defaults the code applies, where the code names one literally", () => {
    const checked: string[] = [];
    const wrong: string[] = [];
    for (const file of sources()) {
      const text = fs.readFileSync(path.join(root, file), "utf8");
      const reads = [
        ...[...text.matchAll(/\benvNumber\(\s*"([A-Z0-9_]+)",\s*([0-9][0-9_]*)\s*[,)]/g)].map((m) => [m[1]!, m[2]!.replace(/_/g, "")]),
        ...[...text.matchAll(/\benv(?:Text|Raw)\(\s*"([A-Z0-9_]+)"\s*\)(?:\?\.[a-zA-Z]+\(\))?\s*\?\?\s*"([^"]*)"/g)].map((m) => [m[1]!, m[2]!]),
      ];
      for (const [name, value] of reads) {
        const declared = /^`([^`]*)`/.exec(settingOf(name!)?.default ?? "")?.[1];
        if (declared === undefined) continue; // a default that depends (local chains, another setting): described in words
        checked.push(name!);
        if (declared !== value) wrong.push(`${file}: ${name} defaults to ${value}, declared ${declared}`);
      }
    }
    expect(wrong).toEqual([]);
    expect(checked).toEqual(expect.arrayContaining(["DATABASE_POOL_SIZE", "RATE_LIMIT_PER_SECOND", "LOG_LEVEL", "PLAYER_TOKEN_ISSUER"]));
  });

  it("only lib/config.ts reads process.env, but for Node's, Next.js's and the test runner's own variables", () => {
    const direct: string[] = [];
    for (const file of sources()) {
      if (file === READERS || file in DIRECT_READERS) continue;
      const text = fs.readFileSync(path.join(root, file), "utf8");
      for (const match of text.matchAll(/\bprocess\.env\b(?:\.([A-Za-z_][A-Za-z0-9_]*))?/g)) {
        if (match[1] && foreign(match[1])) continue;
        direct.push(`${file}: ${match[0]}`);
      }
    }
    expect(direct, "read settings through lib/config.ts (envNumber, envFlag, envText, envRaw, environment)").toEqual([]);
  });

  it("finds the reads it checks (the scan is not blind)", () => {
    const files = sources();
    expect(files).toContain("lib/http/rate-limit.ts");
    expect(namesRead('envNumber("RATE_LIMIT_PER_SECOND", 1); process.env.LOG_FILE; env.KEY_ENCRYPTION_KEY; envText(`CHAIN_${id}_NAME`)').sort()).toEqual([
      "CHAIN_1_NAME",
      "KEY_ENCRYPTION_KEY",
      "LOG_FILE",
      "RATE_LIMIT_PER_SECOND",
    ]);
    expect(settingOf("CHAIN_8453_RPC_URL")?.name).toBe("CHAIN_<id>_RPC_URL");
    expect(settingOf("UNDECLARED_THING")).toBeUndefined();
  });
});
