import { getDb, type Db } from "@/lib/db/client";
import { refreshAfterCommit } from "@/lib/http/after-commit";
import { listEnvelope } from "@/lib/http/list";
import { defineOperation } from "@/lib/http/operation";
import { listResponse } from "@/lib/http/resource";
import { relayIntent, waitForLanding } from "@/lib/intents/dispatch";
import type { IntentRow } from "@/lib/intents/service";
import type { ProjectContext } from "@/lib/tenant";
import { presentSession, presentSessions } from "./present";
import {
  createSessionInput,
  getSessionInput,
  listSessionsInput,
  revokeSessionInput,
  sessionResponse,
  sessionSignatureInput,
  type SessionExpand,
} from "./schema";
import * as sessions from "./service";
import { getSession as findSession } from "@/lib/session-keys/service";

const tag = "Sessions";

/**
 * The session after a write: its new intent handed to the relay (or, awaiting the owner's signature, left for it);
 * with `optimistic`, answered once that intent has landed, as transaction intents are.
 */
async function afterWrite(db: Db, project: ProjectContext, sessionId: string, intent: IntentRow | null, optimistic: boolean, expand: SessionExpand, origin?: string) {
  if (intent && optimistic) {
    refreshAfterCommit(async () => {
      const root = await getDb();
      await waitForLanding(root, intent);
      return presentSession(root, project, await findSession(root, project, sessionId), expand, origin);
    });
  }
  if (intent) await relayIntent(db, intent, optimistic);
  return presentSession(db, project, await findSession(db, project, sessionId), expand, origin);
}

export const createSession = defineOperation({
  operationId: "createSession",
  cost: "chain",
  method: "POST",
  path: "/v1/sessions",
  summary:
    "Register a session key on the player's account on a chain (created when missing): a registerSessionKey call, signed by the service (custodial) or by the owner (nextAction), sponsored under policy (account_functions rule) or paid by the account",
  tag,
  input: createSessionInput,
  response: sessionResponse,
  run: async ({ db, project, input, origin, headers }) => {
    sessions.checkBehalfOf(project, headers?.get("x-behalf-of-project"), input["X-Behalf-Of-Project"]);
    const { session, intent } = await sessions.createSession(db, project, input);
    return afterWrite(db, project, session.id, intent, input.optimistic ?? false, input.expand, origin);
  },
});

export const listSessions = defineOperation({
  operationId: "getPlayerSessions",
  cost: "chain",
  method: "GET",
  path: "/v1/sessions",
  summary: "List a player's session keys (optionally one account's), newest first",
  tag,
  input: listSessionsInput,
  response: listResponse(sessionResponse),
  run: async ({ db, project, input, path, origin }) => {
    const { rows, total } = await sessions.listSessions(db, project, input);
    return listEnvelope(path, input, await presentSessions(db, project, rows, input.expand, origin), total);
  },
});

export const getSession = defineOperation({
  operationId: "getSession",
  cost: "chain",
  method: "GET",
  path: "/v1/sessions/{id}",
  summary: "Retrieve a session key: isActive follows the chain",
  tag,
  input: getSessionInput,
  response: sessionResponse,
  run: async ({ db, project, params, input, origin }) => presentSession(db, project, await findSession(db, project, params.id), input.expand, origin),
});

export const revokeSession = defineOperation({
  operationId: "revokeSession",
  cost: "chain",
  method: "POST",
  path: "/v1/sessions/revoke",
  summary:
    "Revoke a player's session key on a chain: a revokeSessionKey call signed like the registration; an unsigned registration is cancelled instead, one the chain no longer holds active is marked revoked",
  tag,
  input: revokeSessionInput,
  response: sessionResponse,
  run: async ({ db, project, input, origin, headers }) => {
    sessions.checkBehalfOf(project, headers?.get("x-behalf-of-project"), input["X-Behalf-Of-Project"]);
    const { session, intent } = await sessions.revokeSession(db, project, input);
    return afterWrite(db, project, session.id, intent, input.optimistic ?? false, input.expand, origin);
  },
});

export const signSession = defineOperation({
  operationId: "signatureSession",
  cost: "chain",
  method: "POST",
  path: "/v1/sessions/{id}/signature",
  summary: "Submit the owner's signature of the userOperationHash of the session's intent awaiting one (registration or revocation); checked, then relayed",
  tag,
  input: sessionSignatureInput,
  response: sessionResponse,
  run: async ({ db, project, params, input, origin }) => {
    const { session, intent } = await sessions.signSession(db, project, params.id, input.signature as `0x${string}`);
    return afterWrite(db, project, session.id, intent, input.optimistic ?? false, input.expand, origin);
  },
});

export const sessionOperations = [createSession, listSessions, getSession, revokeSession, signSession];
