import { badRequest } from "@/lib/errors";

const FORBIDDEN_SEGMENTS = new Set(["__proto__", "prototype", "constructor"]);
const MAX_DEPTH = 10;
const MAX_INDEX = 1000;
/** Parameters in one query string or form body: enough for any real request, few enough to parse at once. */
export const MAX_PARAMS = 1000;

export const tooManyParams = () =>
  badRequest(`Too many parameters: at most ${MAX_PARAMS.toLocaleString("en-US")} are accepted in one request.`);

/** How many parameters `a=1&b=2` holds, by scanning for `&` (empty pieces, as URLSearchParams skips them, do not count). */
export function countParams(text: string): number {
  let count = 0;
  let start = 0;
  for (;;) {
    const end = text.indexOf("&", start);
    const stop = end === -1 ? text.length : end;
    if (stop > start) count++;
    if (end === -1) return count;
    start = end + 1;
  }
}

type Node = { [key: string]: Node | string };

function segmentsOf(key: string): string[] {
  const open = key.indexOf("[");
  if (open <= 0) return [key];
  const segments = [key.slice(0, open)];
  const rest = key.slice(open);
  const re = /\[([^[\]]*)\]/g;
  let consumed = 0;
  for (let m = re.exec(rest); m; m = re.exec(rest)) {
    if (m.index !== consumed) break;
    segments.push(m[1] ?? "");
    consumed = re.lastIndex;
  }
  if (consumed !== rest.length) throw badRequest(`Malformed parameter name: '${key}'`);
  return segments;
}

const isIndex = (s: string) => /^(0|[1-9]\d*)$/.test(s);

/** Where `a[]` (or a repeated plain key) appends: one past the highest index given, so nothing is overwritten. */
const nextIndex = (node: Node) => String(Object.keys(node).reduce((next, k) => (isIndex(k) ? Math.max(next, Number(k) + 1) : next), 0));

/**
 * Objects whose keys are all array indices (from `a[0]`, `a[]`) become arrays, in index order;
 * the top level stays an object whatever its keys, as a body must be one.
 */
function finish(node: Node | string, topLevel = false): unknown {
  if (typeof node === "string") return node;
  const keys = Object.keys(node);
  if (!topLevel && keys.length > 0 && keys.every(isIndex)) {
    return keys
      .map(Number)
      .sort((a, b) => a - b)
      .map((i) => finish(node[String(i)]!));
  }
  const out: Record<string, unknown> = {};
  for (const k of keys) out[k] = finish(node[k]!);
  return out;
}

/**
 * Turns form or query parameters in bracket notation (`domain[name]`, `interactions[0][functionArgs][0]`,
 * `expand[]=accounts`, a repeated `expand=a&expand=b`) into the same nested object a JSON body gives.
 */
export function parseBracketParams(params: URLSearchParams, budget = MAX_PARAMS): Record<string, unknown> {
  if (params.size > budget) throw tooManyParams();
  const root: Node = Object.create(null);
  for (const [key, value] of params) {
    const segments = segmentsOf(key);
    if (segments.length > MAX_DEPTH) throw badRequest(`Parameter '${key}' is nested too deeply`);
    let node: Node = root;
    for (let i = 0; i < segments.length; i++) {
      let segment = segments[i]!;
      if (FORBIDDEN_SEGMENTS.has(segment)) throw badRequest(`Invalid parameter name: '${key}'`);
      if (segment === "") segment = nextIndex(node);
      if (isIndex(segment) && Number(segment) > MAX_INDEX) throw badRequest(`Array index too large in '${key}'`);
      const last = i === segments.length - 1;
      const existing = node[segment];
      if (last) {
        if (existing === undefined) node[segment] = value;
        else if (typeof existing === "string" && segments.length === 1) {
          // a repeated plain key (`expand=a&expand=b`) is a list
          const list: Node = Object.create(null);
          list["0"] = existing;
          list["1"] = value;
          node[segment] = list;
        } else if (typeof existing !== "string" && segments.length === 1 && Object.keys(existing).every(isIndex)) {
          const index = nextIndex(existing);
          if (Number(index) > MAX_INDEX) throw badRequest(`Parameter '${key}' is repeated too many times`);
          existing[index] = value;
        } else throw badRequest(`Parameter '${key}' is given more than once`);
      } else {
        if (typeof existing === "string") throw badRequest(`Parameter '${key}' conflicts with a plain value`);
        node = existing ?? (node[segment] = Object.create(null) as Node);
      }
    }
  }
  return finish(root, true) as Record<string, unknown>;
}
