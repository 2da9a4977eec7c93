import { z } from "zod";
import { listEnvelope } from "@/lib/http/list";
import { defineOperation } from "@/lib/http/operation";
import { deletedResource, listResponse } from "@/lib/http/resource";
import { presentEvent } from "./present";
import { createEventInput, eventResponse, listEventsInput } from "./schema";
import * as events from "./service";

const tag = "Events";

export const createEvent = defineOperation({
  operationId: "createEvent",
  method: "POST",
  path: "/v1/events",
  summary: "Create an event definition (a balance monitor for the balance topics)",
  tag,
  input: createEventInput,
  response: eventResponse,
  run: async ({ db, project, input }) => presentEvent(await events.createEvent(db, project, input)),
});

export const listEvents = defineOperation({
  operationId: "getEvents",
  method: "GET",
  path: "/v1/events",
  summary: "List event definitions, newest first",
  tag,
  input: listEventsInput,
  response: listResponse(eventResponse),
  run: async ({ db, project, input, path }) => {
    const { rows, total } = await events.listEvents(db, project, input);
    return listEnvelope(path, input, rows.map(presentEvent), total);
  },
});

export const getEvent = defineOperation({
  operationId: "getEvent",
  method: "GET",
  path: "/v1/events/{id}",
  summary: "Retrieve an event definition with its monitor's last reading",
  tag,
  input: z.strictObject({}),
  response: eventResponse,
  run: async ({ db, project, params }) => presentEvent(await events.getEvent(db, project, params.id)),
});

export const deleteEvent = defineOperation({
  operationId: "deleteEvent",
  method: "DELETE",
  path: "/v1/events/{id}",
  summary: "Delete an event definition (its monitor stops)",
  tag,
  input: z.strictObject({}),
  response: deletedResource("event"),
  run: async ({ db, project, params }) => events.deleteEvent(db, project, params.id),
});

export const eventOperations = [createEvent, listEvents, getEvent, deleteEvent];
