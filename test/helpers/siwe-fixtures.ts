import crypto from "node:crypto";
import { createSiweMessage } from "viem/siwe";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { expect } from "vitest";
import { call, type ApiResponse } from "./api";

/** A client address in a /64 of its own (documentation range), so per-address limits count only this test's calls. */
export const address = () => `2001:db8:${crypto.randomBytes(4).toString("hex").replace(/(.{4})/, "$1:")}::1`;
export const from = (ip = address()) => ({ "x-forwarded-for": ip });

export const wallet = () => privateKeyToAccount(generatePrivateKey());

export type MessageFields = Partial<Parameters<typeof createSiweMessage>[0]>;

/** A nonce from /siwe/init (or /siwe/init/link with a player token). */
export async function nonceFor(key: string, address: string, path = "/iam/v1/siwe/init") {
  const res = await call("POST", path, { key, basic: key.startsWith("pk_"), json: { address } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.nonce as string;
}

/** An EIP-4361 message from the game at game.example on the test chain, with `fields` changed. */
export const messageFor = (address: `0x${string}`, nonce: string, fields: MessageFields = {}) =>
  createSiweMessage({ domain: "game.example", address, uri: "https://game.example/login", version: "1", chainId: 31337, nonce, statement: "Sign in to the game", ...fields });

/** Signs `fields`' message with a fresh nonce and posts it to /siwe/authenticate. */
export async function authenticate(pk: string, account: PrivateKeyAccount, fields: MessageFields = {}, ip = address()): Promise<ApiResponse> {
  const message = messageFor(account.address, await nonceFor(pk, account.address), fields);
  return call("POST", "/iam/v1/siwe/authenticate", { key: pk, basic: true, headers: from(ip), json: { message, signature: await account.signMessage({ message }) } });
}
