import type { z } from "zod";
import { badRequest, type ErrorDetails } from "./errors";

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

/** PostgreSQL text and jsonb cannot hold U+0000: refuse it in any name or value, wherever it is. */
function findNul(node: unknown, path: PropertyKey[] = []): PropertyKey[] | null {
  if (typeof node === "string") return node.includes("\u0000") ? path : null;
  if (node === null || typeof node !== "object") return null;
  for (const [key, value] of Object.entries(node)) {
    if (key.includes("\u0000")) return [...path, key.replaceAll("\u0000", "\\u0000")];
    const found = findNul(value, [...path, Array.isArray(node) ? Number(key) : key]);
    if (found) return found;
  }
  return null;
}

export function validate<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const nulAt = findNul(input);
  if (nulAt) {
    const name = paramName(nulAt) || "body";
    throw badRequest(`Invalid parameter ${name}: NUL characters are not allowed.`, { [name]: { message: "NUL characters are not allowed." } });
  }
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const details: ErrorDetails = {};
  for (const issue of result.error.issues) {
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys) {
        const name = paramName([...issue.path, key]);
        details[name] = { value: valueAt(input, [...issue.path, key]), message: "Unknown parameter." };
      }
      continue;
    }
    const name = paramName(issue.path) || "body";
    if (details[name]) continue;
    const value = valueAt(input, issue.path);
    const message = value === undefined && issue.code === "invalid_type" ? "Missing required parameter." : issue.message;
    details[name] = { ...(value !== undefined && { value }), message };
  }
  const names = Object.keys(details);
  const summary = names.length === 1 ? `Invalid parameter ${names[0]}: ${details[names[0]!]!.message}` : `Invalid parameters: ${names.join(", ")}`;
  throw badRequest(summary, details);
}
