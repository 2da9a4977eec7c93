import { z } from "zod";
import { missing, notFound } from "@/lib/errors";
import { expandField } from "@/lib/http/fields";
import { defineOperation } from "@/lib/http/operation";
import { presentPlayer } from "@/lib/players/present";
import { playerExpandable, playerResponse } from "@/lib/players/schema";
import type { Queryable } from "@/lib/db/client";
import type { ProjectContext } from "@/lib/tenant";
import { authPlayer, authPlayerResponse, findIdentity } from "./identities";
import { playerOfToken, verifyTokenFor } from "./credentials/account";
import { configInput, configResponse, deleteConfig, getConfig, listConfigs, providerParam, upsertConfig, type ConfigInput } from "./provider-config";
import { findOrCreatePlayer, verifyProviderToken } from "./provider-signin";
import { openSession } from "./sessions";

const tag = "Player authentication";

/** A provider named in the path: one this service can configure, else a 404 as for any unknown path resource. */
function pathProvider(value: string | undefined) {
  const parsed = providerParam.safeParse(value);
  if (!parsed.success) throw notFound("provider", value ?? "");
  return parsed.data;
}

// ---- Configurations -------------------------------------------------------------------------

const createConfig = (operationId: string, path: string, summary: string) =>
  defineOperation({
    operationId,
    method: "POST",
    path,
    summary,
    tag,
    input: configInput,
    response: configResponse,
    run: async ({ db, project, input }) => upsertConfig(db, project, input as ConfigInput),
  });

export const createOAuthConfig = createConfig("createOAuthConfig", "/iam/v1/oauth", "Configure a sign-in provider (creates, or updates the existing one)");
export const createAuthConfig = createConfig("create", "/iam/v1/config", "Configure a sign-in provider (the same as POST /iam/v1/oauth)");

export const listOAuthConfig = defineOperation({
  operationId: "listOAuthConfig",
  method: "GET",
  path: "/iam/v1/oauth",
  summary: "The mode's provider configurations",
  tag,
  input: z.strictObject({}),
  response: z.object({ data: z.array(configResponse) }),
  run: async ({ db, project }) => ({ data: await listConfigs(db, project) }),
});

export const getOAuthConfig = defineOperation({
  operationId: "getOAuthConfig",
  method: "GET",
  path: "/iam/v1/oauth/{provider}",
  summary: "A provider's configuration (secrets masked)",
  tag,
  input: z.strictObject({}),
  response: configResponse,
  run: async ({ db, project, params }) => getConfig(db, project, pathProvider(params.provider)),
});

export const deleteOAuthConfig = defineOperation({
  operationId: "deleteOAuthConfig",
  method: "DELETE",
  path: "/iam/v1/oauth/{provider}",
  summary: "Remove a provider's configuration (its players keep their identities)",
  tag,
  input: z.strictObject({}),
  response: z.object({ id: z.string(), object: z.literal("oauthConfig"), deleted: z.literal(true) }),
  run: async ({ db, project, params }) => deleteConfig(db, project, pathProvider(params.provider)),
});

// ---- Verification and sign-in ---------------------------------------------------------------

const tokenField = () => z.string().min(1, "Expected the provider's token").max(16_384);
/** Accepted as the SDK sends it; verification follows the provider's configuration either way. */
const tokenType = z.enum(["idToken", "customToken"]);
const expand = expandField(playerExpandable);

/** The player linked to a provider identity, in the core shape with its latest intents; 404 when none is. */
async function linkedPlayer(db: Queryable, ctx: ProjectContext, provider: string, externalUserId: string, expand: readonly string[] | undefined) {
  const found = await findIdentity(db, ctx, provider, externalUserId);
  if (!found) throw missing(`No player is linked to this ${provider} user ('${externalUserId.slice(0, 200)}').`);
  return presentPlayer(db, ctx, found.player, expand);
}

export const verifyOAuthToken = defineOperation({
  operationId: "verifyOAuthToken",
  method: "POST",
  path: "/iam/v1/oauth/verify",
  summary: "Verify a provider's token and retrieve the player linked to its identity",
  tag,
  input: z.strictObject({ provider: providerParam, token: tokenField(), tokenType, expand }),
  response: playerResponse,
  run: async ({ db, project, input }) => {
    const identity = await verifyProviderToken(db, project, input.provider, input.token);
    return linkedPlayer(db, project, input.provider, identity.externalUserId, input.expand);
  },
});

export const verifyProviderTokenOperation = defineOperation({
  operationId: "verifyOAuth",
  method: "POST",
  path: "/iam/v1/oauth/{provider}/verify",
  summary: "Verify a provider's token and retrieve its player (deprecated: POST /iam/v1/oauth/verify)",
  tag,
  input: z.strictObject({ token: tokenField(), tokenType: tokenType.optional(), expand }),
  response: playerResponse,
  run: async ({ db, project, params, input }) => {
    const provider = pathProvider(params.provider);
    const identity = await verifyProviderToken(db, project, provider, input.token);
    return linkedPlayer(db, project, provider, identity.externalUserId, input.expand);
  },
});

export const authorizeWithProvider = defineOperation({
  operationId: "authorizeWithOAuthToken",
  method: "POST",
  path: "/iam/v1/oauth/{provider}/authorize",
  summary: "Sign a player in with a provider's token: finds or creates the player and opens a session",
  tag,
  input: z.strictObject({ token: tokenField(), tokenType: tokenType.optional() }),
  response: z.object({ playerId: z.string(), token: z.string(), refreshToken: z.string() }),
  run: async ({ db, project, params, input }) => {
    const provider = pathProvider(params.provider);
    const identity = await verifyProviderToken(db, project, provider, input.token);
    const { player } = await findOrCreatePlayer(db, project, provider, identity);
    const session = await openSession(db, project, player.id, provider);
    return { playerId: player.id, token: session.token, refreshToken: session.refreshToken };
  },
});

export const getPlayerByExternalId = defineOperation({
  operationId: "getPlayerByExternalId",
  method: "GET",
  path: "/iam/v1/oauth/{provider}/user/{external_user_id}",
  summary: "The player linked to a provider's user id",
  tag,
  input: z.strictObject({ expand }),
  response: playerResponse,
  run: async ({ db, project, params, input }) => {
    const provider = params.provider ?? "";
    // Any identity provider may be looked up (password and wallet identities too), not only configurable ones.
    if (!/^[A-Za-z_]{1,40}$/.test(provider)) throw notFound("provider", provider);
    return linkedPlayer(db, project, provider, params.external_user_id ?? "", input.expand);
  },
});

export const authorizePlayer = defineOperation({
  operationId: "authorize",
  method: "POST",
  path: "/iam/v1/authorize",
  summary: "The authenticated player a player token (from sign-up, login or a provider sign-in) belongs to",
  tag,
  input: z.strictObject({ authorizationCode: z.string().min(1, "Expected a player token").max(16_384) }),
  response: authPlayerResponse,
  // The same check as GET /iam/v1/auth/verify, the token named as the SDK sends it.
  run: async ({ db, project, input }) => authPlayer(db, await playerOfToken(db, project, await verifyTokenFor(db, project, input.authorizationCode, "authorizationCode"))),
});

export const providerOperations = [
  createOAuthConfig,
  createAuthConfig,
  listOAuthConfig,
  getOAuthConfig,
  deleteOAuthConfig,
  verifyOAuthToken,
  verifyProviderTokenOperation,
  authorizeWithProvider,
  getPlayerByExternalId,
  authorizePlayer,
];
