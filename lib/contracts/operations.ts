import { z } from "zod";
import { listEnvelope } from "@/lib/http/list";
import { defineOperation } from "@/lib/http/operation";
import { deletedResource, listResponse } from "@/lib/http/resource";
import { contractResponse, createContractInput, listContractsInput, updateContractInput } from "./schema";
import { serializeContract } from "./serializer";
import { readContract as readContractCall, readContractInput, readContractResponse } from "./read";
import * as contracts from "./service";

const tag = "Contracts";

export const createContract = defineOperation({
  operationId: "createContract",
  method: "POST",
  path: "/v1/contracts",
  summary: "Register a contract",
  tag,
  input: createContractInput,
  response: contractResponse,
  run: async ({ db, project, input }) => serializeContract(await contracts.createContract(db, project, input)),
});

export const listContracts = defineOperation({
  operationId: "getContracts",
  method: "GET",
  path: "/v1/contracts",
  summary: "List contracts, newest first",
  tag,
  input: listContractsInput,
  response: listResponse(contractResponse),
  run: async ({ db, project, input, path }) => {
    const { rows, total } = await contracts.listContracts(db, project, input);
    return listEnvelope(path, input, rows.map(serializeContract), total);
  },
});

export const getContract = defineOperation({
  operationId: "getContract",
  method: "GET",
  path: "/v1/contracts/{id}",
  summary: "Retrieve a contract",
  tag,
  input: z.strictObject({}),
  response: contractResponse,
  run: async ({ db, project, params }) => serializeContract(await contracts.getContract(db, project, params.id)),
});

export const updateContract = defineOperation({
  operationId: "updateContract",
  method: "POST",
  path: "/v1/contracts/{id}",
  summary: "Update a contract",
  tag,
  input: updateContractInput,
  response: contractResponse,
  run: async ({ db, project, params, input }) => serializeContract(await contracts.updateContract(db, project, params.id, input)),
});

export const deleteContract = defineOperation({
  operationId: "deleteContract",
  method: "DELETE",
  path: "/v1/contracts/{id}",
  summary: "Delete a contract (soft: it stays readable with deleted=true)",
  tag,
  input: z.strictObject({}),
  response: deletedResource("contract"),
  run: async ({ db, project, params }) => contracts.deleteContract(db, project, params.id),
});


export const readContract = defineOperation({
  operationId: "readContract",
  cost: "chain",
  method: "GET",
  path: "/v1/contracts/{id}/read",
  summary: "Call a view function of a registered contract",
  tag,
  input: readContractInput,
  response: readContractResponse,
  run: async ({ db, project, params, input }) => readContractCall(db, project, params.id, input),
});

export const contractOperations = [createContract, listContracts, getContract, updateContract, deleteContract, readContract];
