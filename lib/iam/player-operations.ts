import { z } from "zod";
import { booleanField, chainIdField, listInput, metadataField } from "@/lib/http/fields";
import { listEnvelope } from "@/lib/http/list";
import { defineOperation } from "@/lib/http/operation";
import { listResponse } from "@/lib/http/resource";
import { playerResponse } from "@/lib/players/schema";
import { getPlayer } from "@/lib/players/service";
import { createAuthPlayer, deleteAuthPlayer, listAuthPlayers, presentWithPlayer } from "./auth-players";
import { authPlayerResponse } from "./identities";

const tag = "Player authentication";

/** The providers a player may be created for: the spec's list and the SDK's (accelbyte). */
export const THIRD_PARTY_PROVIDERS = ["accelbyte", "firebase", "lootlocker", "playfab", "supabase", "custom", "oidc", "telegramMiniApp"] as const;

const authPlayerWithCore = authPlayerResponse.extend({ player: playerResponse });

export const createAuthPlayerOperation = defineOperation({
  operationId: "createAuthPlayer",
  method: "POST",
  path: "/iam/v1/players",
  summary: "Create a player for a third-party identity, optionally with its account on a chain",
  tag,
  input: z.strictObject({
    thirdPartyUserId: z.string().trim().min(1, "Expected the provider's user id").max(255),
    thirdPartyProvider: z.enum(THIRD_PARTY_PROVIDERS, { error: `Expected one of: ${THIRD_PARTY_PROVIDERS.join(", ")}` }),
    preGenerateEmbeddedAccount: booleanField(),
    chainId: chainIdField().optional(),
    metadata: metadataField().optional(),
  }),
  response: authPlayerWithCore,
  run: async ({ db, project, input }) => {
    const player = await createAuthPlayer(db, project, input);
    return (await presentWithPlayer(db, project, [player]))[0]!;
  },
});

export const listAuthPlayersOperation = defineOperation({
  operationId: "getAuthPlayers",
  method: "GET",
  path: "/iam/v1/players",
  summary: "List players with linked identities, newest first",
  tag,
  input: z.strictObject({ ...listInput, email: z.string().max(320).optional(), externalUserId: z.string().max(255).optional() }),
  response: listResponse(authPlayerWithCore),
  run: async ({ db, project, input, path }) => {
    const { rows, total } = await listAuthPlayers(db, project, input);
    return listEnvelope(path, input, await presentWithPlayer(db, project, rows), total);
  },
});

export const getAuthPlayerOperation = defineOperation({
  operationId: "getAuthPlayer",
  method: "GET",
  path: "/iam/v1/players/{id}",
  summary: "Retrieve an authenticated player",
  tag,
  input: z.strictObject({}),
  response: authPlayerWithCore,
  run: async ({ db, project, params }) => (await presentWithPlayer(db, project, [await getPlayer(db, project, params.id)]))[0]!,
});

export const deleteAuthPlayerOperation = defineOperation({
  operationId: "deleteAuthPlayer",
  method: "DELETE",
  path: "/iam/v1/players/{id}",
  summary: "Delete a player, its linked identities and its sessions",
  tag,
  input: z.strictObject({}),
  response: authPlayerWithCore.extend({ deleted: z.literal(true) }),
  run: async ({ db, project, params }) => deleteAuthPlayer(db, project, params.id),
});

export const authPlayerOperations = [createAuthPlayerOperation, listAuthPlayersOperation, getAuthPlayerOperation, deleteAuthPlayerOperation];
