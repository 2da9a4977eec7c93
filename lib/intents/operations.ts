import { eq } from "drizzle-orm";
import { z } from "zod";
import { presentAccount } from "@/lib/accounts/present";
import { accountResponse } from "@/lib/accounts/schema";
import { syncAccount } from "@/lib/accounts/service";
import { expireEvent, relayEvent } from "@/inngest/events";
import { sendEvents } from "@/inngest/send";
import { afterCommit, refreshAfterCommit } from "@/lib/http/after-commit";
import { getDb, type Db } from "@/lib/db/client";
import { transactionIntents } from "@/lib/db/schema";
import { listEnvelope } from "@/lib/http/list";
import { defineOperation } from "@/lib/http/operation";
import { listResponse } from "@/lib/http/resource";
import { presentIntent, presentIntents } from "./present";
import { createIntentInput, getIntentInput, intentResponse, listIntentsInput, signatureInput } from "./schema";
import * as intents from "./service";
import { submitSignature } from "./signature";
import { metrics } from "@/lib/metrics";

const tag = "Transaction intents";

/** How long an optimistic request waits for its op to land before answering anyway. */
const OPTIMISTIC_WAIT_MS = 15_000;

/**
 * Hands a pending intent to the relay (with `optimistic`, waits a while until it has landed), or
 * schedules the cancellation of a sponsored one still awaiting its signature when its sponsorship ends.
 */
export async function relayIntent(db: Db, intent: intents.IntentRow, optimistic: boolean) {
  // Under an Idempotency-Key the events go once the intent and the key's response have committed;
  // if that send fails the minute sweep (resendUnsettledIntents) sends them, with the same ids.
  if (intent.status === "awaiting_signature") {
    if (intent.sponsored) await afterCommit(() => sendEvents([expireEvent(intent.id)]));
    return intent;
  }
  const deferred = await afterCommit(() => sendEvents([relayEvent(intent.id)]));
  // Nothing lands before the commit: the caller waits after it (refreshAfterCommit).
  if (!optimistic || deferred) return intent;
  return waitForLanding(db, intent);
}

/** The intent once its op has landed, or as it is after OPTIMISTIC_WAIT_MS. */
export async function waitForLanding(db: Db, intent: intents.IntentRow) {
  const deadline = Date.now() + OPTIMISTIC_WAIT_MS;
  for (;;) {
    const [row] = await db.select().from(transactionIntents).where(eq(transactionIntents.id, intent.id));
    if (!row || row.status !== "pending" || Date.now() > deadline) return row ?? intent;
    await new Promise((r) => setTimeout(r, 25));
  }
}

export const createIntent = defineOperation({
  operationId: "createTransactionIntent",
  method: "POST",
  path: "/v1/transaction_intents",
  summary: "Create a transaction intent: a (batched) call from a player's account, sponsored under a policy or paid by the account",
  tag,
  input: createIntentInput,
  response: intentResponse,
  run: async ({ db, project, input, origin }) => {
    const { intent } = await intents.createIntent(db, project, input);
    metrics.intents.inc({ outcome: "created" });
    const optimistic = input.optimistic ?? false;
    if (optimistic) refreshAfterCommit(async () => presentIntent(await getDb(), project, await waitForLanding(await getDb(), intent), input.expand, origin));
    return presentIntent(db, project, await relayIntent(db, intent, optimistic), input.expand, origin);
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
  run: async ({ db, project, params, input, origin }) => presentIntent(db, project, await intents.getIntent(db, project, params.id!), input.expand, origin),
});

export const signIntent = defineOperation({
  operationId: "signature",
  method: "POST",
  path: "/v1/transaction_intents/{id}/signature",
  summary: "Submit the owner's signature of a non-custodial intent's userOperationHash; it is checked, then relayed",
  tag,
  input: signatureInput,
  response: intentResponse,
  run: async ({ db, project, params, input, origin }) => {
    const intent = await submitSignature(db, project, params.id!, input.signature as `0x${string}`);
    const optimistic = input.optimistic ?? false;
    if (optimistic) refreshAfterCommit(async () => presentIntent(await getDb(), project, await waitForLanding(await getDb(), intent), undefined, origin));
    return presentIntent(db, project, await relayIntent(db, intent, optimistic), undefined, origin);
  },
});

export const deployAccount = defineOperation({
  operationId: "deployAccount",
  method: "POST",
  path: "/v1/accounts/{id}/deploy",
  summary: "Deploy a counterfactual custodial account with a sponsored operation (the policy needs an account_functions rule)",
  tag: "Accounts",
  input: z.strictObject({ policy: z.string({ error: "policy is required: the policy (pol_...) that pays the deployment" }).startsWith("pol_", "Expected a policy id (pol_...)") }),
  response: accountResponse,
  run: async ({ db, project, params, input }) => {
    const intent = await intents.createDeploymentIntent(db, project, params.id!, input.policy);
    refreshAfterCommit(async () => {
      const root = await getDb();
      if (intent) await waitForLanding(root, intent);
      return presentAccount(root, project, await syncAccount(root, project, params.id!), undefined);
    });
    if (intent) await relayIntent(db, intent, true);
    return presentAccount(db, project, await syncAccount(db, project, params.id!), undefined);
  },
});

export const intentOperations = [createIntent, listIntents, getIntent, signIntent, deployAccount];
