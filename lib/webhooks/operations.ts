import { z } from "zod";
import { defineOperation } from "@/lib/http/operation";
import { deleteWebhook, setWebhook, setWebhookInput, webhookResponse } from "./service";

const tag = "Settings";

export const updateWebhook = defineOperation({
  operationId: "updateWebhook",
  method: "POST",
  path: "/v1/settings/webhook",
  summary: "Set the URL that receives this mode's transaction-intent events (signed with the secret key)",
  tag,
  input: setWebhookInput,
  response: webhookResponse,
  run: async ({ db, project, input }) => setWebhook(db, project, input.url),
});

export const removeWebhook = defineOperation({
  operationId: "removeWebhook",
  method: "DELETE",
  path: "/v1/settings/webhook",
  summary: "Stop sending this mode's transaction-intent events",
  tag,
  input: z.strictObject({}),
  response: webhookResponse.extend({ deleted: z.literal(true) }),
  run: async ({ db, project }) => deleteWebhook(db, project),
});

export const webhookOperations = [updateWebhook, removeWebhook];
