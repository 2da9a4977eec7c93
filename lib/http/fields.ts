import { getAddress, isAddress } from "viem";
import { z } from "zod";
import { isSupportedChain, unsupportedChain } from "@/lib/chain/registry";

/** JSON Schema to show in the OpenAPI document for schemas whose input side is a coercion. */
export const documentedAs = new WeakMap<z.ZodType, Record<string, unknown>>();

function documented<T extends z.ZodType>(schema: T, jsonSchema: Record<string, unknown>): T {
  documentedAs.set(schema, jsonSchema);
  return schema;
}

// Form bodies and query strings carry only strings: these accept both the JSON type and its text.
export const booleanField = () =>
  documented(
    z.preprocess((v) => (v === "true" || v === "1" ? true : v === "false" || v === "0" ? false : v), z.boolean()),
    { type: "boolean" },
  );

export const integerField = (bounds: { min?: number; max?: number } = {}) => {
  let inner = z.number().int().safe();
  if (bounds.min !== undefined) inner = inner.min(bounds.min);
  if (bounds.max !== undefined) inner = inner.max(bounds.max);
  return documented(
    z.preprocess((v) => (typeof v === "string" && /^-?\d+$/.test(v.trim()) ? Number(v) : v), inner),
    { type: "integer", ...(bounds.min !== undefined && { minimum: bounds.min }), ...(bounds.max !== undefined && { maximum: bounds.max }) },
  );
};

/** An array that may also come as one comma-separated string (how the official SDK sends array query parameters). */
export const listField = <T extends z.ZodType>(item: T) =>
  documented(
    z.preprocess((v) => (typeof v === "string" ? (v === "" ? [] : v.split(",")) : v), z.array(item)),
    { type: "array", items: z.toJSONSchema(item, { io: "input", unrepresentable: "any" }) },
  );

/** A `chainId` parameter: an integer naming a configured chain. */
export const chainIdField = () =>
  integerField({ min: 1 }).superRefine((chainId, ctx) => {
    if (!isSupportedChain(chainId)) ctx.addIssue({ code: "custom", message: unsupportedChain(chainId) });
  });

export const expandField = <T extends readonly [string, ...string[]]>(names: T) => listField(z.enum(names)).optional();

export const addressField = () =>
  documented(
    z
      .string()
      .refine((v) => isAddress(v, { strict: false }), "Expected a 0x-prefixed 20-byte hex address")
      .transform((v) => getAddress(v)),
    { type: "string", pattern: "^0x[0-9a-fA-F]{40}$" },
  );

/** Free text shown back to developers. */
export const textField = (max = 500) => z.string().trim().max(max);

export const listInput = {
  limit: integerField({ min: 1, max: 100 }).optional(),
  skip: integerField({ min: 0 }).optional(),
  order: z.enum(["asc", "desc"]).optional(),
};

const METADATA_MAX_KEYS = 50;
const metadataValue = z.union([z.string().max(500), z.number(), z.boolean()]);

/**
 * Metadata input: an object whose empty-string values unset those keys, or an empty value
 * (`metadata=` in a form, `""` or `null` in JSON) that unsets every key; `null` after parsing.
 */
export const metadataField = () =>
  documented(
    z.preprocess(
      (v) => (v === "" ? null : v),
      z
        .record(z.string().min(1).max(40), metadataValue)
        .refine((m) => Object.keys(m).length <= METADATA_MAX_KEYS, `At most ${METADATA_MAX_KEYS} metadata keys`)
        .nullable(),
    ),
    {
      oneOf: [
        { type: "object", additionalProperties: { type: ["string", "number", "boolean"] }, maxProperties: METADATA_MAX_KEYS },
        { type: "string", const: "" },
        { type: "null" },
      ],
      description: "Key-value pairs. An empty value unsets a key; an empty metadata unsets all keys.",
    },
  );

export type Metadata = Record<string, string | number | boolean>;

export function applyMetadata(current: Metadata | null, input: Metadata | null | undefined): Metadata | null {
  if (input === undefined) return current;
  if (input === null) return null;
  const next: Metadata = { ...(current ?? {}) };
  for (const [key, value] of Object.entries(input)) {
    if (value === "") delete next[key];
    else next[key] = value;
  }
  return Object.keys(next).length > 0 ? next : null;
}
