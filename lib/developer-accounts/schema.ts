import { z } from "zod";
import { addressField, booleanField, expandField, listInput, textField } from "@/lib/http/fields";
import { idRef } from "@/lib/http/resource";

const expand = expandField(["transactionIntents"] as const);

const hexSignature = z.string().regex(/^0x[0-9a-fA-F]{130}$/, "Expected a 65-byte ECDSA signature as 0x-prefixed hex");

/** Without address: a new custodial account. With address: an external wallet, proven by signature. */
export const createDeveloperAccountInput = z.strictObject({
  address: addressField().optional(),
  signature: hexSignature.optional(),
  name: textField(255).optional(),
  expand,
});

export const updateDeveloperAccountInput = z.strictObject({ name: textField(255), expand });

export const listDeveloperAccountsInput = z.strictObject({ ...listInput, expand, deleted: booleanField().optional() });

export const getDeveloperAccountInput = z.strictObject({ expand });

export const messageToSignInput = z.strictObject({ address: addressField() });

export const developerAccountResponse = z.object({
  id: z.string(),
  object: z.literal("developerAccount"),
  createdAt: z.number().int(),
  address: z.string(),
  name: z.string().nullable(),
  custodial: z.boolean(),
  deleted: z.boolean(),
  transactionIntents: z.array(idRef.loose()),
});

export const messageToSignResponse = z.object({ message: z.string(), address: z.string() });

export type DeveloperAccountResponse = z.infer<typeof developerAccountResponse>;
export type CreateDeveloperAccountInput = z.output<typeof createDeveloperAccountInput>;
export type ListDeveloperAccountsInput = z.output<typeof listDeveloperAccountsInput>;
