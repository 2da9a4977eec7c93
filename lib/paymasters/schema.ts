import { z } from "zod";
import { addressField, booleanField, chainIdField, documentedAs, listInput, textField } from "@/lib/http/fields";

const MAX_CONTEXT_BYTES = 4_096;

/**
 * The ERC-7677 `context` sent with every pm_ call: a JSON object (form: `context[policy]=pol_…`), at most 4 KiB.
 * An empty value (`context=` or `null`) unsets it on update.
 */
const contextField = () => {
  const schema = z.preprocess(
    (v) => (v === "" ? null : v),
    z
      .record(z.string().min(1).max(100), z.unknown())
      .refine((c) => JSON.stringify(c).length <= MAX_CONTEXT_BYTES, `context must be at most ${MAX_CONTEXT_BYTES} bytes as JSON`)
      .nullable(),
  );
  documentedAs.set(schema, { oneOf: [{ type: "object", additionalProperties: true }, { type: "string", const: "" }, { type: "null" }] });
  return schema;
};

/** The ERC-7677 endpoint; an empty value unsets it on update. Checked against the outbound rule by the service. */
const urlField = () => z.preprocess((v) => (v === "" ? null : v), z.string().max(2_048).nullable());

const fields = {
  url: urlField().optional(),
  context: contextField().optional(),
  name: textField(255).optional(),
  /** Our extension: the chain whose code at `address` is checked (default: any chain of the key's mode). Not stored. */
  chainId: chainIdField().optional(),
};

export const createPaymasterInput = z.strictObject({ address: addressField(), ...fields });
export const updatePaymasterInput = z.strictObject({ address: addressField().optional(), ...fields });
export const listPaymastersInput = z.strictObject({ ...listInput, deleted: booleanField().optional() });

export const paymasterResponse = z.object({
  id: z.string(),
  object: z.literal("paymaster"),
  createdAt: z.number().int(),
  address: z.string(),
  url: z.string().optional(),
  context: z.record(z.string(), z.unknown()).optional(),
  name: z.string().optional(),
  deleted: z.boolean(),
  deployedOn: z
    .array(z.number().int())
    .optional()
    .describe("Our extension, in single answers (create, get, update): the chains of the key's mode with code at `address` when answering. A paymaster is registered before its contract is deployed; a policy can name it only once it has code on the policy's chain."),
  notice: z.string().optional().describe("Our extension: present when `address` has no code yet (on the chain the request named, or on any chain of the mode)."),
});

export type PaymasterResponse = z.infer<typeof paymasterResponse>;
export type CreatePaymasterInput = z.output<typeof createPaymasterInput>;
export type UpdatePaymasterInput = z.output<typeof updatePaymasterInput>;
export type ListPaymastersInput = z.output<typeof listPaymastersInput>;
