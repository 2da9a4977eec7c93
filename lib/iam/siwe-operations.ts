import { z } from "zod";
import { addressField, integerField } from "@/lib/http/fields";
import { defineOperation } from "@/lib/http/operation";
import { publishableKey } from "@/lib/http/principals";
import { playerToken, recentPlayerToken } from "./auth";
import { assertMayLink, authPlayerResponse } from "./identities";
import { siweAuthenticate, siweInit, siweLink, siweUnlink } from "./siwe";
import { getSiweSettings, settingsInput, settingsResponse, updateSiweSettings } from "./siwe-settings";

const tag = "Player authentication";

const signatureField = () => z.string().regex(/^0x[0-9a-fA-F]+$/, "Expected a 0x-prefixed hex signature").max(20_000);
const signedMessage = {
  message: z.string().min(1).max(10_000).describe("The EIP-4361 message the wallet signed, exactly as signed."),
  signature: signatureField(),
  /** What client SDKs send along (which wallet, how connected); recorded nowhere, accepted so they work unchanged. */
  walletClientType: z.string().max(100).optional(),
  connectorType: z.string().max(100).optional(),
};

const initResponse = z.object({ address: z.string(), nonce: z.string(), expiresAt: z.number().int() });
const authResponse = z.object({ player: authPlayerResponse, token: z.string(), refreshToken: z.string() });

export const siweInitOperation = defineOperation({
  operationId: "initSIWE",
  method: "POST",
  path: "/iam/v1/siwe/init",
  summary: "A nonce for a Sign-In with Ethereum message",
  tag,
  auth: publishableKey,
  input: z.strictObject({ address: addressField(), chainId: integerField({ min: 1 }).optional() }),
  response: initResponse,
  run: async ({ db, project, input }) => siweInit(db, project, input.address),
});

export const siweAuthenticateOperation = defineOperation({
  operationId: "authenticateSIWE",
  cost: "chain",
  method: "POST",
  path: "/iam/v1/siwe/authenticate",
  summary: "Sign a player in (or up) with a signed Sign-In with Ethereum message",
  tag,
  auth: publishableKey,
  input: z.strictObject(signedMessage),
  response: authResponse,
  run: async ({ db, project, input, clientAddress }) => siweAuthenticate(db, project, input.message, input.signature as `0x${string}`, clientAddress),
});

export const siweInitLinkOperation = defineOperation({
  operationId: "initLinkSIWE",
  method: "POST",
  path: "/iam/v1/siwe/init/link",
  summary: "A nonce for linking a wallet to the signed-in player",
  tag,
  auth: playerToken,
  input: z.strictObject({ address: addressField(), chainId: integerField({ min: 1 }).optional() }),
  response: initResponse,
  run: async ({ db, project, input }) => siweInit(db, project, input.address),
});

export const siweLinkOperation = defineOperation({
  operationId: "linkSIWE",
  cost: "chain",
  method: "POST",
  path: "/iam/v1/siwe/link",
  summary: "Link the wallet that signed the message to the signed-in player",
  tag,
  auth: recentPlayerToken,
  input: z.strictObject(signedMessage),
  response: authPlayerResponse,
  run: async ({ db, project, principal, input }) => {
    await assertMayLink(db, project, principal!.claims.playerId);
    return siweLink(db, project, principal!.claims.playerId, input.message, input.signature as `0x${string}`);
  },
});

export const siweUnlinkOperation = defineOperation({
  operationId: "unlinkSIWE",
  method: "POST",
  path: "/iam/v1/siwe/unlink",
  summary: "Unlink a wallet from the signed-in player",
  tag,
  auth: recentPlayerToken,
  input: z.strictObject({ address: addressField() }),
  response: authPlayerResponse,
  run: async ({ db, project, principal, input }) => siweUnlink(db, project, principal!.claims.playerId, input.address),
});

// With the secret key: where the mode's messages may come from (lib/iam/siwe-settings.ts).
export const getSiweSettingsOperation = defineOperation({
  operationId: "getSIWESettings",
  method: "GET",
  path: "/iam/v1/siwe/settings",
  summary: "The domains and URIs Sign-In with Ethereum messages may come from in this mode",
  tag,
  input: z.strictObject({}),
  response: settingsResponse,
  run: async ({ db, project }) => getSiweSettings(db, project),
});

export const updateSiweSettingsOperation = defineOperation({
  operationId: "updateSIWESettings",
  method: "POST",
  path: "/iam/v1/siwe/settings",
  summary: "Set the domains and URIs Sign-In with Ethereum messages may come from (fields left out keep their value)",
  tag,
  input: settingsInput,
  response: settingsResponse,
  run: async ({ db, project, input }) => updateSiweSettings(db, project, input),
});

export const siweOperations = [
  siweInitOperation,
  siweAuthenticateOperation,
  siweInitLinkOperation,
  siweLinkOperation,
  siweUnlinkOperation,
  getSiweSettingsOperation,
  updateSiweSettingsOperation,
];
