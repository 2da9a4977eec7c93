import type { z } from "zod";
import { badRequest, MAX_DETAILS, nameList, type ErrorDetails } from "@/lib/errors";

/** `interactions[0][contract]`: the same bracket notation clients send. */
function paramName(path: readonly PropertyKey[]): string {
  const [first, ...rest] = path.map(String);
  return (first ?? "") + rest.map((p) => `[${p}]`).join("");
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let node = input;
  for (const p of path) {
    if (node === null || typeof node !== "object") return undefined;
    node = (node as Record<PropertyKey, unknown>)[p];
  }
  return node;
}

/** Why PostgreSQL (text, jsonb) could not store `text`, if it could not: U+0000, or half a UTF-16 surrogate pair. */
export function unstorable(text: string): string | null {
  if (text.includes("\u0000")) return "NUL characters are not allowed.";
  if (!text.isWellFormed()) return "Unpaired UTF-16 surrogates (such as \\ud800) are not allowed.";
  return null;
}

type Trail = { key: PropertyKey; parent: Trail } | null;
const pathOf = (trail: Trail): PropertyKey[] => {
  const path: PropertyKey[] = [];
  for (let t = trail; t; t = t.parent) path.unshift(t.key);
  return path;
};

/** The first name or value, anywhere in the input, that cannot be stored; iterative, however deep the input. */
function findUnstorable(input: unknown): { path: PropertyKey[]; message: string } | null {
  // Paths as linked trails, made into arrays only for the one reported: a 50,000-key body costs no arrays.
  const stack: { node: unknown; trail: Trail }[] = [{ node: input, trail: null }];
  while (stack.length > 0) {
    const { node, trail } = stack.pop()!;
    if (typeof node === "string") {
      const message = unstorable(node);
      if (message) return { path: pathOf(trail), message };
      continue;
    }
    if (node === null || typeof node !== "object") continue;
    const isArray = Array.isArray(node);
    for (const key in node) {
      const message = unstorable(key);
      if (message) return { path: [...pathOf(trail), key.replaceAll("\u0000", "\\u0000").toWellFormed()], message };
      const value = (node as Record<string, unknown>)[key];
      if (value !== null && typeof value === "object") stack.push({ node: value, trail: { key: isArray ? Number(key) : key, parent: trail } });
      else if (typeof value === "string" && unstorable(value)) return { path: [...pathOf(trail), isArray ? Number(key) : key], message: unstorable(value)! };
    }
  }
  return null;
}

export function validate<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const bad = findUnstorable(input);
  if (bad) {
    const name = paramName(bad.path) || "body";
    throw badRequest(`Invalid parameter ${nameList([name])}: ${bad.message}`, { [name]: { message: bad.message } });
  }
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const details: ErrorDetails = {};
  // Every bad name counts for the message; names and details are made for the first few only.
  const names = new Set<string>();
  const seen = new Set<string>();
  let more = 0;
  for (const issue of result.error.issues) {
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys) {
        if (names.size >= MAX_DETAILS) {
          more++; // unknown keys are distinct from each other and from known ones: no need to dedupe
          continue;
        }
        const name = paramName([...issue.path, key]);
        names.add(name);
        details[name] = { value: valueAt(input, [...issue.path, key]), message: "Unknown parameter." };
      }
      continue;
    }
    const name = paramName(issue.path) || "body";
    if (names.has(name) || seen.has(name)) continue;
    if (names.size >= MAX_DETAILS) {
      seen.add(name); // (issues other than unknown keys are few: one per field at most)
      more++;
      continue;
    }
    names.add(name);
    const value = valueAt(input, issue.path);
    const message = value === undefined && issue.code === "invalid_type" ? "Missing required parameter." : issue.message;
    details[name] = { ...(value !== undefined && { value }), message };
  }
  const [first] = names;
  const summary =
    names.size === 1 && more === 0 ? `Invalid parameter ${nameList([first!])}: ${details[first!]!.message}` : `Invalid parameters: ${nameList([...names], more)}`;
  throw badRequest(summary, details);
}
