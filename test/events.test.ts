import Openfort from "@openfort/openfort-node";
import { parseEther } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testTokenAbi, testTokenBytecode } from "@/contracts/artifacts";
import type { ProjectWithKeys } from "@/lib/projects/service";
import { TOPICS } from "@/lib/deliveries/topics";
import { call, expectError, newProject } from "./helpers/api";
import { fundedWallet, mined } from "./helpers/chain";
import { routeServer } from "./helpers/sdk-server";

const CHAIN = 31337;
let project: ProjectWithKeys;
let key: string;
let token: { id: string; address: `0x${string}` };
let devAccount: string;
let player: string;

/** An external developer account whose key the test holds. */
async function externalDeveloperAccount(key: string, privateKey = generatePrivateKey()) {
  const owner = privateKeyToAccount(privateKey);
  const { body } = await call("GET", "/v1/settings/developer_accounts/message_to_sign", { key, query: { address: owner.address } });
  const res = await call("POST", "/v1/settings/developer_accounts", { key, json: { address: owner.address, signature: await owner.signMessage({ message: body.message }), name: "watched" } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return { id: res.body.id as string, owner };
}

beforeAll(async () => {
  project = await newProject("event definitions");
  key = project.keys.test.secret;
  const minter = await fundedWallet(CHAIN);
  const receipt = await mined(CHAIN, await minter.deployContract({ abi: testTokenAbi, bytecode: testTokenBytecode, args: ["Gold", "GOLD"] }));
  const abi = [
    ...testTokenAbi,
    { type: "function", name: "pair", stateMutability: "view", inputs: [], outputs: [{ name: "", type: "uint256" }, { name: "", type: "uint256" }] },
    { type: "function", name: "label", stateMutability: "view", inputs: [], outputs: [{ name: "", type: "string" }] },
  ];
  token = (await call("POST", "/v1/contracts", { key, json: { name: "Gold", chainId: CHAIN, address: receipt.contractAddress, abi } })).body;
  await mined(CHAIN, await minter.writeContract({ address: token.address, abi: testTokenAbi, functionName: "mint", args: [minter.account.address, parseEther("5")] }));
  devAccount = (await externalDeveloperAccount(key)).id;
  player = (await call("POST", "/v1/players", { key, json: { name: "holder" } })).body.id;
});

describe("POST /v1/events", () => {
  it("creates a definition per topic, shown with its monitor", async () => {
    const contract = await call("POST", "/v1/events", {
      key,
      json: { name: "low gold", topic: "balance.contract", contract: token.id, functionName: "balanceOf", functionArgs: ["0x00000000000000000000000000000000000000bb"], threshold: "1000", numberOfBlocks: 3 },
    });
    expect(contract.status, JSON.stringify(contract.body)).toBe(200);
    expect(contract.body).toEqual({
      id: expect.stringMatching(/^eve_/),
      object: "event",
      createdAt: expect.any(Number),
      name: "low gold",
      topic: "balance.contract",
      threshold: "1000",
      contract: { id: token.id },
      functionName: "balanceOf",
      functionArgs: ["0x00000000000000000000000000000000000000bb"],
      developerAccount: null,
      chainId: CHAIN,
      numberOfBlocks: 3,
      deleted: false,
      monitor: { value: null, blockNumber: null, checkedAt: null, state: "armed", belowSinceBlock: null, firedAt: null, error: null },
    });

    const dev = await call("POST", "/v1/events", { key, json: { name: "dev low", topic: "balance.dev_account", developerAccount: devAccount, chainId: CHAIN, threshold: 10 ** 15 } });
    expect(dev.status, JSON.stringify(dev.body)).toBe(200);
    expect(dev.body).toMatchObject({ topic: "balance.dev_account", developerAccount: { id: devAccount }, chainId: CHAIN, threshold: "1000000000000000", numberOfBlocks: 0, contract: null });

    const deposit = await call("POST", "/v1/events", { key, json: { name: "deposit", topic: "balance.project", chainId: CHAIN, threshold: "0001" } });
    expect(deposit.body).toMatchObject({ topic: "balance.project", chainId: CHAIN, threshold: "1", monitor: { state: "armed" } });
    // Without a chain: the project's balance on every chain of the mode, each reading apart (none yet).
    const everywhere = await call("POST", "/v1/events", { key, json: { name: "any chain", topic: "balance.project", threshold: "5" } });
    expect(everywhere.status, JSON.stringify(everywhere.body)).toBe(200);
    expect(everywhere.body).toMatchObject({ topic: "balance.project", chainId: null, threshold: "5", monitor: { state: "armed", value: null, chains: [] } });

    const named = await call("POST", "/v1/events", { key, json: { name: "successes", topic: "transaction_intent.successful" } });
    expect(named.body).toMatchObject({ topic: "transaction_intent.successful", threshold: null, chainId: null, functionArgs: null, numberOfBlocks: 0, monitor: null });
  });

  it("takes form bodies, with functionArgs in bracket notation and ids as arguments", async () => {
    const res = await call("POST", "/v1/events", {
      key,
      form: { name: "player gold", topic: "balance.contract", contract: token.id, functionName: "balanceOf", "functionArgs[0]": player, threshold: "5", numberOfBlocks: "2" },
    });
    // The player has no account on the chain yet: its id cannot be resolved.
    expect(expectError(res, 400).details).toHaveProperty(["functionArgs[0]"]);
    await call("POST", "/v1/accounts", { key, json: { player, chainId: CHAIN } });
    const ok = await call("POST", "/v1/events", {
      key,
      form: { name: "player gold", topic: "balance.contract", contract: token.id, functionName: "balanceOf", "functionArgs[0]": player, threshold: "5", numberOfBlocks: "2" },
    });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body).toMatchObject({ functionArgs: [player], numberOfBlocks: 2, threshold: "5" });
  });

  it("answers 400 naming the field for every bad input", async () => {
    const bad = async (json: Record<string, unknown>, field: string, pattern?: RegExp) => {
      const error = expectError(await call("POST", "/v1/events", { key, json }), 400, "invalid_request_error");
      expect(error.details, `${JSON.stringify(json)} → ${JSON.stringify(error)}`).toHaveProperty([field]);
      if (pattern) expect(`${error.message} ${error.details![field]!.message}`).toMatch(pattern);
      return error;
    };
    const contract = { name: "c", topic: "balance.contract", contract: token.id, functionName: "balanceOf", functionArgs: ["0x00000000000000000000000000000000000000bb"], threshold: "1" };
    await bad({ topic: "test" }, "name");
    await bad({ name: "x".repeat(101), topic: "test" }, "name");
    await bad({ name: "n" }, "topic");
    const unknown = await bad({ name: "n", topic: "balance.everything" }, "topic");
    for (const topic of TOPICS) expect(unknown.message).toContain(topic);
    // Fields the topic does not use, each named.
    const unused = await bad({ name: "n", topic: "test", threshold: "1", chainId: CHAIN, contract: token.id }, "threshold", /not used by topic test/i);
    expect(Object.keys(unused.details!).sort()).toEqual(["chainId", "contract", "threshold"]);
    await bad({ name: "n", topic: "transaction_intent.failed", numberOfBlocks: 1 }, "numberOfBlocks");
    await bad({ name: "n", topic: "balance.project", chainId: CHAIN, threshold: "1", developerAccount: devAccount }, "developerAccount", /not used/i);
    await bad({ name: "n", topic: "balance.dev_account", chainId: CHAIN, threshold: "1", developerAccount: devAccount, functionName: "x" }, "functionName", /not used/i);
    // Required per topic.
    await bad({ name: "n", topic: "balance.project", chainId: CHAIN }, "threshold", /required/i);
    await bad({ name: "n", topic: "balance.dev_account", threshold: "1", chainId: CHAIN }, "developerAccount", /required/i);
    await bad({ ...contract, contract: undefined }, "contract", /required/i);
    await bad({ ...contract, functionName: undefined }, "functionName", /required/i);
    // Thresholds.
    for (const threshold of ["-1", "1.5", "abc", "", 1.5, -3, 2 ** 60, String(2n ** 256n), true]) await bad({ ...contract, threshold }, "threshold");
    expect((await call("POST", "/v1/events", { key, json: { ...contract, threshold: String(2n ** 256n - 1n) } })).status).toBe(200);
    // numberOfBlocks and chains.
    for (const numberOfBlocks of [-1, 10_001, 1.5, "x"]) await bad({ ...contract, numberOfBlocks }, "numberOfBlocks");
    await bad({ name: "n", topic: "balance.project", chainId: 999, threshold: "1" }, "chainId", /unsupported/i);
    await bad({ name: "n", topic: "balance.project", chainId: 31339, threshold: "1" }, "chainId", /live/i);
    await bad({ ...contract, chainId: 31338 }, "chainId", /on chain 31337/);
    // The contract function: missing, not a view, not one integer; arguments by arity and type.
    await bad({ ...contract, functionName: "nope" }, "functionName", /no function named/);
    await bad({ ...contract, functionName: "transfer", functionArgs: ["0x00000000000000000000000000000000000000bb", "1"] }, "functionName", /nonpayable/);
    await bad({ ...contract, functionName: "symbol", functionArgs: [] }, "functionName", /string/);
    await bad({ ...contract, functionName: "pair", functionArgs: [] }, "functionName", /exactly one integer/);
    await bad({ ...contract, functionName: "label", functionArgs: [] }, "functionName", /not exactly one integer/);
    await bad({ ...contract, functionArgs: [] }, "functionArgs", /1 argument/);
    await bad({ ...contract, functionArgs: ["not an address"] }, "functionArgs[0]");
    await bad({ ...contract, functionArgs: ["con_missing"] }, "functionArgs[0]", /No such contract/);
    await bad({ ...contract, topic: "balance.contract", unknownField: 1 }, "unknownField");
  });

  it("refuses another project's or mode's contract and developer account without revealing them", async () => {
    const other = await newProject("someone else");
    const otherKey = other.keys.test.secret;
    const theirs = (await call("POST", "/v1/contracts", { key: otherKey, json: { name: "theirs", chainId: CHAIN, address: token.address, abi: testTokenAbi } })).body.id;
    const theirAccount = (await externalDeveloperAccount(otherKey)).id;
    const liveKey = project.keys.live.secret;
    for (const [k, json, field] of [
      [key, { name: "n", topic: "balance.contract", contract: theirs, functionName: "totalSupply", threshold: "1" }, "contract"],
      [key, { name: "n", topic: "balance.dev_account", developerAccount: theirAccount, chainId: CHAIN, threshold: "1" }, "developerAccount"],
      [liveKey, { name: "n", topic: "balance.contract", contract: token.id, functionName: "totalSupply", threshold: "1" }, "contract"],
      [liveKey, { name: "n", topic: "balance.dev_account", developerAccount: devAccount, chainId: 31339, threshold: "1" }, "developerAccount"],
    ] as const) {
      const error = expectError(await call("POST", "/v1/events", { key: k, json }), 400);
      expect(error.details).toHaveProperty([field]);
      expect(error.message).toMatch(/No such/);
      expect(JSON.stringify(error)).not.toContain(token.address);
    }
    // A deleted developer account cannot be watched.
    const gone = (await externalDeveloperAccount(key)).id;
    await call("DELETE", `/v1/settings/developer_accounts/${gone}`, { key });
    expect(expectError(await call("POST", "/v1/events", { key, json: { name: "n", topic: "balance.dev_account", developerAccount: gone, chainId: CHAIN, threshold: "1" } }), 400).details).toHaveProperty(["developerAccount"]);
  });
});

describe("GET and DELETE /v1/events", () => {
  it("lists newest first (10 by default), filters by exact name and deleted, gets and soft-deletes", async () => {
    const p = await newProject("event lists");
    const k = p.keys.test.secret;
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) ids.push((await call("POST", "/v1/events", { key: k, json: { name: i === 3 ? "special" : `event ${i}`, topic: "test" } })).body.id);
    const page = await call("GET", "/v1/events", { key: k });
    expect(page.body).toMatchObject({ object: "list", url: "/v1/events", start: 0, end: 10, total: 12 });
    expect(page.body.data.map((e: { id: string }) => e.id)).toEqual(ids.slice(2).reverse());
    const asc = await call("GET", "/v1/events", { key: k, query: { order: "asc", limit: 2, skip: 1 } });
    expect(asc.body.data.map((e: { id: string }) => e.id)).toEqual(ids.slice(1, 3));
    expect((await call("GET", "/v1/events", { key: k, query: { name: "special" } })).body.data.map((e: { id: string }) => e.id)).toEqual([ids[3]]);
    expect((await call("GET", "/v1/events", { key: k, query: { name: "spec" } })).body.total).toBe(0);

    expect((await call("GET", `/v1/events/${ids[0]}`, { key: k })).body).toMatchObject({ id: ids[0], name: "event 0", deleted: false });
    expect((await call("DELETE", `/v1/events/${ids[0]}`, { key: k })).body).toEqual({ id: ids[0], object: "event", deleted: true });
    expect((await call("DELETE", `/v1/events/${ids[0]}`, { key: k })).body).toEqual({ id: ids[0], object: "event", deleted: true });
    expect((await call("GET", `/v1/events/${ids[0]}`, { key: k })).body).toMatchObject({ id: ids[0], deleted: true });
    expect((await call("GET", "/v1/events", { key: k, query: { limit: 100 } })).body.total).toBe(11);
    const deleted = await call("GET", "/v1/events", { key: k, query: { deleted: "true" } });
    expect(deleted.body.data.map((e: { id: string }) => e.id)).toEqual([ids[0]]);

    // Another project's or mode's definitions are not found.
    expectError(await call("GET", `/v1/events/${ids[1]}`, { key }), 404);
    expectError(await call("DELETE", `/v1/events/${ids[1]}`, { key: p.keys.live.secret }), 404);
    expectError(await call("GET", "/v1/events", { key: k, query: { limit: 0 } }), 400);
    expectError(await call("GET", "/v1/events", { key: k, query: { deleted: "maybe" } }), 400);
    expectError(await call("PUT", "/v1/events", { key: k }), 405);
  });
});

describe("the official SDK's events (openfort.triggers in 0.6.78)", () => {
  let server: Awaited<ReturnType<typeof routeServer>>;
  beforeAll(async () => void (server = await routeServer()));
  afterAll(() => server.close());

  it("creates, lists, gets and deletes", async () => {
    const openfort = new Openfort(key, server.url);
    const created = await openfort.triggers.create({ name: "sdk dev low", topic: "balance.dev_account" as never, developerAccount: devAccount, chainId: CHAIN, threshold: "42", numberOfBlocks: 1 });
    expect(created).toMatchObject({ id: expect.stringMatching(/^eve_/), topic: "balance.dev_account", threshold: "42", developerAccount: { id: devAccount }, chainId: CHAIN, numberOfBlocks: 1 });
    const contract = await openfort.triggers.create({ name: "sdk gold", topic: "balance.contract" as never, contract: token.id, functionName: "balanceOf", functionArgs: ["0x00000000000000000000000000000000000000bb"], threshold: "1" });
    expect(contract).toMatchObject({ functionName: "balanceOf", contract: { id: token.id } });
    const listed = await openfort.triggers.list({ name: "sdk dev low" });
    expect(listed.data.map((e) => e.id)).toEqual([created.id]);
    expect(await openfort.triggers.get({ id: created.id })).toMatchObject({ id: created.id, threshold: "42" });
    expect(await openfort.triggers.delete(created.id)).toMatchObject({ id: created.id, object: "event", deleted: true });
    // (The wrapper does not send `deleted`, so it lists live definitions only.)
    expect((await openfort.triggers.list({ limit: 100 })).data.map((e) => e.id)).not.toContain(created.id);
    await expect(openfort.triggers.create({ name: "bad", topic: "balance.project" as never, chainId: CHAIN })).rejects.toMatchObject({ code: 400 });
  });
});
