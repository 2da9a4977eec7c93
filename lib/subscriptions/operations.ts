import { z } from "zod";
import { listEnvelope } from "@/lib/http/list";
import { defineOperation } from "@/lib/http/operation";
import { deletedResource, listResponse } from "@/lib/http/resource";
import * as logs from "./logs";
import {
  createSubscriptionInput,
  listLogsInput,
  listSubscriptionsInput,
  listTriggersInput,
  logResponse,
  subscriptionResponse,
  testTriggerInput,
  testTriggerResponse,
  triggerInput,
  triggerResponse,
} from "./schema";
import * as subs from "./service";

const tag = "Subscriptions";
const none = z.strictObject({});

export const createSubscription = defineOperation({
  operationId: "createSubscription",
  method: "POST",
  path: "/v1/subscriptions",
  summary: "Subscribe webhook triggers to a topic; each trigger's signing secret is answered this once",
  tag,
  input: createSubscriptionInput,
  response: subscriptionResponse,
  run: async ({ db, project, input }) => subs.createSubscription(db, project, input),
});

export const getSubscriptions = defineOperation({
  operationId: "getSubscriptions",
  method: "GET",
  path: "/v1/subscriptions",
  summary: "List subscriptions, newest first",
  tag,
  input: listSubscriptionsInput,
  response: listResponse(subscriptionResponse),
  run: async ({ db, project, input, path }) => {
    const { data, total } = await subs.listSubscriptions(db, project, input);
    return listEnvelope(path, input, data, total);
  },
});

export const getSubscription = defineOperation({
  operationId: "getSubscription",
  method: "GET",
  path: "/v1/subscriptions/{id}",
  summary: "Retrieve a subscription with its triggers",
  tag,
  input: none,
  response: subscriptionResponse,
  run: async ({ db, project, params }) => subs.getSubscription(db, project, params.id),
});

export const deleteSubscription = defineOperation({
  operationId: "deleteSubscription",
  method: "DELETE",
  path: "/v1/subscriptions/{id}",
  summary: "Delete a subscription and its triggers (their logs stay)",
  tag,
  input: none,
  response: deletedResource("subscription"),
  run: async ({ db, project, params }) => subs.deleteSubscription(db, project, params.id),
});

export const createTrigger = defineOperation({
  operationId: "createTrigger",
  method: "POST",
  path: "/v1/subscriptions/{id}/triggers",
  summary: "Add a webhook trigger to a subscription; its signing secret is answered this once",
  tag,
  input: triggerInput,
  response: triggerResponse,
  run: async ({ db, project, params, input }) => subs.createTrigger(db, project, params.id, input),
});

export const getTriggers = defineOperation({
  operationId: "getTriggers",
  method: "GET",
  path: "/v1/subscriptions/{id}/triggers",
  summary: "List a subscription's triggers, newest first",
  tag,
  input: listTriggersInput,
  response: listResponse(triggerResponse),
  run: async ({ db, project, params, input, path }) => {
    const { data, total } = await subs.listTriggers(db, project, params.id, input);
    return listEnvelope(path, input, data, total);
  },
});

export const getTrigger = defineOperation({
  operationId: "getTrigger",
  method: "GET",
  path: "/v1/subscriptions/{id}/triggers/{triggerId}",
  summary: "Retrieve a trigger, with its delivery health",
  tag,
  input: none,
  response: triggerResponse,
  run: async ({ db, project, params }) => subs.getTrigger(db, project, params.id, params.triggerId),
});

export const deleteTrigger = defineOperation({
  operationId: "deleteTrigger",
  method: "DELETE",
  path: "/v1/subscriptions/{id}/triggers/{triggerId}",
  summary: "Delete a trigger (its logs stay)",
  tag,
  input: none,
  response: deletedResource("trigger"),
  run: async ({ db, project, params }) => subs.deleteTrigger(db, project, params.id, params.triggerId),
});

export const enableTrigger = defineOperation({
  operationId: "enableTrigger",
  method: "POST",
  path: "/v1/subscriptions/{id}/triggers/{triggerId}/enable",
  summary: "Re-enable a trigger disabled after days of failed deliveries",
  tag,
  input: none,
  response: triggerResponse,
  run: async ({ db, project, params }) => subs.enableTrigger(db, project, params.id, params.triggerId),
});

export const testTrigger = defineOperation({
  operationId: "testTrigger",
  method: "POST",
  path: "/v1/subscriptions/test",
  summary: "Send a test event now to a subscription's triggers, to a URL, or (no body) to every trigger subscribed to the test topic",
  tag,
  input: testTriggerInput,
  response: testTriggerResponse,
  run: async ({ db, project, input }) => logs.sendTest(db, project, input),
});

export const listSubscriptionLogs = defineOperation({
  operationId: "listSubscriptionLogs",
  method: "GET",
  path: "/v1/subscriptions/logs",
  summary: "List every delivery attempt of the mode (triggers and the project webhook), newest first",
  tag,
  input: listLogsInput,
  response: listResponse(logResponse),
  run: async ({ db, project, input, path }) => {
    const { data, total } = await logs.listLogs(db, project, input);
    return listEnvelope(path, input, data, total);
  },
});

export const getSubscriptionLog = defineOperation({
  operationId: "getSubscriptionLog",
  method: "GET",
  path: "/v1/subscriptions/logs/{id}",
  summary: "Retrieve one delivery attempt, with the start of the receiver's answer",
  tag,
  input: none,
  response: logResponse,
  run: async ({ db, project, params }) => logs.getLog(db, project, params.id),
});

export const redeliverLog = defineOperation({
  operationId: "redeliverLog",
  method: "POST",
  path: "/v1/subscriptions/logs/{id}/redeliver",
  summary: "Send a logged event again now, to the same target, with the same body and webhook-id",
  tag,
  input: none,
  response: logResponse,
  run: async ({ db, project, params }) => logs.redeliverLog(db, project, params.id),
});

export const subscriptionOperations = [
  createSubscription,
  getSubscriptions,
  getSubscription,
  deleteSubscription,
  createTrigger,
  getTriggers,
  getTrigger,
  deleteTrigger,
  enableTrigger,
  testTrigger,
  listSubscriptionLogs,
  getSubscriptionLog,
  redeliverLog,
];
