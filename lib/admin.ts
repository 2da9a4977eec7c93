import crypto from "node:crypto";
import { z } from "zod";
import { badRequest, missing } from "@/lib/errors";
import { bearerToken } from "@/lib/http/auth";
import { defineOperation } from "@/lib/http/operation";
import type { AuthStrategy } from "@/lib/http/principals";
import { dataDir } from "@/lib/config";
import { advertiseAdmin } from "@/lib/db/embedded";
import { sameSecret } from "@/lib/keys/encryption";
import { adminCommand, AdminCommandError, runAdminCommand } from "@/lib/admin-commands";
import { processSingleton } from "@/lib/singleton";

const state = processSingleton("adminToken", () => ({ token: undefined as string | undefined }));

/** A server owning the embedded database lets the local CLI reach it with a token only `.data/` holds. */
export function enableLocalAdmin(host: string, port: string) {
  state.token = crypto.randomBytes(32).toString("hex");
  const reachable = host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host.includes(":") ? `[${host}]` : host;
  advertiseAdmin(dataDir(), `http://${reachable}:${port}/api/admin`, state.token);
}

export function isAdminToken(presented: string | null): boolean {
  const expected = state.token;
  if (!expected || !presented) return false;
  return sameSecret(presented, expected);
}

/** The local CLI's token (only `.data/` holds it). Anyone else gets a 404, as if the route did not exist. */
export const adminToken: AuthStrategy<{ kind: "admin" }, null> = {
  security: [],
  apiRequest: false,
  async authenticate(_db, { request }) {
    if (!isAdminToken(bearerToken(request))) throw missing("Not found.");
    return { principal: { kind: "admin" }, project: null };
  },
};

/**
 * POST /api/admin: the CLI's way in while this server owns the embedded database; 404 for everyone else. Beside the
 * token it checks, above both the http layer and the projects' commands it runs.
 */
export const runAdmin = defineOperation({
  operationId: "runAdminCommand",
  method: "POST",
  path: "/api/admin",
  summary: "Run a CLI command in this server",
  tag: "Admin",
  auth: adminToken,
  internal: true,
  input: adminCommand,
  response: z.unknown(),
  run: async ({ db, input }) => {
    try {
      return await runAdminCommand(db, input);
    } catch (err) {
      if (err instanceof AdminCommandError) throw badRequest(err.message);
      throw err;
    }
  },
});
