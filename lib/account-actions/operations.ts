// The /v1/accounts/{id}/… actions (deployment, ownership transfer, recovery): each records an intent. The deployment
// answers with the account, the others with the intent.
import { z } from "zod";
import { presentAccount } from "@/lib/accounts/present";
import { accountResponse } from "@/lib/accounts/schema";
import { syncAccount } from "@/lib/accounts/service";
import { getDb } from "@/lib/db/client";
import { refreshAfterCommit } from "@/lib/http/after-commit";
import { addressField } from "@/lib/http/fields";
import { defineOperation } from "@/lib/http/operation";
import { relayIntent, waitForLanding } from "@/lib/intents/dispatch";
import { presentIntent } from "@/lib/intents/present";
import { intentResponse } from "@/lib/intents/schema";
import { createDeploymentIntent, type IntentRow } from "@/lib/intents/service";
import * as actions from "./service";

const tag = "Accounts";
const policy = z.string({ error: "policy is required: the policy (pol_...) that pays, with an account_functions rule" }).startsWith("pol_", "Expected a policy id (pol_...)");
const newOwnerAddress = addressField();

const accountAction = <T extends z.ZodObject>(
  operationId: string,
  action: string,
  summary: string,
  input: T,
  run: (db: Parameters<typeof actions.startRecovery>[0], ctx: Parameters<typeof actions.startRecovery>[1], id: string, input: z.output<T>) => Promise<IntentRow>,
) =>
  defineOperation({
    operationId,
    cost: "chain",
    method: "POST",
    path: `/v1/accounts/{id}/${action}`,
    summary,
    tag,
    input,
    response: intentResponse,
    run: async ({ db, project, params, input, origin }) => {
      const intent = await run(db, project, params.id, input);
      return presentIntent(db, project, await relayIntent(db, intent, false), undefined, origin);
    },
  });

export const requestTransferOwnership = accountAction(
  "requestTransferOwnership",
  "request_transfer_ownership",
  "Start a two-step ownership transfer (the new owner then calls acceptOwnership on the account)",
  z.strictObject({ newOwnerAddress, policy }),
  actions.requestOwnershipTransfer,
);

export const cancelTransferOwnership = accountAction(
  "cancelTransferOwnership",
  "cancel_transfer_ownership",
  "Cancel a pending ownership transfer",
  z.strictObject({ policy }),
  actions.cancelOwnershipTransfer,
);

export const startRecovery = accountAction(
  "startRecovery",
  "start_recovery",
  "Propose a new owner as the account's guardian (accounts created with defaultGuardian)",
  z.strictObject({ newOwnerAddress, policy }),
  actions.startRecovery,
);

export const completeRecovery = accountAction(
  "completeRecovery",
  "complete_recovery",
  "Complete a due recovery with guardians' signatures of the account's recoveryHash (the service adds its own)",
  z.strictObject({
    newOwnerAddress,
    policy,
    signatures: z.array(z.string().regex(/^0x[0-9a-fA-F]{130}$/, "Expected a 65-byte ECDSA signature as 0x-prefixed hex")).max(50).default([]),
  }),
  (db, ctx, id, input) => actions.completeRecovery(db, ctx, id, { ...input, signatures: input.signatures as `0x${string}`[] }),
);

export const deployAccount = defineOperation({
  operationId: "deployAccount",
  cost: "chain",
  method: "POST",
  path: "/v1/accounts/{id}/deploy",
  summary: "Deploy a counterfactual custodial account with a sponsored operation (the policy needs an account_functions rule)",
  tag,
  input: z.strictObject({ policy: z.string({ error: "policy is required: the policy (pol_...) that pays the deployment" }).startsWith("pol_", "Expected a policy id (pol_...)") }),
  response: accountResponse,
  run: async ({ db, project, params, input }) => {
    const intent = await createDeploymentIntent(db, project, params.id, input.policy);
    refreshAfterCommit(async () => {
      const root = await getDb();
      if (intent) await waitForLanding(root, intent);
      return presentAccount(root, project, await syncAccount(root, project, params.id), undefined);
    });
    if (intent) await relayIntent(db, intent, true);
    return presentAccount(db, project, await syncAccount(db, project, params.id), undefined);
  },
});

export const accountActionOperations = [requestTransferOwnership, cancelTransferOwnership, startRecovery, completeRecovery];
