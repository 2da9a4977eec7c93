import { isAddress } from "viem";
import { z } from "zod";
import { addressField, booleanField, chainIdField, documentedAs, expandField, integerField, listField, listInput } from "@/lib/http/fields";
import { idRef } from "@/lib/http/resource";
import { intentResponse } from "@/lib/intents/schema";

/** The session-key fields of SmartAccount are uint48; so is the limit, where 2^48-1 stands for "no limit". */
export const UINT48_MAX = 2 ** 48 - 1;
/** SmartAccount.MAX_SESSION_KEY_TARGETS. */
export const MAX_WHITELIST = 10;
/** SmartAccount's SessionKey.maxFeePerOp is a uint128. */
export const UINT128_MAX = 2n ** 128n - 1n;

export const sessionExpandable = ["transactionIntents"] as const;
const expand = expandField(sessionExpandable);

const player = z.string({ error: "player is required: the player (pla_...) whose account holds the session key" }).startsWith("pla_", "Expected a player id (pla_...)");
const policy = z.string().startsWith("pol_", "Expected a policy id (pol_...)").optional();
/** The official SDK sends this as a header; the spec lists it as a query parameter: both are read. */
const behalfOf = z.string().max(200).optional();
/** Unix seconds, uint48 on chain. */
const seconds = () => integerField({ min: 0, max: UINT48_MAX });

/** Wei as a decimal string (or a safe integer), up to the uint128 the account stores. */
const wei = z.preprocess(
  (v) => (typeof v === "number" && Number.isSafeInteger(v) && v >= 0 ? String(v) : v),
  z
    .string()
    .regex(/^\d{1,39}$/, "Expected a non-negative amount in wei (decimal digits)")
    // Zod runs this even after the regex failed: only digits reach BigInt.
    .refine((v) => !/^\d+$/.test(v) || BigInt(v) <= UINT128_MAX, "Exceeds the largest uint128 (2^128 - 1)")
    .transform((v) => BigInt(v)),
);
documentedAs.set(wei, {
  type: "string",
  pattern: "^\\d{1,39}$",
  description: "Wei per operation, a decimal integer up to 2^128-1: the most one operation the key signs may make the account pay in fees when no paymaster pays. Omitted or 0: the key signs only sponsored operations.",
});

export const createSessionInput = z.strictObject({
  address: addressField(),
  chainId: chainIdField(),
  validAfter: seconds(),
  validUntil: seconds(),
  player,
  externalOwnerAddress: addressField().optional(),
  /** Maximum number of user operations the key may sign; omitted: no limit. */
  limit: integerField({ min: 1, max: UINT48_MAX }).optional(),
  /** Contracts (addresses or con_ ids) the key may call, at most MAX_WHITELIST (checked in the service); empty: any but the account. */
  whitelist: listField(
    z.string().refine((v) => isAddress(v, { strict: false }) || /^con_[\w-]{1,100}$/.test(v), "Expected an address or a registered contract id (con_...)"),
  ).optional(),
  /**
   * The most one operation the key signs may make the account pay in fees, in wei ((callGasLimit +
   * verificationGasLimit + preVerificationGas) × maxFeePerGas), enforced by the account's validation. Omitted or 0:
   * the key signs only operations a paymaster pays for (intents under a sponsoring policy), so it never spends the
   * account's own funds on gas.
   */
  maxFeePerOp: wei.optional(),
  policy,
  optimistic: booleanField().optional(),
  "X-Behalf-Of-Project": behalfOf,
  expand,
});

export const revokeSessionInput = z.strictObject({
  address: addressField(),
  chainId: chainIdField(),
  player,
  policy,
  optimistic: booleanField().optional(),
  "X-Behalf-Of-Project": behalfOf,
  expand,
});

export const sessionSignatureInput = z.strictObject({
  signature: z.string({ error: "signature is required" }).regex(/^0x[0-9a-fA-F]+$/, "Expected a 0x-prefixed hex signature").max(1000),
  optimistic: booleanField().optional(),
  expand,
});

export const listSessionsInput = z.strictObject({
  ...listInput,
  player,
  /** The dashboard's account page: one account's sessions. */
  account: z.string().startsWith("acc_", "Expected an account id (acc_...)").optional(),
  expand,
});

export const getSessionInput = z.strictObject({ expand });

export const sessionResponse = z.object({
  id: z.string(),
  object: z.literal("session"),
  createdAt: z.number().int(),
  updatedAt: z.number().int(),
  address: z.string(),
  chainId: z.number().int(),
  isActive: z.boolean(),
  validAfter: z.string(),
  validUntil: z.string(),
  whitelist: z.array(z.string()),
  limit: z.number().int().optional(),
  /** Wei per operation the key may make the account pay without a paymaster; "0": sponsored operations only. */
  maxFeePerOp: z.string().optional(),
  player: idRef,
  account: idRef,
  nextAction: intentResponse.shape.nextAction,
  transactionIntents: z.array(idRef.loose()),
});

export type SessionResponse = z.infer<typeof sessionResponse>;
export type CreateSessionInput = z.output<typeof createSessionInput>;
export type RevokeSessionInput = z.output<typeof revokeSessionInput>;
export type ListSessionsInput = z.output<typeof listSessionsInput>;
export type SessionExpand = (typeof sessionExpandable)[number][] | undefined;
