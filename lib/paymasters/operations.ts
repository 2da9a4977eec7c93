import { z } from "zod";
import { defineOperation } from "@/lib/http/operation";
import { deletedResource } from "@/lib/http/resource";
import { createPaymasterInput, listPaymastersInput, paymasterResponse, updatePaymasterInput } from "./schema";
import { serializePaymaster, serializePaymasterWithCode } from "./serializer";
import * as paymasters from "./service";

const tag = "Paymasters";

export const createPaymaster = defineOperation({
  operationId: "createPaymaster",
  method: "POST",
  path: "/v1/paymasters",
  summary: "Register an ERC-7677 paymaster service (before or after its contract is deployed: the answer says where it has code)",
  tag,
  input: createPaymasterInput,
  response: paymasterResponse,
  run: async ({ db, project, input }) => serializePaymasterWithCode(await paymasters.createPaymaster(db, project, input)),
});

// The SDK's generated listPaymasters (PaymasterApi, openapi `Array<PaymasterResponse>`) reads a bare JSON array, as
// the hosted API answers: the one list of this API without the list envelope. Its paging is the usual one (limit,
// skip, order; `deleted` to see deleted ones); the dashboard reads totals through the service.
export const listPaymasters = defineOperation({
  operationId: "listPaymasters",
  method: "GET",
  path: "/v1/paymasters",
  summary: "List paymasters, newest first: a bare array, as the SDK reads it (limit, skip, order, deleted)",
  tag,
  input: listPaymastersInput,
  response: z.array(paymasterResponse),
  run: async ({ db, project, input }) => (await paymasters.listPaymasters(db, project, input)).rows.map(serializePaymaster),
});

export const getPaymaster = defineOperation({
  operationId: "getPaymaster",
  method: "GET",
  path: "/v1/paymasters/{id}",
  summary: "Retrieve a paymaster",
  tag,
  input: z.strictObject({}),
  response: paymasterResponse,
  run: async ({ db, project, params }) => serializePaymasterWithCode(await paymasters.getPaymasterWithCode(db, project, params.id)),
});

export const updatePaymaster = defineOperation({
  operationId: "updatePaymaster",
  method: "POST",
  path: "/v1/paymasters/{id}",
  summary: "Update a paymaster",
  tag,
  input: updatePaymasterInput,
  response: paymasterResponse,
  run: async ({ db, project, params, input }) => serializePaymasterWithCode(await paymasters.updatePaymaster(db, project, params.id, input)),
});

export const deletePaymaster = defineOperation({
  operationId: "deletePaymaster",
  method: "DELETE",
  path: "/v1/paymasters/{id}",
  summary: "Delete a paymaster (soft; refused with 409 while a policy sponsors through it)",
  tag,
  input: z.strictObject({}),
  response: deletedResource("paymaster"),
  run: async ({ db, project, params }) => paymasters.deletePaymaster(db, project, params.id),
});

export const paymasterOperations = [
  createPaymaster,
  listPaymasters,
  getPaymaster,
  updatePaymaster,
  deletePaymaster,
];
