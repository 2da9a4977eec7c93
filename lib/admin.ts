import crypto from "node:crypto";
import { ApiError } from "@/lib/http/errors";
import { bearerToken } from "@/lib/http/auth";
import type { AuthStrategy } from "@/lib/http/principals";
import { dataDir } from "@/lib/config";
import { advertiseAdmin } from "@/lib/db/embedded";
import { sameSecret } from "@/lib/keys/encryption";

const state = globalThis as unknown as { __adminToken?: string };

/** A server owning the embedded database lets the local CLI reach it with a token only `.data/` holds. */
export function enableLocalAdmin(host: string, port: string) {
  state.__adminToken = crypto.randomBytes(32).toString("hex");
  const reachable = host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host.includes(":") ? `[${host}]` : host;
  advertiseAdmin(dataDir(), `http://${reachable}:${port}/api/admin`, state.__adminToken);
}

export function isAdminToken(presented: string | null): boolean {
  const expected = state.__adminToken;
  if (!expected || !presented) return false;
  return sameSecret(presented, expected);
}

/** The local CLI's token (only `.data/` holds it). Anyone else gets a 404, as if the route did not exist. */
export const adminToken: AuthStrategy<{ kind: "admin" }, null> = {
  security: [],
  apiRequest: false,
  async authenticate(_db, { request }) {
    if (!isAdminToken(bearerToken(request))) throw new ApiError(404, "invalid_request_error", "Not found.");
    return { principal: { kind: "admin" }, project: null };
  },
};
