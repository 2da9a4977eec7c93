import { z } from "zod";
import { addressField, booleanField, chainIdField, integerField, listInput, textField } from "@/lib/http/fields";
import { abiField } from "./abi";

export const createContractInput = z.strictObject({
  name: textField(255).min(1),
  chainId: chainIdField(),
  address: addressField(),
  abi: abiField().optional(),
  publicVerification: booleanField().optional(),
});

export const updateContractInput = z.strictObject({
  name: textField(255).min(1).optional(),
  chainId: chainIdField().optional(),
  address: addressField().optional(),
  abi: abiField().optional(),
  publicVerification: booleanField().optional(),
  deleted: booleanField().optional(),
});

export const listContractsInput = z.strictObject({
  ...listInput,
  name: z.string().optional(),
  deleted: booleanField().optional(),
  chainId: integerField().optional(),
  address: z.string().optional(),
});

export const contractResponse = z.object({
  id: z.string(),
  object: z.literal("contract"),
  createdAt: z.number().int(),
  name: z.string().nullable(),
  chainId: z.number().int(),
  address: z.string(),
  deleted: z.boolean(),
  publicVerification: z.boolean(),
  abi: z.array(z.record(z.string(), z.unknown())),
});

export type ContractResponse = z.infer<typeof contractResponse>;
export type CreateContractInput = z.output<typeof createContractInput>;
export type UpdateContractInput = z.output<typeof updateContractInput>;
export type ListContractsInput = z.output<typeof listContractsInput>;
