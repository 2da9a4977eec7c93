import { z } from "zod";
import { listEnvelope } from "@/lib/http/list";
import { defineOperation } from "@/lib/http/operation";
import { listResponse } from "@/lib/http/resource";
import { presentAccount, presentAccounts } from "./present";
import { accountResponse, createAccountInput, getAccountInput, listAccountsInput, signatureResponse, signPayloadInput } from "./schema";
import * as accounts from "./service";

const tag = "Accounts";

export const createAccount = defineOperation({
  operationId: "createAccount",
  method: "POST",
  path: "/v1/accounts",
  summary: "Create a smart account for a player on a chain (counterfactual until deployed)",
  tag,
  input: createAccountInput,
  response: accountResponse,
  run: async ({ db, project, input }) => presentAccount(db, project, await accounts.createAccount(db, project, input), input.expand),
});

export const listAccounts = defineOperation({
  operationId: "getAccounts",
  method: "GET",
  path: "/v1/accounts",
  summary: "List a player's accounts, newest first",
  tag,
  input: listAccountsInput,
  response: listResponse(accountResponse),
  run: async ({ db, project, input, path }) => {
    const { rows, total } = await accounts.listAccounts(db, project, input);
    return listEnvelope(path, input, await presentAccounts(db, project, rows, input.expand), total);
  },
});

export const getAccount = defineOperation({
  operationId: "getAccount",
  method: "GET",
  path: "/v1/accounts/{id}",
  summary: "Retrieve an account",
  tag,
  input: getAccountInput,
  response: accountResponse,
  run: async ({ db, project, params, input }) => presentAccount(db, project, await accounts.getAccount(db, project, params.id), input.expand),
});

export const syncAccount = defineOperation({
  operationId: "syncAccount",
  cost: "chain",
  method: "POST",
  path: "/v1/accounts/{id}/sync",
  summary: "Refresh an account's owner and deployment from the chain",
  tag,
  input: z.strictObject({}),
  response: accountResponse,
  run: async ({ db, project, params }) => presentAccount(db, project, await accounts.syncAccount(db, project, params.id), undefined),
});

export const signPayload = defineOperation({
  operationId: "signPayload",
  method: "POST",
  path: "/v1/accounts/{id}/sign_payload",
  summary: "Sign EIP-712 typed data with a custodial account (valid for its EIP-1271 isValidSignature)",
  tag,
  input: signPayloadInput,
  response: signatureResponse,
  run: async ({ db, project, params, input }) => accounts.signPayload(db, project, params.id, input),
});

export const accountOperations = [createAccount, listAccounts, getAccount, syncAccount, signPayload];
