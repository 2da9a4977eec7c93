import { z } from "zod";
import { defineOperation } from "@/lib/http/operation";
import { publishableKey } from "@/lib/http/principals";
import { oauthState } from "./auth";
import { authPlayerResponse } from "./identities";
import { collectGoogleSignin, completeGoogleSignin, startGoogleSignin } from "./google-signin";

const tag = "Player authentication";

export const googleSigninUrl = defineOperation({
  operationId: "getSigninUrl",
  method: "GET",
  path: "/iam/v1/oauth/google/signin_url",
  summary: "Start a Google sign-in in the player's browser: the URL to open and the key to collect the result with",
  tag,
  auth: publishableKey,
  input: z.strictObject({
    redirectTo: z
      .string()
      .max(2000)
      .optional()
      .describe("Where the browser goes once the sign-in is done, with `signin=success&code=…` (or `signin=failed`): one of google's redirectUrls for this mode (the first when left out)."),
  }),
  response: z.object({ url: z.string(), key: z.string(), expiresAt: z.number().int() }),
  run: async ({ db, project, input, origin }) => startGoogleSignin(db, project, origin, input.redirectTo),
});

const page = (title: string, text: string, status: number) =>
  new Response(
    `<!doctype html><html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>${title}</title></head>` +
      `<body style="font-family:system-ui;max-width:32rem;margin:4rem auto;padding:0 1rem"><h1>${title}</h1><p>${text}</p></body></html>`,
    { status, headers: { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" } },
  );
const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export const googleCallback = defineOperation({
  operationId: "googleCallback",
  method: "GET",
  path: "/iam/v1/oauth/google/callback",
  summary: "Where Google sends the player's browser back",
  tag,
  auth: oauthState,
  internal: true,
  input: z.looseObject({ state: z.string(), code: z.string().max(4000).optional(), error: z.string().max(200).optional(), error_description: z.string().max(2000).optional() }),
  response: z.instanceof(Response),
  run: async ({ db, principal, input, origin }) => {
    const outcome = await completeGoogleSignin(db, principal!.signin, origin, input);
    if (outcome.redirectTo) {
      const to = new URL(outcome.redirectTo);
      to.searchParams.set("signin", outcome.ok ? "success" : "failed");
      if (outcome.ok) to.searchParams.set("code", outcome.code);
      // The code is for the game's page alone: not for the Referer of whatever that page loads next.
      return new Response(null, { status: 302, headers: { location: to.href, "cache-control": "no-store", "referrer-policy": "no-referrer" } });
    }
    return outcome.ok
      ? page("Signed in", "You are signed in. You can close this window and return to the game.", 200)
      : page("Sign-in failed", escapeHtml(outcome.error), 400);
  },
});

export const googleToken = defineOperation({
  operationId: "getTokenWithKey",
  method: "GET",
  path: "/iam/v1/oauth/google/token",
  summary: "Collect a finished Google sign-in's player and tokens, once, with its key and the code its browser was given",
  tag,
  auth: publishableKey,
  input: z.strictObject({
    key: z.string().min(1).max(200),
    code: z.string().min(1).max(200).optional().describe("The one-time code the sign-in added to redirectTo in the browser that finished it (required once it succeeded)."),
  }),
  response: z.object({ player: authPlayerResponse, token: z.string(), refreshToken: z.string() }),
  run: async ({ db, project, input }) => collectGoogleSignin(db, project, input.key, input.code),
});

export const googleOperations = [googleSigninUrl, googleToken];
