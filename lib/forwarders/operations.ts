import { z } from "zod";
import { chainFor, chainIdField } from "@/lib/chain/registry";
import { addressField, listInput, textField } from "@/lib/http/fields";
import { listEnvelope } from "@/lib/http/list";
import { badRequest, notFound } from "@/lib/http/errors";
import { defineOperation } from "@/lib/http/operation";
import { deletedResource, listResponse } from "@/lib/http/resource";

/**
 * ERC-2771 forwarder contracts (`/v1/forwarder_contracts`, the SDK's ForwarderContractApi).
 *
 * Every transaction here runs from an ERC-4337 smart account whose gas a policy (or a registered
 * ERC-7677 paymaster) sponsors; nothing relays meta-transactions through a trusted forwarder yet.
 * A stored forwarder would therefore change nothing about any intent, so the service refuses to
 * create one (after checking the body, so bad input still gets its own answer) instead of keeping a
 * record that silently does nothing. There are never any to list, read, update or delete.
 */

const tag = "Forwarder contracts";

export const FORWARDERS_UNSUPPORTED =
  "Forwarder contracts (ERC-2771 meta-transactions) are not supported: every transaction runs from an ERC-4337 smart account " +
  "whose gas a policy sponsors, through our paymaster or a registered ERC-7677 paymaster (/v1/paymasters). Nothing was created.";

const forwarderInput = {
  address: addressField(),
  chainId: chainIdField(),
  name: textField(255).min(1).optional(),
};

const forwarderResponse = z.object({
  id: z.string(),
  object: z.literal("forwarderContract"),
  createdAt: z.number().int(),
  address: z.string(),
  chainId: z.number().int(),
  name: z.string().nullable(),
});

const refuse = (address: string): never => {
  throw badRequest(FORWARDERS_UNSUPPORTED, { address: { value: address, message: "forwarder contracts are not supported" } });
};

const missing = (id: string): never => {
  throw notFound("forwarder contract", id);
};

export const createForwarderContract = defineOperation({
  operationId: "createForwarderContract",
  method: "POST",
  path: "/v1/forwarder_contracts",
  summary: "Create a forwarder contract (not supported: answers 400)",
  tag,
  input: z.strictObject(forwarderInput),
  response: forwarderResponse,
  run: async ({ project, input }) => {
    chainFor(project, input.chainId);
    return refuse(input.address);
  },
});

export const listForwarderContracts = defineOperation({
  operationId: "listForwarderContracts",
  method: "GET",
  path: "/v1/forwarder_contracts",
  summary: "List forwarder contracts (always empty)",
  tag,
  input: z.strictObject(listInput),
  response: listResponse(forwarderResponse),
  run: async ({ input, path }) => listEnvelope(path, input, [], 0),
});

export const getForwarderContract = defineOperation({
  operationId: "getForwarderContract",
  method: "GET",
  path: "/v1/forwarder_contracts/{id}",
  summary: "Retrieve a forwarder contract",
  tag,
  input: z.strictObject({}),
  response: forwarderResponse,
  run: async ({ params }) => missing(params.id!),
});

export const updateForwarderContract = defineOperation({
  operationId: "updateForwarderContract",
  method: "POST",
  path: "/v1/forwarder_contracts/{id}",
  summary: "Update a forwarder contract",
  tag,
  input: z.strictObject({ address: forwarderInput.address.optional(), chainId: forwarderInput.chainId.optional(), name: forwarderInput.name }),
  response: forwarderResponse,
  run: async ({ params }) => missing(params.id!),
});

export const deleteForwarderContract = defineOperation({
  operationId: "deleteForwarderContract",
  method: "DELETE",
  path: "/v1/forwarder_contracts/{id}",
  summary: "Delete a forwarder contract",
  tag,
  input: z.strictObject({}),
  response: deletedResource("forwarderContract"),
  run: async ({ params }) => missing(params.id!),
});

export const forwarderContractOperations = [
  createForwarderContract,
  listForwarderContracts,
  getForwarderContract,
  updateForwarderContract,
  deleteForwarderContract,
];
