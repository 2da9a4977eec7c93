import { refreshAfterCommit } from "@/lib/http/after-commit";
import { getDb } from "@/lib/db/client";
import { listEnvelope } from "@/lib/http/list";
import { defineOperation } from "@/lib/http/operation";
import { listResponse } from "@/lib/http/resource";
import { presentIntent, presentIntents } from "./present";
import { createIntentInput, getIntentInput, intentResponse, listIntentsInput, signatureInput } from "./schema";
import * as intents from "./service";
import { relayIntent, waitForLanding } from "./dispatch";
import { authorizationOf } from "./operation-v08";
import { submitSignature } from "./signature";
import { metrics } from "@/lib/metrics";

const tag = "Transaction intents";

export const createIntent = defineOperation({
  operationId: "createTransactionIntent",
  cost: "chain",
  method: "POST",
  path: "/v1/transaction_intents",
  summary: "Create a transaction intent: a (batched) call from a player's account, sponsored under a policy or paid by the account",
  tag,
  input: createIntentInput,
  response: intentResponse,
  run: async ({ db, project, input, origin }) => {
    const started = performance.now();
    // The POST's own work for a created intent: to its answer, or for an optimistic one to its record (its wait for the
    // landing is the later stages').
    const accepted = () => metrics.intentStageSeconds.observe({ stage: "accept" }, (performance.now() - started) / 1000);
    const { intent } = await intents.createIntent(db, project, input);
    metrics.intents.inc({ outcome: "created" });
    const optimistic = input.optimistic ?? false;
    if (optimistic) {
      accepted();
      refreshAfterCommit(async () => presentIntent(await getDb(), project, await waitForLanding(await getDb(), intent), input.expand, origin));
    }
    const presented = await presentIntent(db, project, await relayIntent(db, intent, optimistic), input.expand, origin);
    if (!optimistic) accepted();
    return presented;
  },
  // A retry after a crash between the intent's commit and the key's answer: that intent (its relay event is the
  // minute sweep's to send), never a second one.
  recover: async ({ db, project, input, origin }, requestId) => {
    const intent = await intents.intentOfRequest(db, project, requestId);
    return intent ? presentIntent(db, project, intent, input.expand, origin) : null;
  },
});

export const listIntents = defineOperation({
  operationId: "getTransactionIntents",
  method: "GET",
  path: "/v1/transaction_intents",
  summary: "List transaction intents, newest first",
  tag,
  input: listIntentsInput,
  response: listResponse(intentResponse),
  run: async ({ db, project, input, path, origin }) => {
    const { rows, total } = await intents.listIntents(db, project, input);
    return listEnvelope(path, input, await presentIntents(db, project, rows, input.expand, origin), total);
  },
});

export const getIntent = defineOperation({
  operationId: "getTransactionIntent",
  method: "GET",
  path: "/v1/transaction_intents/{id}",
  summary: "Retrieve a transaction intent",
  tag,
  input: getIntentInput,
  response: intentResponse,
  run: async ({ db, project, params, input, origin }) => presentIntent(db, project, await intents.getIntent(db, project, params.id), input.expand, origin),
});

export const signIntent = defineOperation({
  operationId: "signature",
  cost: "chain",
  method: "POST",
  path: "/v1/transaction_intents/{id}/signature",
  summary: "Submit the owner's signature of a non-custodial intent's userOperationHash; it is checked, then relayed",
  tag,
  input: signatureInput,
  response: intentResponse,
  run: async ({ db, project, params, input, origin }) => {
    const signedAuthorization = input.signedAuthorization ? authorizationOf(input.signedAuthorization) : undefined;
    const intent = await submitSignature(db, project, params.id, input.signature as `0x${string}`, signedAuthorization);
    const optimistic = input.optimistic ?? false;
    if (optimistic) refreshAfterCommit(async () => presentIntent(await getDb(), project, await waitForLanding(await getDb(), intent), undefined, origin));
    return presentIntent(db, project, await relayIntent(db, intent, optimistic), undefined, origin);
  },
});

export const intentOperations = [createIntent, listIntents, getIntent, signIntent];
