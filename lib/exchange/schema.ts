import { getAddress, isAddress, maxUint256, type Address } from "viem";
import { z } from "zod";
import { addressField, booleanField, chainIdField, documentedAs, integerField } from "@/lib/http/fields";

/** A token: an address, or the word `native` for the chain's native coin. */
const tokenField = () => {
  const schema = z
    .string()
    .trim()
    .refine((v) => v.toLowerCase() === "native" || isAddress(v, { strict: false }), "Expected a token address or the word native")
    .transform((v): Address | "native" => (v.toLowerCase() === "native" ? "native" : getAddress(v)));
  documentedAs.set(schema, { type: "string", description: "a token address, or native", examples: ["native", "0x0000000000000000000000000000000000000000"] });
  return schema;
};

/** A decimal number that may come as text (form bodies). */
const decimalField = (min: number, max: number) => {
  const schema = z.preprocess((v) => (typeof v === "string" && /^\s*-?\d+(\.\d+)?\s*$/.test(v) ? Number(v) : v), z.number().min(min).max(max));
  documentedAs.set(schema, { type: "number", minimum: min, maximum: max });
  return schema;
};

/** Base units as a decimal string (a JSON integer is taken too), 1 to 2^256-1. */
const amountField = () => {
  const schema = z
    .preprocess((v) => (typeof v === "number" && Number.isSafeInteger(v) ? String(v) : v), z.string().trim().regex(/^\d{1,78}$/, "Expected an amount in base units: a decimal string of digits"))
    // A transform runs only on a valid string, so BigInt never sees bad text.
    .transform((v) => BigInt(v))
    .pipe(z.bigint().min(1n, "Expected an amount above 0").max(maxUint256, "Expected an amount below 2^256"));
  documentedAs.set(schema, { type: "string", pattern: "^\\d+$", description: "base units of the token" });
  return schema;
};

export const MAX_HOPS = 4;

export const swapInput = z.strictObject({
  chainId: chainIdField(),
  /** An account's address, or a pla_ (its account on chainId) or acc_ id of the project. */
  fromAddress: z
    .string()
    .trim()
    .refine((v) => /^(pla|acc)_[\w-]+$/.test(v) || isAddress(v, { strict: false }), "Expected an account address or a pla_/acc_ id"),
  tokenInAddress: tokenField(),
  tokenOutAddress: tokenField(),
  amount: amountField(),
  tradeType: z.enum(["EXACT_INPUT", "EXACT_OUTPUT"]),
  slippagePercent: decimalField(0, 50).optional(),
  maxHops: integerField({ min: 1, max: MAX_HOPS }).optional(),
  /** Unix seconds. */
  deadline: integerField({ min: 0 }).optional(),
  policy: z.string().startsWith("pol_", "Expected a policy id (pol_...)").optional(),
  optimistic: booleanField().optional(),
});

export type SwapInput = z.output<typeof swapInput>;

const token = z.object({ address: z.string(), chainId: z.number().int(), decimals: z.number().int(), name: z.string(), symbol: z.string() });
const amount = z.object({ token, value: z.string() });

export const quoteResponse = z.object({
  /** EXACT_INPUT: the output expected; EXACT_OUTPUT: the input expected in all (fee included). */
  amount,
  /** EXACT_INPUT: the least output the swap accepts; EXACT_OUTPUT: the most input it may take in all. */
  amountWithMaxSlippage: amount,
  slippage: z.number(),
  fees: z.array(z.object({ recipient: z.string(), basisPoints: z.number().int(), amount })),
  estimatedTXGasFee: z.string(),
  estimatedTXGasFeeUSD: z.string().nullable(),
  estimatedTXGasFeeToken: z.string().optional(),
});

export type QuoteResponse = z.output<typeof quoteResponse>;

/** At most 10%: a service fee above that is a mistake more often than a business. */
export const MAX_FEE_BASIS_POINTS = 1000;

export const exchangeSettingsInput = z.strictObject({
  feeBasisPoints: integerField({ min: 1, max: MAX_FEE_BASIS_POINTS }),
  feeRecipient: addressField(),
});

export const exchangeSettingsResponse = z.object({
  object: z.literal("exchangeSettings"),
  livemode: z.boolean(),
  feeBasisPoints: z.number().int(),
  feeRecipient: z.string().nullable(),
  createdAt: z.number().int().nullable(),
  updatedAt: z.number().int().nullable(),
});
