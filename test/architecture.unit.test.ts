import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { ESLint } from "eslint";
import { afterAll, describe, expect, it } from "vitest";
import { domainOf, importGraph, runtimeImports } from "@/eslint/architecture.mjs";

/** The architecture lint rules (eslint/architecture.mjs) against a small project of their own, on disk. */
const root = fs.mkdtempSync(path.join(os.tmpdir(), "architecture-"));
const files: Record<string, string> = {
  // A file cycle inside one domain, through a relative and an "@/" import.
  "lib/a/one.ts": `import { two } from "./two";\nexport const one = () => two();`,
  "lib/a/two.ts": `import { one } from "@/lib/a/one";\nexport const two = () => one();`,
  // Domains b and c import each other (no file cycle: different files).
  "lib/b/uses-c.ts": `import { c } from "@/lib/c/plain";\nexport const b = () => c;`,
  "lib/b/plain.ts": `export const bee = 1;`,
  "lib/c/plain.ts": `export const c = 1;`,
  "lib/c/uses-b.ts": `import { bee } from "../b/plain";\nexport const cb = bee;`,
  // Domains f -> g -> h -> f: a cycle of three, no pair, and no file cycle (h reaches another file of f).
  "lib/f/x.ts": `import { g } from "@/lib/g/x";\nexport const f = g;`,
  "lib/f/y.ts": `export const y = 1;`,
  "lib/g/x.ts": `import { h } from "@/lib/h/x";\nexport const g = h;`,
  "lib/h/x.ts": `export const h = 1;\nexport const back = () => import("@/lib/f/y");`,
  // Type-only imports back do not count: d -> e at run time, e -> d only for a type.
  "lib/d/index.ts": `import { e } from "@/lib/e/value";\nexport type D = { n: number };\nexport const d = e;`,
  "lib/e/value.ts": `import type { D } from "@/lib/d";\nimport { type D as Dee } from "../d";\nexport const e: D | Dee | 1 = 1;`,
};
for (const [file, text] of Object.entries(files)) {
  fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
  fs.writeFileSync(path.join(root, file), text);
}
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

describe("the import graph", () => {
  it("counts run-time imports only", () => {
    expect(runtimeImports("x.ts", `import type { A } from "a";\nimport { type B } from "b";\nimport { type C, c } from "c";\nexport { d } from "d";\nexport type { E } from "e";\nconst f = () => import("f");`)).toEqual(["c", "d", "f"]);
    expect(domainOf("lib/intents/service.ts")).toBe("lib/intents");
    expect(domainOf("lib/config.ts")).toBe("lib/config");
    expect(domainOf("inngest/functions/relay.ts")).toBe("inngest");
    expect(domainOf("app/v1/route.ts")).toBeNull();
  });

  it("finds file cycles and cycles of domains", () => {
    const graph = importGraph(root);
    expect(graph.cycleOf.get("lib/a/one.ts")).toEqual(["lib/a/one.ts", "lib/a/two.ts"]);
    expect(graph.cycleOf.has("lib/b/uses-c.ts")).toBe(false);
    expect(graph.domainEdges.has("lib/b -> lib/c") && graph.domainEdges.has("lib/c -> lib/b")).toBe(true);
    expect(graph.domainEdges.has("lib/d -> lib/e")).toBe(true);
    expect(graph.domainEdges.has("lib/e -> lib/d")).toBe(false);
    expect(graph.domainCycleOf.get("lib/b")).toEqual(["lib/b", "lib/c"]);
    expect(graph.domainCycleOf.get("lib/g")).toEqual(["lib/f", "lib/g", "lib/h"]);
    expect(graph.domainCycleOf.has("lib/d")).toBe(false);
    expect(graph.domainCycleOf.has("lib/a")).toBe(false);
  });

  it("is what the lint rules report, on the importing lines", async () => {
    const { default: architecture } = await import("@/eslint/architecture.mjs");
    const { default: tsParser } = await import("@typescript-eslint/parser");
    const eslint = new ESLint({
      cwd: root,
      overrideConfigFile: true,
      overrideConfig: [{ files: ["**/*.ts"], languageOptions: { parser: tsParser }, plugins: { architecture }, rules: { "architecture/no-cycle": "error", "architecture/no-domain-cycle": "error" } }],
    });
    const results = await eslint.lintFiles(["lib/**/*.ts"]);
    const reported = Object.fromEntries(results.map((r) => [path.relative(root, r.filePath), r.messages.map((m) => `${m.line} ${m.ruleId}`)]));
    expect(reported).toEqual({
      "lib/a/one.ts": ["1 architecture/no-cycle"],
      "lib/a/two.ts": ["1 architecture/no-cycle"],
      "lib/b/plain.ts": [],
      "lib/b/uses-c.ts": ["1 architecture/no-domain-cycle"],
      "lib/c/plain.ts": [],
      "lib/c/uses-b.ts": ["1 architecture/no-domain-cycle"],
      "lib/d/index.ts": [],
      "lib/e/value.ts": [],
      "lib/f/x.ts": ["1 architecture/no-domain-cycle"],
      "lib/f/y.ts": [],
      "lib/g/x.ts": ["1 architecture/no-domain-cycle"],
      "lib/h/x.ts": ["2 architecture/no-domain-cycle"],
    });
  });
});
