import crypto from "node:crypto";
import { expect } from "vitest";
import { call, type ApiResponse } from "./api";

/** A client address in a /64 of its own (documentation range): per-address limits group IPv6 by /64, so they count only this test's calls. */
export const address = () => `2001:db8:${crypto.randomBytes(4).toString("hex").replace(/(.{4})/, "$1:")}::1`;
export const from = (ip = address()) => ({ "x-forwarded-for": ip });

export const newEmail = (tag = "player") => `${tag}-${crypto.randomUUID().slice(0, 8)}@Game.example`;
export const PASSWORD = "correct horse battery";

/** Signs a player up with the publishable key in Basic auth (what the spec says), JSON or form-encoded. */
export async function signUp(key: string, body: Record<string, unknown> = {}, encoding: "json" | "form" = "json"): Promise<ApiResponse> {
  const payload = { email: newEmail(), password: PASSWORD, name: "Ada", ...body };
  return call("POST", "/iam/v1/auth/signup", { key, basic: true, headers: from(), ...(encoding === "json" ? { json: payload } : { form: payload }) });
}

export async function logIn(key: string, email: string, password = PASSWORD, ip = address(), path = "/iam/v1/auth/login"): Promise<ApiResponse> {
  return call("POST", path, { key, basic: true, headers: from(ip), json: { email, password } });
}

/** A signed-up player: its email, id and tokens. */
export async function signedUp(key: string, body: Record<string, unknown> = {}) {
  const res = await signUp(key, body);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return { email: res.body.player.email as string, playerId: res.body.player.id as string, token: res.body.token as string, refreshToken: res.body.refreshToken as string };
}

/** Waits, if needed, so the next `seconds` fall in one fixed 60-second rate-limit window. */
export async function withinOneMinuteWindow(seconds = 10) {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < seconds * 1000) await new Promise((r) => setTimeout(r, left + 50));
}
