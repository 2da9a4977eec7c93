import { z } from "zod";
import { chainIdField } from "@/lib/chain/registry";
import { addressField, booleanField, expandField, integerField, listInput } from "@/lib/http/fields";
import { idRef } from "@/lib/http/resource";

export const accountExpandable = ["transactionIntents", "player"] as const;
const expand = expandField(accountExpandable);

export const createAccountInput = z.strictObject({
  chainId: chainIdField(),
  player: z.string().startsWith("pla_", "Expected a player id (pla_...)").optional(),
  externalOwnerAddress: addressField().optional(),
  accountType: z.string().max(64).optional(),
  defaultGuardian: booleanField().optional(),
  tokenContract: z.string().max(64).optional(),
  tokenId: integerField({ min: 0 }).optional(),
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
