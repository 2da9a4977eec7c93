// ESLint rules holding the code's shape (issue 33): no import cycle between files, nor between domains (the
// folders of lib/, and inngest/). Both need the whole import graph, which
// eslint-plugin-import's no-cycle rebuilds per file (98% of a lint run, minutes here); these build it once per
// process from TypeScript's parser. Type-only imports do not count: they vanish at run time.
import fs from "node:fs";
import path from "node:path";
import ts from "typescript";

/** The server's code the graph is made of (tests and scripts may reach anywhere). */
const ROOTS = ["lib", "inngest", "app", "components", "cli"];
const EXTENSIONS = [".ts", ".tsx", "/index.ts", "/index.tsx"];

function sourceFiles(root, dir) {
  if (!fs.existsSync(path.join(root, dir))) return [];
  return fs
    .readdirSync(path.join(root, dir), { recursive: true })
    .map((rel) => path.join(dir, rel))
    .filter((file) => /\.tsx?$/.test(file) && !/\.(test|spec)\.tsx?$/.test(file) && !file.endsWith(".d.ts"))
    .filter((file) => !file.split(path.sep).some((part) => part === "migrations" || part === "node_modules"));
}

/** The modules a source needs at run time: imports and re-exports not marked type-only, and import(). */
export function runtimeImports(fileName, text) {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false);
  const found = [];
  const visit = (node) => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause;
      const named = clause?.namedBindings;
      const typeOnly = clause?.isTypeOnly || (clause && !clause.name && named && ts.isNamedImports(named) && named.elements.length > 0 && named.elements.every((e) => e.isTypeOnly));
      if (!typeOnly) found.push(node.moduleSpecifier.text);
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      const named = node.exportClause;
      const typeOnly = node.isTypeOnly || (named && ts.isNamedExports(named) && named.elements.length > 0 && named.elements.every((e) => e.isTypeOnly));
      if (!typeOnly) found.push(node.moduleSpecifier.text);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword && node.arguments[0] && ts.isStringLiteral(node.arguments[0])) {
      found.push(node.arguments[0].text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** lib/<folder> (a file directly in lib/ is a domain of its own), inngest, or null elsewhere. */
export function domainOf(file) {
  const parts = file.split("/");
  if (parts[0] === "inngest") return "inngest";
  if (parts[0] !== "lib") return null;
  return parts.length > 2 ? `lib/${parts[1]}` : `lib/${parts[1].replace(/\.tsx?$/, "")}`;
}

/**
 * The import graph of `files` (paths relative to `root`, with "/"), resolving "@/" and relative specifiers to
 * those files: `edges` file → [{ to, specifier }], `cycleOf` file → the files of its cycle (strongly connected
 * component of more than one file), `domainEdges` "a -> b" → ["file: specifier", …], `domainCycleOf` domain → the
 * domains of its cycle.
 */
export function importGraph(root, files = ROOTS.flatMap((dir) => sourceFiles(root, dir)).map((f) => f.split(path.sep).join("/"))) {
  const known = new Set(files);
  const resolve = (from, specifier) => {
    let base;
    if (specifier.startsWith("@/")) base = specifier.slice(2);
    else if (specifier.startsWith(".")) base = path.posix.normalize(path.posix.join(path.posix.dirname(from), specifier));
    else return null;
    if (known.has(base)) return base;
    for (const ext of EXTENSIONS) if (known.has(base + ext)) return base + ext;
    return null;
  };
  const edges = new Map();
  const domainEdges = new Map();
  for (const file of files) {
    const out = [];
    for (const specifier of runtimeImports(file, fs.readFileSync(path.join(root, file), "utf8"))) {
      const to = resolve(file, specifier);
      if (!to) continue;
      out.push({ to, specifier });
      const [a, b] = [domainOf(file), domainOf(to)];
      if (a && b && a !== b) domainEdges.set(`${a} -> ${b}`, [...(domainEdges.get(`${a} -> ${b}`) ?? []), `${file}: ${specifier}`]);
    }
    edges.set(file, out);
  }
  const cycleOf = cyclesOf(files, (file) => edges.get(file).map((e) => e.to));
  const domains = [...new Set(files.map(domainOf).filter(Boolean))];
  const domainOut = new Map(domains.map((d) => [d, []]));
  for (const key of domainEdges.keys()) {
    const [a, b] = key.split(" -> ");
    domainOut.get(a).push(b);
  }
  const domainCycleOf = cyclesOf(domains, (domain) => domainOut.get(domain));
  return { edges, cycleOf, domainEdges, domainCycleOf };
}

/** Tarjan's strongly connected components, iteratively: each node of a component of more than one → its members. */
function cyclesOf(nodes, next) {
  const index = new Map(), low = new Map(), onStack = new Set(), stack = [], cycleOf = new Map();
  let counter = 0;
  const enter = (v) => { index.set(v, counter); low.set(v, counter++); stack.push(v); onStack.add(v); };
  for (const start of nodes) {
    if (index.has(start)) continue;
    const work = [[start, next(start), 0]];
    enter(start);
    while (work.length) {
      const frame = work[work.length - 1];
      const [v, out, i] = frame;
      if (i < out.length) {
        frame[2]++;
        const w = out[i];
        if (!index.has(w)) { enter(w); work.push([w, next(w), 0]); }
        else if (onStack.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
        continue;
      }
      work.pop();
      if (work.length) { const parent = work[work.length - 1][0]; low.set(parent, Math.min(low.get(parent), low.get(v))); }
      if (low.get(v) === index.get(v)) {
        const component = [];
        let w;
        do { w = stack.pop(); onStack.delete(w); component.push(w); } while (w !== v);
        if (component.length > 1) {
          component.sort();
          for (const node of component) cycleOf.set(node, component);
        }
      }
    }
  }
  return cycleOf;
}

/** One graph per lint process and project root. */
const graphs = new Map();
const graphFor = (context) => {
  const root = context.cwd ?? process.cwd();
  if (!graphs.has(root)) graphs.set(root, importGraph(root));
  return { root, graph: graphs.get(root) };
};
const relativeFile = (root, context) => path.relative(root, context.filename ?? context.getFilename()).split(path.sep).join("/");

const noCycle = {
  meta: { type: "problem", docs: { description: "No import cycle between the server's files (run-time imports)." }, schema: [] },
  create(context) {
    const { root, graph } = graphFor(context);
    const file = relativeFile(root, context);
    const cycle = graph.cycleOf.get(file);
    if (!cycle) return {};
    const inCycle = new Set(cycle);
    const culprits = new Set(graph.edges.get(file).filter((e) => inCycle.has(e.to)).map((e) => e.specifier));
    const report = (node) => {
      if (node.source && culprits.has(node.source.value))
        context.report({ node, message: `Import cycle through ${node.source.value}: ${cycle.join(", ")}. Move what both sides need below them.` });
    };
    return { ImportDeclaration: report, ExportNamedDeclaration: report, ExportAllDeclaration: report, ImportExpression: report };
  },
};

const noDomainCycle = {
  meta: { type: "problem", docs: { description: "No cycle between domains (lib/<folder>, inngest/) at run time." }, schema: [] },
  create(context) {
    const { root, graph } = graphFor(context);
    const file = relativeFile(root, context);
    const from = domainOf(file);
    const cycle = from && graph.domainCycleOf.get(from);
    if (!cycle || !graph.edges.has(file)) return {};
    const inCycle = new Set(cycle);
    const culprits = new Map();
    for (const { to, specifier } of graph.edges.get(file)) {
      const domain = domainOf(to);
      if (domain && domain !== from && inCycle.has(domain)) culprits.set(specifier, domain);
    }
    const report = (node) => {
      const domain = node.source && culprits.get(node.source.value);
      if (domain) context.report({ node, message: `Domains in a cycle (${cycle.join(", ")}): ${from} imports ${domain}, which leads back. Move the shared part below them.` });
    };
    return { ImportDeclaration: report, ExportNamedDeclaration: report, ExportAllDeclaration: report, ImportExpression: report };
  },
};

const plugin = { meta: { name: "architecture" }, rules: { "no-cycle": noCycle, "no-domain-cycle": noDomainCycle } };
export default plugin;
