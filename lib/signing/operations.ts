import { z } from "zod";
import { defineOperation } from "@/lib/http/operation";
import { signingLink } from "./auth";
import { linkStatus, submitLinkSignature } from "./service";

const signingStatusResponse = z.object({
  status: z.string(),
  confirmed: z.boolean(),
  final: z.boolean(),
  transactionHash: z.string().nullable(),
  error: z.string().nullable(),
});

/** GET /sign/{id}/status?t=: the intent's progress, for the signing page's polling. */
export const signingLinkStatus = defineOperation({
  operationId: "signingLinkStatus",
  method: "GET",
  path: "/sign/{id}/status",
  summary: "The progress of the intent a signing link opens",
  tag: "Signing page",
  auth: signingLink,
  internal: true,
  input: z.strictObject({ t: z.string() }),
  response: signingStatusResponse,
  run: async ({ db, principal }) => linkStatus(db, principal!.token, principal!.intentId),
});

/** POST /sign/{id}/signature: the owner's signature from the signing page (the token in `?t=` or the body). */
export const signingLinkSignature = defineOperation({
  operationId: "signingLinkSignature",
  cost: "chain",
  method: "POST",
  path: "/sign/{id}/signature",
  summary: "Submit the owner's signature through a signing link",
  tag: "Signing page",
  auth: signingLink,
  internal: true,
  // The signature is checked by the API's own signature schema in submitLinkSignature.
  input: z.strictObject({ t: z.string().optional(), token: z.string().optional(), signature: z.unknown().optional() }),
  response: signingStatusResponse,
  run: async ({ db, principal, input }) => submitLinkSignature(db, principal!.token, principal!.intentId, input),
});
