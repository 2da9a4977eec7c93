import { z } from "zod";
import { listEnvelope } from "@/lib/http/list";
import { defineOperation } from "@/lib/http/operation";
import { deletedResource, listResponse } from "@/lib/http/resource";
import { createPlayerInput, getPlayerInput, listPlayersInput, playerResponse, updatePlayerInput } from "./schema";
import { playerRefColumns, presentPlayer, presentPlayers } from "./present";
import { serializePlayer } from "./serializer";
import * as players from "./service";

const tag = "Players";

export const createPlayer = defineOperation({
  operationId: "createPlayer",
  method: "POST",
  path: "/v1/players",
  summary: "Create a player",
  tag,
  input: createPlayerInput,
  response: playerResponse,
  // A new player has no accounts or intents yet: nothing to look up.
  run: async ({ db, project, input }) => serializePlayer(await players.createPlayer(db, project, input)),
});

const playersPage = players.playersPage(playerRefColumns);

export const listPlayers = defineOperation({
  operationId: "getPlayers",
  method: "GET",
  path: "/v1/players",
  summary: "List players, newest first",
  tag,
  input: listPlayersInput,
  response: listResponse(playerResponse),
  run: async ({ db, project, input, path }) => {
    const { rows, total, extras } = await playersPage(db, project, input);
    return listEnvelope(path, input, await presentPlayers(db, project, rows, input.expand, extras), total);
  },
});

export const getPlayer = defineOperation({
  operationId: "getPlayer",
  method: "GET",
  path: "/v1/players/{id}",
  summary: "Retrieve a player",
  tag,
  input: getPlayerInput,
  response: playerResponse,
  run: async ({ db, project, params, input }) => presentPlayer(db, project, await players.getPlayer(db, project, params.id), input.expand),
});

export const updatePlayer = defineOperation({
  operationId: "updatePlayer",
  method: "POST",
  path: "/v1/players/{id}",
  summary: "Update a player",
  tag,
  input: updatePlayerInput,
  response: playerResponse,
  run: async ({ db, project, params, input }) =>
    presentPlayer(db, project, await players.updatePlayer(db, project, params.id, input), input.expand),
});

export const deletePlayer = defineOperation({
  operationId: "deletePlayer",
  method: "DELETE",
  path: "/v1/players/{id}",
  summary: "Delete a player",
  tag,
  input: z.strictObject({}),
  response: deletedResource("player"),
  run: async ({ db, project, params }) => players.deletePlayer(db, project, params.id),
});

export const playerOperations = [createPlayer, listPlayers, getPlayer, updatePlayer, deletePlayer];
