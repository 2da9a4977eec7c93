import Openfort from "@openfort/openfort-node";
import type { Address } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { smartAccountAbi } from "@/contracts/artifacts";
import type { ProjectWithKeys } from "@/lib/projects/service";
import { call, expectError, newProject, waitForLanding } from "./helpers/api";
import { clientOf } from "./helpers/chain";
import { routeServer } from "./helpers/sdk-server";

let project: ProjectWithKeys;
let key: string;
let policy: { id: string };
let sdkServer: Awaited<ReturnType<typeof routeServer>>;

const pendingOwner = (address: string) => clientOf(31337).readContract({ address: address as Address, abi: smartAccountAbi, functionName: "pendingOwner" });
interface PlayersApi {
  requestTransferAccountOwnership(id: string, body: { policy: string; chainId: number; newOwnerAddress: string }): Promise<{ id: string }>;
  cancelTransferAccountOwnership(id: string, body: { policy: string; chainId: number }): Promise<{ id: string }>;
}

const newAddress = () => privateKeyToAccount(generatePrivateKey()).address;

beforeAll(async () => {
  project = await newProject("player ownership");
  key = project.keys.test.secret;
  ({ body: policy } = await call("POST", "/v1/policies", { key, json: { name: "self", chainId: 31337, strategy: { sponsorSchema: "pay_for_user" } } }));
  await call("POST", "/v1/policy_rules", { key, json: { policy: policy.id, type: "account_functions" } });
  sdkServer = await routeServer();
});

afterAll(() => sdkServer?.close());

describe("ownership transfer by player id", () => {
  it("requests a transfer of the player's account on the chain (JSON), then cancels it (form), both landing", async () => {
    const { body: account } = await call("POST", "/v1/accounts", { key, json: { chainId: 31337 } });
    const player = account.player.id;
    const newOwner = newAddress();

    const requested = await call("POST", `/v1/players/${player}/request_transfer_ownership`, { key, json: { policy: policy.id, chainId: 31337, newOwnerAddress: newOwner } });
    expect(requested.status, JSON.stringify(requested.body)).toBe(200);
    expect(requested.body).toMatchObject({ object: "transactionIntent", account: { id: account.id }, player: { id: player }, policy: { id: policy.id }, interactions: [{ functionName: "transferOwnership" }] });
    expect((await waitForLanding(key, requested.body.id)).response.status).toBe(1);
    expect(await pendingOwner(account.address)).toBe(newOwner);

    const cancelled = await call("POST", `/v1/players/${player}/cancel_transfer_ownership`, { key, form: { policy: policy.id, chainId: "31337" } });
    expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
    expect(cancelled.body).toMatchObject({ account: { id: account.id }, interactions: [{ functionName: "cancelOwnershipTransfer" }] });
    expect((await waitForLanding(key, cancelled.body.id)).response.status).toBe(1);
    expect(await pendingOwner(account.address)).toBe("0x0000000000000000000000000000000000000000");
  }, 60_000);

  it("takes the request in form encoding too, and the SDK's optional player field when it is the path's", async () => {
    const { body: account } = await call("POST", "/v1/accounts", { key, json: { chainId: 31337 } });
    const player = account.player.id;
    const newOwner = newAddress();
    const res = await call("POST", `/v1/players/${player}/request_transfer_ownership`, { key, form: { policy: policy.id, chainId: "31337", newOwnerAddress: newOwner, player } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect((await waitForLanding(key, res.body.id)).response.status).toBe(1);
    expect(await pendingOwner(account.address)).toBe(newOwner);

    const other = await call("POST", `/v1/players/${player}/cancel_transfer_ownership`, { key, json: { policy: policy.id, chainId: 31337, player: "pla_someone_else" } });
    expect(expectError(other, 400).details?.player).toMatchObject({ value: "pla_someone_else" });
  }, 60_000);

  it("works through the official SDK's PlayersApi (requestTransferAccountOwnership, cancelTransferAccountOwnership)", async () => {
    const openfort = new Openfort(key, sdkServer.url);
    // The SDK's players wrapper does not re-export these two; its generated PlayersApi (what it wraps) has them.
    const players = (openfort.players as unknown as { api: PlayersApi }).api;
    const { body: account } = await call("POST", "/v1/accounts", { key, json: { chainId: 31337 } });
    const newOwner = newAddress();
    const requested = await players.requestTransferAccountOwnership(account.player.id, { policy: policy.id, chainId: 31337, newOwnerAddress: newOwner });
    expect(requested).toMatchObject({ id: expect.stringMatching(/^tin_/), account: { id: account.id } });
    expect((await waitForLanding(key, requested.id)).response.status).toBe(1);
    expect(await pendingOwner(account.address)).toBe(newOwner);
    const cancelled = await players.cancelTransferAccountOwnership(account.player.id, { policy: policy.id, chainId: 31337 });
    expect((await waitForLanding(key, cancelled.id)).response.status).toBe(1);
    expect(await pendingOwner(account.address)).toBe("0x0000000000000000000000000000000000000000");
    await expect(players.cancelTransferAccountOwnership(account.player.id, { policy: policy.id, chainId: 31338 })).rejects.toMatchObject({ code: 404 });
  }, 60_000);

  it("asks the owner of an owner-held account to sign, like the account endpoint", async () => {
    const owner = privateKeyToAccount(generatePrivateKey());
    const { body: account } = await call("POST", "/v1/accounts", { key, json: { chainId: 31337, externalOwnerAddress: owner.address } });
    const newOwner = newAddress();
    const res = await call("POST", `/v1/players/${account.player.id}/request_transfer_ownership`, { key, json: { policy: policy.id, chainId: 31337, newOwnerAddress: newOwner } });
    expect(res.body.nextAction, JSON.stringify(res.body)).toMatchObject({ type: "sign_with_wallet" });
    const signature = await owner.signMessage({ message: { raw: res.body.nextAction.payload.userOperationHash } });
    expect((await call("POST", `/v1/transaction_intents/${res.body.id}/signature`, { key, json: { signature } })).status).toBe(200);
    expect((await waitForLanding(key, res.body.id)).response.status).toBe(1);
    expect(await pendingOwner(account.address)).toBe(newOwner);
  }, 60_000);

  it("answers 404 for an unknown player and a 404 naming the chain when the player has no account there", async () => {
    const body = { policy: policy.id, chainId: 31337, newOwnerAddress: newAddress() };
    const unknown = expectError(await call("POST", "/v1/players/pla_nobody/request_transfer_ownership", { key, json: body }), 404);
    expect(unknown.message).toMatch(/pla_nobody/);
    expectError(await call("POST", "/v1/players/pla_nobody/cancel_transfer_ownership", { key, json: { policy: policy.id, chainId: 31337 } }), 404);

    // The player has an account on 31337 only.
    const { body: account } = await call("POST", "/v1/accounts", { key, json: { chainId: 31337 } });
    const player = account.player.id;
    const elsewhere = expectError(await call("POST", `/v1/players/${player}/request_transfer_ownership`, { key, json: { ...body, chainId: 31338 } }), 404);
    expect(elsewhere.message).toBe(`Player ${player} has no account on chain 31338.`);
    const cancelElsewhere = expectError(await call("POST", `/v1/players/${player}/cancel_transfer_ownership`, { key, form: { policy: policy.id, chainId: "31338" } }), 404);
    expect(cancelElsewhere.message).toMatch(/no account on chain 31338/);

    // Another project's player is unknown here.
    const other = await newProject("someone else");
    const { body: theirs } = await call("POST", "/v1/accounts", { key: other.keys.test.secret, json: { chainId: 31337 } });
    expectError(await call("POST", `/v1/players/${theirs.player.id}/request_transfer_ownership`, { key, json: body }), 404);
  });

  it("refuses missing or bad parameters with a 400 naming each", async () => {
    const { body: account } = await call("POST", "/v1/accounts", { key, json: { chainId: 31337 } });
    const path = `/v1/players/${account.player.id}/request_transfer_ownership`;
    const missing = expectError(await call("POST", path, { key, json: {} }), 400);
    expect(Object.keys(missing.details ?? {}).sort()).toEqual(["chainId", "newOwnerAddress", "policy"]);
    expect(expectError(await call("POST", path, { key, form: { chainId: "31337", newOwnerAddress: newAddress() } }), 400).details).toHaveProperty("policy");
    expect(expectError(await call("POST", path, { key, json: { policy: policy.id, newOwnerAddress: newAddress() } }), 400).details).toHaveProperty("chainId");
    expect(expectError(await call("POST", path, { key, json: { policy: policy.id, chainId: 31337 } }), 400).details).toHaveProperty("newOwnerAddress");
    expect(expectError(await call("POST", path, { key, json: { policy: policy.id, chainId: 31337, newOwnerAddress: "0x12" } }), 400).details).toHaveProperty("newOwnerAddress");
    expect(expectError(await call("POST", path, { key, json: { policy: policy.id, chainId: 999, newOwnerAddress: newAddress() } }), 400).details).toHaveProperty("chainId");
    const cancel = expectError(await call("POST", `/v1/players/${account.player.id}/cancel_transfer_ownership`, { key, json: {} }), 400);
    expect(Object.keys(cancel.details ?? {}).sort()).toEqual(["chainId", "policy"]);
    // The current owner is no new owner; an unknown policy names the parameter.
    expect(expectError(await call("POST", path, { key, json: { policy: policy.id, chainId: 31337, newOwnerAddress: account.ownerAddress } }), 400).details).toHaveProperty("newOwnerAddress");
    expect(expectError(await call("POST", path, { key, json: { policy: "pol_nope", chainId: 31337, newOwnerAddress: newAddress() } }), 400).details).toHaveProperty("policy");
  });
});
