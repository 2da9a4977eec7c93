// Writes the route files of app/ from the operations (lib/endpoints.ts): `npm run routes`. lib/endpoints.unit.test.ts
// fails when a route file differs from what this renders, or when one serves no operation and is not listed below.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { HttpMethod, Operation } from "../lib/http/operation";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** The route files that serve no operation, kept as they are written. */
export const OTHER_ROUTE_FILES: Record<string, string> = {
  "app/api/auth/[...nextauth]/route.ts": "the dashboard's sign-in (NextAuth's own handler)",
  "app/api/inngest/route.ts": "Inngest's own handler, for the background functions",
  "app/healthz/route.ts": "liveness: constant JSON, no database, no authentication",
  "app/readyz/route.ts": "readiness: lib/health.ts, no authentication",
  "app/metrics/route.ts": "Prometheus metrics, with their own access check",
  "app/v1/openapi.json/route.ts": "the OpenAPI document, built from the operations",
  "app/v1/[...path]/route.ts": "the API's 404 for paths no operation has",
  "app/iam/v1/[...path]/route.ts": "the identity API's 404 for paths no operation has",
};

const METHOD_ORDER: HttpMethod[] = ["GET", "POST", "PUT", "DELETE"];

/**
 * The directory under app/ of an operation's path: `{id}` becomes `[id]`, and a segment lives in a route group
 * (`(dashboard)`) when the group already holds it, as Next.js ignores the group in the URL.
 */
export function routeDirectory(opPath: string, appRoot = path.join(root, "app")): string {
  let dir = "app";
  for (const segment of opPath.split("/").filter(Boolean).map((s) => s.replace(/^\{(.+)\}$/, "[$1]"))) {
    const here = path.join(appRoot, path.relative("app", dir));
    const group = fs.existsSync(path.join(here, segment))
      ? undefined
      : fs.existsSync(here)
        ? fs.readdirSync(here).find((entry) => /^\(.+\)$/.test(entry) && fs.existsSync(path.join(here, entry, segment)))
        : undefined;
    dir = group ? `${dir}/${group}/${segment}` : `${dir}/${segment}`;
  }
  return dir;
}

/** Each operation's module (`@/lib/…`) and export name, found among lib's modules that define operations. */
async function exportsOf(ops: Operation[]): Promise<Map<Operation, { specifier: string; name: string }>> {
  const files = fs
    .readdirSync(path.join(root, "lib"), { recursive: true, encoding: "utf8" })
    .map((rel) => path.join(root, "lib", rel))
    .filter((full) => /(?<!\.test)\.ts$/.test(full) && fs.readFileSync(full, "utf8").includes("defineOperation("));
  const found = new Map<Operation, { specifier: string; name: string }>();
  for (const file of files.sort()) {
    const specifier = `@/${path.relative(root, file).replace(/\\/g, "/").replace(/\.ts$/, "")}`;
    for (const [name, value] of Object.entries(await import(pathToFileURL(file).href))) {
      if (!ops.includes(value as Operation)) continue;
      const already = found.get(value as Operation);
      if (already) throw new Error(`${(value as Operation).operationId} is exported twice (${already.specifier} ${already.name}, ${specifier} ${name}): export it once`);
      found.set(value as Operation, { specifier, name });
    }
  }
  const missing = ops.filter((op) => !found.has(op)).map((op) => op.operationId);
  if (missing.length) throw new Error(`not exported from a module of lib/ that calls defineOperation: ${missing.join(", ")}`);
  return found;
}

/** The operations of each route file, by file (relative to the repository's root), methods in a fixed order. */
export function routeTable(ops: Operation[]): Map<string, { path: string; ops: Operation[] }> {
  const byFile = new Map<string, { path: string; ops: Operation[] }>();
  for (const op of ops) {
    const file = `${routeDirectory(op.path)}/route.ts`;
    const entry = byFile.get(file) ?? { path: op.path, ops: [] };
    if (entry.path !== op.path) throw new Error(`${op.path} and ${entry.path} are both served by ${file}`);
    if (entry.ops.some((o) => o.method === op.method)) throw new Error(`two operations for ${op.method} ${op.path}`);
    entry.ops.push(op);
    byFile.set(file, entry);
  }
  for (const entry of byFile.values()) entry.ops.sort((a, b) => METHOD_ORDER.indexOf(a.method) - METHOD_ORDER.indexOf(b.method));
  return new Map([...byFile].sort(([a], [b]) => (a < b ? -1 : 1)));
}

/** Every generated route file's text, by file. */
export async function rendered(): Promise<Record<string, string>> {
  // Loaded here, not at the top: test/helpers/api.ts reads the route files on disk without loading every operation.
  const ops = (await import("../lib/endpoints")).endpoints;
  const names = await exportsOf(ops);
  const out: Record<string, string> = {};
  for (const [file, entry] of routeTable(ops)) {
    const imports = new Map<string, string[]>();
    for (const op of entry.ops) {
      const { specifier, name } = names.get(op)!;
      imports.set(specifier, [...(imports.get(specifier) ?? []), name]);
    }
    const lines = [
      'import { routes } from "@/lib/http/routes";',
      ...[...imports].sort(([a], [b]) => (a < b ? -1 : 1)).map(([specifier, list]) => `import { ${[...list].sort().join(", ")} } from "${specifier}";`),
    ];
    const args = entry.ops.map((op) => names.get(op)!.name).join(", ");
    out[file] = `${lines.join("\n")}\n\nexport const { GET, POST, PUT, PATCH, DELETE } = routes(${args});\n`;
  }
  return out;
}

/** The route files on disk, relative to the repository's root (test/helpers/api.ts routes the tests' requests to them). */
export function routeFilesOnDisk(): string[] {
  return fs
    .readdirSync(path.join(root, "app"), { recursive: true, encoding: "utf8" })
    .map((rel) => `app/${rel.split(path.sep).join("/")}`)
    .filter((file) => file.endsWith("/route.ts"))
    .sort();
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const files = await rendered();
  for (const [file, text] of Object.entries(files)) {
    const full = path.join(root, file);
    if (fs.existsSync(full) && fs.readFileSync(full, "utf8") === text) continue;
    fs.mkdirSync(path.dirname(full), { recursive: true });
    fs.writeFileSync(full, text);
    console.log(`wrote ${file}`);
  }
  for (const file of routeFilesOnDisk()) {
    if (!(file in files) && !(file in OTHER_ROUTE_FILES)) console.log(`${file} serves no operation: delete it, or list it in OTHER_ROUTE_FILES (scripts/routes.ts)`);
  }
}
