import { z } from "zod";
import { listEnvelope } from "@/lib/http/list";
import { defineOperation } from "@/lib/http/operation";
import { deletedResource, listResponse } from "@/lib/http/resource";
import { presentDeveloperAccount, presentDeveloperAccounts } from "./present";
import {
  createDeveloperAccountInput,
  developerAccountResponse,
  getDeveloperAccountInput,
  listDeveloperAccountsInput,
  messageToSignInput,
  messageToSignResponse,
  updateDeveloperAccountInput,
} from "./schema";
import * as service from "./service";

const tag = "Settings";

export const createDeveloperAccount = defineOperation({
  operationId: "createDeveloperAccount",
  method: "POST",
  path: "/v1/settings/developer_accounts",
  summary: "Create a custodial developer account, or add your own wallet (address + signature of the message to sign)",
  tag,
  input: createDeveloperAccountInput,
  response: developerAccountResponse,
  run: async ({ db, project, input }) => presentDeveloperAccount(db, await service.createDeveloperAccount(db, project, input), input.expand),
});

export const listDeveloperAccounts = defineOperation({
  operationId: "getDeveloperAccounts",
  method: "GET",
  path: "/v1/settings/developer_accounts",
  summary: "List developer accounts, newest first",
  tag,
  input: listDeveloperAccountsInput,
  response: listResponse(developerAccountResponse),
  run: async ({ db, project, input, path }) => {
    const { rows, total } = await service.listDeveloperAccounts(db, project, input);
    return listEnvelope(path, input, await presentDeveloperAccounts(db, rows, input.expand), total);
  },
});

export const developerAccountMessage = defineOperation({
  operationId: "getVerificationPayload",
  method: "GET",
  path: "/v1/settings/developer_accounts/message_to_sign",
  summary: "The message an external wallet signs (personal_sign) to be added as a developer account",
  tag,
  input: messageToSignInput,
  response: messageToSignResponse,
  run: async ({ project, input }) => ({ message: service.ownershipMessage(project, input.address), address: input.address }),
});

export const getDeveloperAccount = defineOperation({
  operationId: "getDeveloperAccount",
  method: "GET",
  path: "/v1/settings/developer_accounts/{id}",
  summary: "Retrieve a developer account",
  tag,
  input: getDeveloperAccountInput,
  response: developerAccountResponse,
  run: async ({ db, project, params, input }) => presentDeveloperAccount(db, await service.getDeveloperAccount(db, project, params.id), input.expand),
});

export const updateDeveloperAccount = defineOperation({
  operationId: "updateDeveloperAccount",
  method: "POST",
  path: "/v1/settings/developer_accounts/{id}",
  summary: "Rename a developer account",
  tag,
  input: updateDeveloperAccountInput,
  response: developerAccountResponse,
  run: async ({ db, project, params, input }) => presentDeveloperAccount(db, await service.renameDeveloperAccount(db, project, params.id, input.name), input.expand),
});

export const deleteDeveloperAccount = defineOperation({
  operationId: "deleteDeveloperAccount",
  method: "DELETE",
  path: "/v1/settings/developer_accounts/{id}",
  summary: "Delete a developer account (soft: it stays readable with deleted=true)",
  tag,
  input: z.strictObject({}),
  response: deletedResource("developerAccount"),
  run: async ({ db, project, params }) => service.deleteDeveloperAccount(db, project, params.id),
});

export const developerAccountOperations = [
  createDeveloperAccount,
  listDeveloperAccounts,
  developerAccountMessage,
  getDeveloperAccount,
  updateDeveloperAccount,
  deleteDeveloperAccount,
];
