import { z } from "zod";
import { listEnvelope } from "@/lib/http/list";
import { defineOperation } from "@/lib/http/operation";
import { deletedResource, listResponse } from "@/lib/http/resource";
import { createPaymasterInput, listPaymastersInput, paymasterResponse, updatePaymasterInput } from "./schema";
import { serializePaymaster } from "./serializer";
import * as paymasters from "./service";
import { paymasterServiceRpc } from "./rpc-operation";

const tag = "Paymasters";

export const createPaymaster = defineOperation({
  operationId: "createPaymaster",
  method: "POST",
  path: "/v1/paymasters",
  summary: "Register an ERC-7677 paymaster service (its contract must have code on a chain of the key's mode)",
  tag,
  input: createPaymasterInput,
  response: paymasterResponse,
  run: async ({ db, project, input }) => serializePaymaster(await paymasters.createPaymaster(db, project, input)),
});

// The SDK's generated listPaymasters expects a bare array (its wrapper has no list method): we answer the
// standard paginated list envelope, as every list of this API does.
export const listPaymasters = defineOperation({
  operationId: "listPaymasters",
  method: "GET",
  path: "/v1/paymasters",
  summary: "List paymasters, newest first",
  tag,
  input: listPaymastersInput,
  response: listResponse(paymasterResponse),
  run: async ({ db, project, input, path }) => {
    const { rows, total } = await paymasters.listPaymasters(db, project, input);
    return listEnvelope(path, input, rows.map(serializePaymaster), total);
  },
});

export const getPaymaster = defineOperation({
  operationId: "getPaymaster",
  method: "GET",
  path: "/v1/paymasters/{id}",
  summary: "Retrieve a paymaster",
  tag,
  input: z.strictObject({}),
  response: paymasterResponse,
  run: async ({ db, project, params }) => serializePaymaster(await paymasters.getPaymaster(db, project, params.id!)),
});

export const updatePaymaster = defineOperation({
  operationId: "updatePaymaster",
  method: "POST",
  path: "/v1/paymasters/{id}",
  summary: "Update a paymaster",
  tag,
  input: updatePaymasterInput,
  response: paymasterResponse,
  run: async ({ db, project, params, input }) => serializePaymaster(await paymasters.updatePaymaster(db, project, params.id!, input)),
});

export const deletePaymaster = defineOperation({
  operationId: "deletePaymaster",
  method: "DELETE",
  path: "/v1/paymasters/{id}",
  summary: "Delete a paymaster (soft; refused with 409 while a policy sponsors through it)",
  tag,
  input: z.strictObject({}),
  response: deletedResource("paymaster"),
  run: async ({ db, project, params }) => paymasters.deletePaymaster(db, project, params.id!),
});

export const paymasterOperations = [
  createPaymaster,
  listPaymasters,
  getPaymaster,
  updatePaymaster,
  deletePaymaster,
  paymasterServiceRpc,
];
