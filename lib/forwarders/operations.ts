import { z } from "zod";
import { addressField, chainIdField, listInput, textField } from "@/lib/http/fields";
import { listEnvelope } from "@/lib/http/list";
import { defineOperation } from "@/lib/http/operation";
import { deletedResource, listResponse } from "@/lib/http/resource";
import * as forwarders from "./service";

/**
 * ERC-2771 forwarder contracts (`/v1/forwarder_contracts`, the SDK's ForwarderContractApi): create, list, get,
 * update and delete, scoped to the key's project and mode. A registry only: our relay needs no forwarder (every
 * transaction runs from an ERC-4337 smart account whose gas a policy sponsors), and no intent reads it.
 */

const tag = "Forwarder contracts";

const fields = {
  address: addressField().describe("The forwarder contract's address (the spec calls it the paymaster address)."),
  chainId: chainIdField(),
  name: textField(255).optional(),
};

const forwarderResponse = z.object({
  id: z.string(),
  object: z.literal("forwarderContract"),
  createdAt: z.number().int(),
  address: z.string(),
  chainId: z.number().int(),
  name: z.string().optional(),
});

export const createForwarderContract = defineOperation({
  operationId: "createForwarderContract",
  method: "POST",
  path: "/v1/forwarder_contracts",
  summary: "Register a forwarder contract (a registry: our relay does not use it)",
  tag,
  input: z.strictObject(fields),
  response: forwarderResponse,
  run: async ({ db, project, input }) => forwarders.serializeForwarderContract(await forwarders.createForwarderContract(db, project, input)),
});

export const listForwarderContracts = defineOperation({
  operationId: "listForwarderContracts",
  method: "GET",
  path: "/v1/forwarder_contracts",
  summary: "List forwarder contracts, newest first",
  tag,
  input: z.strictObject(listInput),
  response: listResponse(forwarderResponse),
  run: async ({ db, project, input, path }) => {
    const { rows, total } = await forwarders.listForwarderContracts(db, project, input);
    return listEnvelope(path, input, rows.map(forwarders.serializeForwarderContract), total);
  },
});

export const getForwarderContract = defineOperation({
  operationId: "getForwarderContract",
  method: "GET",
  path: "/v1/forwarder_contracts/{id}",
  summary: "Retrieve a forwarder contract",
  tag,
  input: z.strictObject({}),
  response: forwarderResponse,
  run: async ({ db, project, params }) => forwarders.serializeForwarderContract(await forwarders.getForwarderContract(db, project, params.id)),
});

export const updateForwarderContract = defineOperation({
  operationId: "updateForwarderContract",
  method: "POST",
  path: "/v1/forwarder_contracts/{id}",
  summary: "Update a forwarder contract (fields sent replace the stored ones; name= clears the name)",
  tag,
  input: z.strictObject({ address: fields.address.optional(), chainId: fields.chainId.optional(), name: fields.name }),
  response: forwarderResponse,
  run: async ({ db, project, params, input }) => forwarders.serializeForwarderContract(await forwarders.updateForwarderContract(db, project, params.id, input)),
});

export const deleteForwarderContract = defineOperation({
  operationId: "deleteForwarderContract",
  method: "DELETE",
  path: "/v1/forwarder_contracts/{id}",
  summary: "Delete a forwarder contract",
  tag,
  input: z.strictObject({}),
  response: deletedResource("forwarderContract"),
  run: async ({ db, project, params }) => forwarders.deleteForwarderContract(db, project, params.id),
});

export const forwarderContractOperations = [
  createForwarderContract,
  listForwarderContracts,
  getForwarderContract,
  updateForwarderContract,
  deleteForwarderContract,
];
