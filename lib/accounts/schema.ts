import { maxUint256 } from "viem";
import { z } from "zod";
import { addressField, booleanField, chainIdField, expandField, integerField, listInput } from "@/lib/http/fields";
import { idRef } from "@/lib/http/resource";

/**
 * An ERC-721 token id: any uint256, as a JSON number (up to 2^53 - 1, exact) or a decimal string; kept as its
 * canonical decimal text.
 */
const tokenIdField = z.preprocess(
  (v) => (typeof v === "number" && Number.isSafeInteger(v) && v >= 0 ? String(v) : typeof v === "string" ? v.trim() : v),
  z
    .string({ error: "Expected a non-negative integer token id (a number, or a decimal string for large ids)" })
    .regex(/^\d{1,78}$/, "Expected a non-negative integer token id (a number, or a decimal string for large ids)")
    // Zod runs refinements after a failed regex too: only digits reach BigInt.
    .refine((v) => !/^\d{1,78}$/.test(v) || BigInt(v) <= maxUint256, "Token id exceeds the largest uint256 (2^256 - 1)")
    .transform((v) => BigInt(v).toString()),
);

export const accountExpandable = ["transactionIntents", "player"] as const;
const expand = expandField(accountExpandable);

export const createAccountInput = z.strictObject({
  chainId: chainIdField(),
  player: z.string().startsWith("pla_", "Expected a player id (pla_...)").optional(),
  externalOwnerAddress: addressField().optional(),
  accountType: z.string().max(64).optional(),
  defaultGuardian: booleanField().optional(),
  /** ERC6551V1: the ERC-721 contract (address or con_ id) and token whose holder controls the account. */
  tokenContract: z.string().max(64).optional(),
  tokenId: tokenIdField.optional(),
  expand,
});

export const listAccountsInput = z.strictObject({
  ...listInput,
  player: z.string({ error: "player is required: the id (pla_...) whose accounts to list" }).startsWith("pla_", "Expected a player id (pla_...)"),
  expand,
});

export const getAccountInput = z.strictObject({ expand });

const typedDataField = z.strictObject({ name: z.string().min(1).max(100), type: z.string().min(1).max(100) });

export const signPayloadInput = z.strictObject({
  domain: z.strictObject({
    name: z.string().max(200).optional(),
    version: z.string().max(50).optional(),
    chainId: integerField({ min: 1 }).optional(),
    verifyingContract: addressField().optional(),
    salt: z.string().regex(/^0x[0-9a-fA-F]{64}$/, "Expected a 0x-prefixed 32-byte hex salt").optional(),
  }),
  types: z.record(z.string().min(1).max(100), z.array(typedDataField).max(100)),
  primaryType: z.string().min(1).max(100),
  value: z.record(z.string(), z.unknown()),
  hash: z.string().regex(/^0x[0-9a-fA-F]{64}$/, "Expected the 0x-prefixed 32-byte EIP-712 hash").optional(),
});

export const accountResponse = z.object({
  id: z.string(),
  object: z.literal("account"),
  createdAt: z.number().int(),
  address: z.string(),
  ownerAddress: z.string(),
  pendingOwnerAddress: z.string().optional(),
  deployed: z.boolean(),
  custodial: z.boolean(),
  embeddedSigner: z.boolean(),
  chainId: z.number().int(),
  accountType: z.string(),
  /** ERC6551V1 accounts: the ERC-721 token whose holder controls the account (tokenId in decimal). */
  tokenContract: z.string().optional(),
  tokenId: z.string().optional(),
  /** Delegated_v08 accounts: whom the EOA delegates to (EIP-7702), as last read from the chain. */
  delegation: z
    .object({
      status: z.enum(["none", "ours", "foreign"]),
      address: z.string().nullable(),
      implementation: z.string(),
    })
    .describe(
      "Delegated_v08 accounts only. none: a plain EOA so far (its first intent delegates it); ours: delegating to `implementation`, this service's DelegatedAccountV8; foreign: delegating to `address`, changed outside this service, which then refuses its intents rather than re-delegate it.",
    )
    .optional(),
  player: idRef.loose(),
  transactionIntents: z.array(idRef.loose()),
});

export const signatureResponse = z.object({
  object: z.literal("signature"),
  account: z.string(),
  address: z.string(),
  hash: z.string(),
  signature: z.string(),
});

export type AccountResponse = z.infer<typeof accountResponse>;
export type CreateAccountInput = z.output<typeof createAccountInput>;
export type ListAccountsInput = z.output<typeof listAccountsInput>;
export type SignPayloadInput = z.output<typeof signPayloadInput>;
export type AccountExpand = (typeof accountExpandable)[number][] | undefined;
