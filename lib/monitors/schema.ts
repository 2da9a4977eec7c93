import { z } from "zod";
import { TOPICS } from "@/lib/deliveries/topics";
import { booleanField, chainIdField, documentedAs, integerField, listField, listInput, textField } from "@/lib/http/fields";
import { idRef } from "@/lib/http/resource";

const MAX_UINT256 = 2n ** 256n - 1n;

/**
 * An amount in base units (wei): a non-negative decimal integer string up to 2^256-1, or a JSON
 * number that is a safe integer (larger numbers have already lost digits). Stored and shown as
 * its canonical decimal string.
 */
export const thresholdField = () => {
  const schema = z.union([z.string(), z.number()]).transform((value, ctx) => {
    const text = typeof value === "number" ? (Number.isSafeInteger(value) ? String(value) : null) : value.trim();
    if (text === null || !/^\d+$/.test(text)) {
      ctx.addIssue({ code: "custom", message: "Expected a non-negative integer in base units (wei), as a decimal string." });
      return z.NEVER;
    }
    const amount = BigInt(text);
    if (amount > MAX_UINT256) {
      ctx.addIssue({ code: "custom", message: "Expected at most 2^256-1." });
      return z.NEVER;
    }
    return amount.toString();
  });
  documentedAs.set(schema, { type: "string", pattern: "^\\d+$", description: "Base units (wei), a decimal integer up to 2^256-1." });
  return schema;
};

export const createEventInput = z.strictObject({
  name: textField(100).min(1),
  topic: z.enum(TOPICS, { error: `Expected one of: ${TOPICS.join(", ")}.` }),
  /** balance.contract */
  contract: z.string().max(100).optional(),
  functionName: z.string().min(1).max(200).optional(),
  functionArgs: listField(z.string().max(10_000)).optional(),
  /** balance.dev_account */
  developerAccount: z.string().max(100).optional(),
  /** balance.* (optional for balance.contract: the contract's chain; for balance.project, without it every chain of the mode) */
  chainId: chainIdField().optional(),
  threshold: thresholdField().optional(),
  numberOfBlocks: integerField({ min: 0, max: 10_000 }).optional(),
});

export const listEventsInput = z.strictObject({
  ...listInput,
  /** Exact name, as the other lists filter names. */
  name: z.string().optional(),
  deleted: booleanField().optional(),
});

/** One chain's reading of a balance.project monitor that watches every chain of its mode. */
export const monitorChainResponse = z.object({
  chainId: z.number().int(),
  value: z.string(),
  blockNumber: z.number().int(),
  checkedAt: z.number().int(),
  state: z.enum(["armed", "below", "fired"]),
  belowSinceBlock: z.number().int().nullable(),
  firedAt: z.number().int().nullable(),
});

export const monitorResponse = z.object({
  /** The last reading, in base units. */
  value: z.string().nullable(),
  blockNumber: z.number().int().nullable(),
  checkedAt: z.number().int().nullable(),
  state: z.enum(["armed", "below", "fired"]),
  belowSinceBlock: z.number().int().nullable(),
  firedAt: z.number().int().nullable(),
  error: z.string().nullable(),
  /**
   * A balance.project monitor without a chainId: its reading on each chain of its mode (each chain crosses on its
   * own). The fields above then sum them up: the lowest value and its chain's block, fired when any chain fired,
   * below when any is below.
   */
  chains: z.array(monitorChainResponse).optional(),
});

export const eventResponse = z.object({
  id: z.string(),
  object: z.literal("event"),
  createdAt: z.number().int(),
  name: z.string(),
  topic: z.enum(TOPICS),
  threshold: z.string().nullable(),
  contract: idRef.nullable(),
  functionName: z.string().nullable(),
  functionArgs: z.array(z.string()).nullable(),
  developerAccount: idRef.nullable(),
  chainId: z.number().int().nullable(),
  numberOfBlocks: z.number().int(),
  deleted: z.boolean(),
  /** The balance monitor's state; null for topics that monitor nothing. */
  monitor: monitorResponse.nullable(),
});

export type EventResponse = z.infer<typeof eventResponse>;
export type MonitorResponse = z.infer<typeof monitorResponse>;
export type CreateEventInput = z.output<typeof createEventInput>;
export type ListEventsInput = z.output<typeof listEventsInput>;
