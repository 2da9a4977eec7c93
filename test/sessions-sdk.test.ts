import Openfort from "@openfort/openfort-node";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ProjectWithKeys } from "@/lib/projects/service";
import { call, newProject } from "./helpers/api";
import { clientOf } from "./helpers/chain";
import { routeServer } from "./helpers/sdk-server";

/** The official SDK, unchanged, against the real route handlers (test/helpers/sdk-server.ts). */
let server: Awaited<ReturnType<typeof routeServer>>;
let baseUrl: string;
let project: ProjectWithKeys;

beforeAll(async () => {
  project = await newProject("sessions sdk");
  server = await routeServer();
  baseUrl = server.url;
});

afterAll(() => server.close());

describe("the official SDK's sessions", () => {
  it("creates (custodial and owner-held), signs, lists, gets and revokes sessions", async () => {
    const key = project.keys.test.secret;
    const openfort = new Openfort(key, baseUrl);
    const { body: policy } = await call("POST", "/v1/policies", { key, json: { name: "self", chainId: 31337, strategy: { sponsorSchema: "pay_for_user" } } });
    await call("POST", "/v1/policy_rules", { key, json: { policy: policy.id, type: "account_functions" } });
    const player = await openfort.players.create({ name: "sdk sessions" });
    const now = Number((await clientOf(31337).getBlock()).timestamp);
    const sessionKey = privateKeyToAccount(generatePrivateKey()).address;

    // Without behalfOf the SDK sends the header's text "undefined": it must not be taken for a project.
    const created = await openfort.sessions.create({ player: player.id, address: sessionKey, chainId: 31337, validAfter: now, validUntil: now + 3600, limit: 2, policy: policy.id, optimistic: true });
    expect(created).toMatchObject({ id: expect.stringMatching(/^ses_/), isActive: true, address: sessionKey, validUntil: String(now + 3600), limit: 2 });
    await expect(openfort.sessions.create({ player: player.id, address: sessionKey, chainId: 31337, validAfter: now, validUntil: now + 3600 }, "pro_someone_else")).rejects.toMatchObject({ code: 403 });

    const owner = privateKeyToAccount(generatePrivateKey());
    const other = await openfort.players.create({ name: "sdk owner-held" });
    const pending = await openfort.sessions.create({ player: other.id, address: sessionKey, chainId: 31337, externalOwnerAddress: owner.address, validAfter: now, validUntil: now + 3600, policy: policy.id }, project.id);
    expect(pending.isActive).toBe(false);
    const hash = pending.nextAction!.payload!.userOperationHash as `0x${string}`;
    const signed = await openfort.sessions.signature({ id: pending.id, signature: await owner.signMessage({ message: { raw: hash } }) });
    expect(signed.id).toBe(pending.id);

    const listed = await openfort.sessions.list({ player: player.id, expand: ["transactionIntents"] as never });
    expect(listed.total).toBe(1);
    expect(listed.data[0]).toMatchObject({ id: created.id, isActive: true });
    expect(listed.data[0]!.transactionIntents?.[0]).toMatchObject({ id: created.transactionIntents![0]!.id });
    expect(await openfort.sessions.get({ id: created.id })).toMatchObject({ id: created.id, isActive: true });

    const revoked = await openfort.sessions.revoke({ player: player.id, address: sessionKey, chainId: 31337, policy: policy.id, optimistic: true });
    expect(revoked).toMatchObject({ id: created.id, isActive: false });
  }, 90_000);
});
