import { createSiweMessage } from "viem/siwe";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/lib/db/client";
import { verifyPlayerToken } from "@/lib/iam/tokens";
import type { ProjectWithKeys } from "@/lib/projects/service";
import { call, expectError, newProject } from "./helpers/api";
import { from } from "./helpers/siwe-fixtures";

let project: ProjectWithKeys;
let pk: string;
beforeAll(async () => {
  project = await newProject("siwe");
  pk = project.keys.test.publishable;
  // The game's domain, allowed for its Sign-In with Ethereum messages in this mode.
  const configured = await call("POST", "/iam/v1/siwe/settings", { key: project.keys.test.secret, json: { domains: ["game.example"] } });
  expect(configured.status, JSON.stringify(configured.body)).toBe(200);
});

const wallet = () => privateKeyToAccount(generatePrivateKey());

async function nonceFor(address: string, key = pk, path = "/iam/v1/siwe/init") {
  const res = await call("POST", path, { key, basic: key.startsWith("pk_"), form: { address } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.nonce as string;
}

const messageFor = (address: `0x${string}`, nonce: string, extra: Partial<Parameters<typeof createSiweMessage>[0]> = {}) =>
  createSiweMessage({ domain: "game.example", address, uri: "https://game.example/login", version: "1", chainId: 31337, nonce, statement: "Sign in to the game", ...extra });

async function signIn(account: PrivateKeyAccount, key = pk) {
  const message = messageFor(account.address, await nonceFor(account.address, key));
  return call("POST", "/iam/v1/siwe/authenticate", {
    key,
    basic: true,
    headers: from(),
    json: { message, signature: await account.signMessage({ message }), walletClientType: "metamask", connectorType: "injected" },
  });
}

describe("Sign-In with Ethereum", () => {
  it("signs a wallet up, then in again as the same player, with a player token for the project and mode", async () => {
    const account = wallet();
    const first = await signIn(account);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body.player).toMatchObject({ object: "player", linkedAccounts: [{ provider: "wallet", externalUserId: account.address.toLowerCase(), disabled: false }] });
    const claims = await verifyPlayerToken(await getDb(), first.body.token);
    expect(claims).toMatchObject({ projectId: project.id, livemode: false, playerId: first.body.player.id });
    expect(first.body.refreshToken).toMatch(/^pss_/);

    const again = await signIn(account);
    expect(again.body.player.id).toBe(first.body.player.id);
    // The core API sees the same player.
    expect((await call("GET", `/v1/players/${first.body.player.id}`, { key: project.keys.test.secret })).status).toBe(200);
  });

  it("uses a nonce once, for its address, project and mode, within its window; a forged signature does not burn it", async () => {
    const account = wallet();
    const nonce = await nonceFor(account.address);
    const message = messageFor(account.address, nonce);
    const forged = await wallet().signMessage({ message });
    expect(expectError(await call("POST", "/iam/v1/siwe/authenticate", { key: pk, basic: true, json: { message, signature: forged } }), 401).message).toMatch(/signature/);
    const signature = await account.signMessage({ message });
    expect((await call("POST", "/iam/v1/siwe/authenticate", { key: pk, basic: true, headers: from(), form: { message, signature } })).status).toBe(200);
    expect(expectError(await call("POST", "/iam/v1/siwe/authenticate", { key: pk, basic: true, json: { message, signature } }), 401).message).toMatch(/nonce/);

    // Another address's nonce, another project's, the other mode's.
    const other = wallet();
    const stolen = messageFor(other.address, await nonceFor(account.address));
    expect(expectError(await call("POST", "/iam/v1/siwe/authenticate", { key: pk, basic: true, json: { message: stolen, signature: await other.signMessage({ message: stolen }) } }), 401).message).toMatch(/nonce/);
    const elsewhere = await newProject("siwe elsewhere");
    const foreign = messageFor(account.address, await nonceFor(account.address, elsewhere.keys.test.publishable));
    expect(expectError(await call("POST", "/iam/v1/siwe/authenticate", { key: pk, basic: true, json: { message: foreign, signature: await account.signMessage({ message: foreign }) } }), 401).message).toMatch(/nonce/);
    // A live message (live domains configured, a live chain) with a test-mode nonce.
    await call("POST", "/iam/v1/siwe/settings", { key: project.keys.live.secret, json: { domains: ["game.example"] } });
    const live = messageFor(account.address, await nonceFor(account.address), { chainId: 31339 });
    const liveRes = await call("POST", "/iam/v1/siwe/authenticate", { key: project.keys.live.publishable, basic: true, json: { message: live, signature: await account.signMessage({ message: live }) } });
    expect(expectError(liveRes, 401).message).toMatch(/nonce/);

    // Expired, and not yet valid.
    const expired = messageFor(account.address, await nonceFor(account.address), { expirationTime: new Date(Date.now() - 60_000) });
    expect(expectError(await call("POST", "/iam/v1/siwe/authenticate", { key: pk, basic: true, json: { message: expired, signature: await account.signMessage({ message: expired }) } }), 401).message).toMatch(/validity/);
    const early = messageFor(account.address, await nonceFor(account.address), { notBefore: new Date(Date.now() + 3_600_000) });
    expectError(await call("POST", "/iam/v1/siwe/authenticate", { key: pk, basic: true, json: { message: early, signature: await account.signMessage({ message: early }) } }), 401);
  });

  it("links and unlinks wallets of the signed-in player, never another player's wallet nor the last one", async () => {
    const first = wallet();
    const signedIn = (await signIn(first)).body;
    const second = wallet();
    const nonce = (await call("POST", "/iam/v1/siwe/init/link", { key: signedIn.token, json: { address: second.address } })).body.nonce;
    const message = messageFor(second.address, nonce);
    const linked = await call("POST", "/iam/v1/siwe/link", { key: signedIn.token, json: { message, signature: await second.signMessage({ message }) } });
    expect(linked.status, JSON.stringify(linked.body)).toBe(200);
    expect(linked.body.linkedAccounts.map((a: { externalUserId: string }) => a.externalUserId)).toEqual([first.address.toLowerCase(), second.address.toLowerCase()]);

    // A wallet that signed another player up cannot be taken.
    const taken = wallet();
    await signIn(taken);
    const takenMessage = messageFor(taken.address, await nonceFor(taken.address, signedIn.token, "/iam/v1/siwe/init/link"));
    expectError(await call("POST", "/iam/v1/siwe/link", { key: signedIn.token, json: { message: takenMessage, signature: await taken.signMessage({ message: takenMessage }) } }), 409);

    const unlinked = await call("POST", "/iam/v1/siwe/unlink", { key: signedIn.token, form: { address: first.address } });
    expect(unlinked.body.linkedAccounts).toHaveLength(1);
    expectError(await call("POST", "/iam/v1/siwe/unlink", { key: signedIn.token, json: { address: second.address } }), 409);
    expect(expectError(await call("POST", "/iam/v1/siwe/unlink", { key: signedIn.token, json: { address: first.address } }), 400).details?.address).toBeDefined();
    // Linking needs the player's token, not a key.
    expectError(await call("POST", "/iam/v1/siwe/unlink", { key: pk, json: { address: second.address } }), 401);
  });

  it("answers bad input with 400s naming the parameter, and no key with 401", async () => {
    expect(expectError(await call("POST", "/iam/v1/siwe/init", { key: pk, basic: true, json: { address: "0x123" } }), 400).details?.address).toBeDefined();
    expect(expectError(await call("POST", "/iam/v1/siwe/authenticate", { key: pk, basic: true, json: { message: "hello", signature: "0x00" } }), 400).details?.message).toBeDefined();
    expect(expectError(await call("POST", "/iam/v1/siwe/authenticate", { key: pk, basic: true, json: { message: "hello", signature: "nothex" } }), 400).details?.signature).toBeDefined();
    expectError(await call("POST", "/iam/v1/siwe/init", { json: { address: wallet().address } }), 401);
  });
});
