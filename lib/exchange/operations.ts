import { z } from "zod";
import { getDb } from "@/lib/db/client";
import { refreshAfterCommit } from "@/lib/http/after-commit";
import { defineOperation } from "@/lib/http/operation";
import { relayIntent, waitForLanding } from "@/lib/intents/dispatch";
import { presentIntent } from "@/lib/intents/present";
import { intentResponse } from "@/lib/intents/schema";
import { exchangeSettingsInput, exchangeSettingsResponse, quoteResponse, swapInput } from "./schema";
import * as exchange from "./service";
import { deleteExchangeSettings, getExchangeSettings, setExchangeSettings } from "./settings";

const tag = "Exchange";

export const quoteSwap = defineOperation({
  operationId: "quoteSwap",
  cost: "chain",
  method: "POST",
  path: "/v1/exchange/quote",
  summary:
    "Quote a token swap on the chain's exchange: the best route within maxHops, the expected amount (EXACT_INPUT: the output; EXACT_OUTPUT: the input, fee included), its slippage bound, the service fee and the estimated gas",
  tag,
  input: swapInput,
  response: quoteResponse,
  run: async ({ db, project, input }) => exchange.quoteSwap(db, project, input),
});

export const createSwap = defineOperation({
  operationId: "createSwap",
  cost: "chain",
  method: "POST",
  path: "/v1/exchange",
  summary: "Swap tokens: a transaction intent of the account (fee, approve and swap in one operation), sponsored under policy or paid by the account",
  tag,
  input: swapInput,
  response: intentResponse,
  run: async ({ db, project, input, origin }) => {
    const intent = await exchange.createSwap(db, project, input);
    const optimistic = input.optimistic ?? false;
    if (optimistic) refreshAfterCommit(async () => presentIntent(await getDb(), project, await waitForLanding(await getDb(), intent), undefined, origin));
    return presentIntent(db, project, await relayIntent(db, intent, optimistic), undefined, origin);
  },
});

export const getExchangeFee = defineOperation({
  operationId: "getExchangeSettings",
  method: "GET",
  path: "/v1/settings/exchange",
  summary: "This mode's service fee on swaps (zero when none is set)",
  tag: "Settings",
  input: z.strictObject({}),
  response: exchangeSettingsResponse,
  run: async ({ db, project }) => getExchangeSettings(db, project),
});

export const updateExchangeFee = defineOperation({
  operationId: "updateExchangeSettings",
  method: "POST",
  path: "/v1/settings/exchange",
  summary: "Set this mode's service fee on swaps: basis points of the input, sent to feeRecipient in the swap's own operation",
  tag: "Settings",
  input: exchangeSettingsInput,
  response: exchangeSettingsResponse,
  run: async ({ db, project, input }) => setExchangeSettings(db, project, input),
});

export const removeExchangeFee = defineOperation({
  operationId: "removeExchangeSettings",
  method: "DELETE",
  path: "/v1/settings/exchange",
  summary: "Stop taking a service fee on this mode's swaps",
  tag: "Settings",
  input: z.strictObject({}),
  response: exchangeSettingsResponse.extend({ deleted: z.literal(true) }),
  run: async ({ db, project }) => deleteExchangeSettings(db, project),
});

export const exchangeOperations = [quoteSwap, createSwap, getExchangeFee, updateExchangeFee, removeExchangeFee];
