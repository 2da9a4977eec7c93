import crypto from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { call, expectError, newProject } from "./helpers/api";
import type { ProjectWithKeys } from "@/lib/projects/service";

/** Test vectors of EIP-55 itself: lowercase in, this mixed case out. */
const EIP55 = [
  "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
  "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359",
  "0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB",
  "0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb",
];

/** A lowercase address no other test uses, so registrations in a shared project never collide. */
const freshAddress = () => `0x${crypto.randomBytes(20).toString("hex")}`;

const balanceOf = {
  type: "function",
  name: "balanceOf",
  inputs: [{ name: "owner", type: "address", internalType: "address" }],
  outputs: [{ name: "", type: "uint256", internalType: "uint256" }],
  stateMutability: "view",
};
const transfer = {
  type: "function",
  name: "transfer",
  inputs: [
    { name: "to", type: "address" },
    { name: "amount", type: "uint256" },
  ],
  outputs: [{ name: "", type: "bool" }],
  stateMutability: "nonpayable",
};
const transferEvent = {
  type: "event",
  name: "Transfer",
  anonymous: false,
  inputs: [
    { name: "from", type: "address", indexed: true },
    { name: "to", type: "address", indexed: true },
    { name: "value", type: "uint256", indexed: false },
  ],
};
const ERC20 = [balanceOf, transfer, transferEvent];

const ids = (list: { data: { id: string }[] }) => list.data.map((c) => c.id);

let a: ProjectWithKeys;
let b: ProjectWithKeys;
beforeAll(async () => {
  [a, b] = await Promise.all([newProject("A"), newProject("B")]);
});

describe("contracts", () => {
  it("registers from a bracket-notation form, from an ABI sent as a JSON string in a form field, and from JSON, alike", async () => {
    const key = a.keys.test.secret;
    const bracket = await call("POST", "/v1/contracts", {
      key,
      form: { name: "Token", chainId: 31337, address: freshAddress(), abi: ERC20, publicVerification: true },
    });
    expect(bracket.status).toBe(200);
    expect(bracket.body).toMatchObject({ object: "contract", name: "Token", chainId: 31337, deleted: false, publicVerification: true });
    // booleans and numbers come back typed, though the form carried them as text
    expect(bracket.body.abi).toEqual(ERC20);

    const jsonString = await call("POST", "/v1/contracts", {
      key,
      form: { name: "Token", chainId: "31337", address: freshAddress(), abi: JSON.stringify(ERC20), publicVerification: "true" },
    });
    expect(jsonString.status).toBe(200);
    const json = await call("POST", "/v1/contracts", {
      key,
      json: { name: "Token", chainId: 31337, address: freshAddress(), abi: ERC20, publicVerification: true },
    });
    expect(json.status).toBe(200);
    const registration = (c: Record<string, unknown>) => ({ ...c, id: undefined, createdAt: undefined, address: undefined });
    expect(registration(jsonString.body)).toEqual(registration(bracket.body));
    expect(registration(json.body)).toEqual(registration(bracket.body));

    // a form written by hand, brackets unencoded
    const address = freshAddress();
    const byHand = await call("POST", "/v1/contracts", {
      key,
      form:
        `name=Handmade&chainId=31338&address=${address}` +
        "&abi[0][type]=function&abi[0][name]=balanceOf&abi[0][stateMutability]=view" +
        "&abi[0][inputs][0][name]=owner&abi[0][inputs][0][type]=address&abi[0][outputs][0][type]=uint256",
    });
    expect(byHand.status).toBe(200);
    expect(byHand.body.abi).toEqual([
      { type: "function", name: "balanceOf", stateMutability: "view", inputs: [{ name: "owner", type: "address" }], outputs: [{ type: "uint256" }] },
    ]);
    expect(byHand.body.chainId).toBe(31338);

    const noAbi = await call("POST", "/v1/contracts", { key, json: { name: "Bare", chainId: 31337, address: freshAddress() } });
    expect(noAbi.body).toMatchObject({ abi: [], publicVerification: false });
  });

  it("answers with the documented shape: con_ id, integer seconds, EIP-55 address", async () => {
    const project = await newProject();
    for (const checksummed of EIP55) {
      const res = await call("POST", "/v1/contracts", {
        key: project.keys.test.secret,
        form: { name: "c", chainId: 31337, address: checksummed.toLowerCase() },
      });
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(["abi", "address", "chainId", "createdAt", "deleted", "id", "name", "object", "publicVerification"]);
      expect(res.body.id).toMatch(/^con_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      expect(res.body.object).toBe("contract");
      expect(Number.isInteger(res.body.createdAt)).toBe(true);
      expect(Math.abs(res.body.createdAt - Date.now() / 1000)).toBeLessThan(60);
      expect(res.body.chainId).toBe(31337);
      expect(res.body.address).toBe(checksummed);
    }
    // upper-case hex is the same address
    const upper = `0x${EIP55[0]!.slice(2).toUpperCase()}`;
    const res = await call("POST", "/v1/contracts", { key: project.keys.test.secret, json: { name: "c", chainId: 31338, address: upper } });
    expect(res.body.address).toBe(EIP55[0]);
  });

  it("accepts pre-0.4.16 ABI entries (no type, constant/payable) and normalizes them", async () => {
    const key = a.keys.test.secret;
    const old = [
      { constant: true, inputs: [], name: "totalSupply", outputs: [{ name: "", type: "uint256" }], payable: false },
      { constant: false, inputs: [{ name: "to", type: "address" }], name: "mint", outputs: [], payable: true },
      { constant: false, inputs: [], name: "poke", outputs: [] },
      { anonymous: false, inputs: [{ indexed: true, name: "who", type: "address" }], name: "Poked", type: "event" },
    ];
    for (const encoding of ["json", "form"] as const) {
      const res = await call("POST", "/v1/contracts", { key, [encoding]: { name: "Old", chainId: 31337, address: freshAddress(), abi: old } });
      expect(res.status, `${encoding}: ${JSON.stringify(res.body)}`).toBe(200);
      const [totalSupply, mint, poke, poked] = res.body.abi;
      expect(totalSupply).toMatchObject({ type: "function", name: "totalSupply", stateMutability: "view", constant: true });
      expect(mint).toMatchObject({ type: "function", name: "mint", stateMutability: "payable" });
      expect(poke).toMatchObject({ type: "function", name: "poke", stateMutability: "nonpayable" });
      expect(poked).toEqual(old[3]);
    }
    // an explicit stateMutability wins over the old flags
    const res = await call("POST", "/v1/contracts", {
      key,
      json: { name: "Mixed", chainId: 31337, address: freshAddress(), abi: [{ name: "f", constant: true, stateMutability: "pure", inputs: [] }] },
    });
    expect(res.body.abi[0]).toMatchObject({ type: "function", stateMutability: "pure" });
  });

  it("gets, updates and soft-deletes: a deleted contract stays readable", async () => {
    const key = a.keys.test.secret;
    const { body: created } = await call("POST", "/v1/contracts", { key, json: { name: "Life", chainId: 31337, address: freshAddress(), abi: [balanceOf] } });

    const got = await call("GET", `/v1/contracts/${created.id}`, { key, basic: true });
    expect(got.status).toBe(200);
    expect(got.body).toEqual(created);

    const newAddress = freshAddress();
    const updated = await call("POST", `/v1/contracts/${created.id}`, {
      key,
      form: { name: "Renamed", chainId: 31338, address: newAddress, abi: [transfer], publicVerification: true },
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toEqual({
      ...created,
      name: "Renamed",
      chainId: 31338,
      address: expect.stringMatching(new RegExp(`^${newAddress}$`, "i")),
      abi: [transfer],
      publicVerification: true,
    });
    expect(updated.body.address).not.toBe(newAddress); // checksummed on update too
    expect((await call("GET", `/v1/contracts/${created.id}`, { key })).body).toEqual(updated.body);

    // an empty update changes nothing; a partial one only what it names
    expect((await call("POST", `/v1/contracts/${created.id}`, { key, json: {} })).body).toEqual(updated.body);
    const renamed = await call("POST", `/v1/contracts/${created.id}`, { key, json: { name: "Only the name" } });
    expect(renamed.body).toEqual({ ...updated.body, name: "Only the name" });

    const deleted = await call("DELETE", `/v1/contracts/${created.id}`, { key });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ id: created.id, object: "contract", deleted: true });
    const afterDelete = await call("GET", `/v1/contracts/${created.id}`, { key });
    expect(afterDelete.status).toBe(200);
    expect(afterDelete.body).toEqual({ ...renamed.body, deleted: true });

    const listed = await call("GET", "/v1/contracts", { key, query: { limit: 100 } });
    expect(ids(listed.body)).not.toContain(created.id);
    const listedDeleted = await call("GET", "/v1/contracts", { key, query: { deleted: true, limit: 100 } });
    expect(ids(listedDeleted.body)).toContain(created.id);
    expect(listedDeleted.body.data.every((c: { deleted: boolean }) => c.deleted)).toBe(true);

    // update with deleted=false brings it back
    const restored = await call("POST", `/v1/contracts/${created.id}`, { key, form: { deleted: false } });
    expect(restored.body.deleted).toBe(false);
    expect(ids((await call("GET", "/v1/contracts", { key, query: { limit: 100 } })).body)).toContain(created.id);
    const deletedByUpdate = await call("POST", `/v1/contracts/${created.id}`, { key, json: { deleted: true } });
    expect(deletedByUpdate.body.deleted).toBe(true);

    expectError(await call("GET", "/v1/contracts/con_00000000-0000-4000-8000-000000000000", { key }), 404);
    expectError(await call("POST", "/v1/contracts/con_00000000-0000-4000-8000-000000000000", { key, json: { name: "x" } }), 404);
    expectError(await call("DELETE", "/v1/contracts/con_00000000-0000-4000-8000-000000000000", { key }), 404);
    expectError(await call("GET", "/v1/contracts/'; drop table contracts; --", { key }), 404);
  });

  it("lists newest first, filtered by name, chainId, address and deleted, a page at a time", async () => {
    const project = await newProject();
    const key = project.keys.test.secret;
    const made: { id: string; address: string }[] = [];
    for (let i = 0; i < 12; i++) {
      const res = await call("POST", "/v1/contracts", {
        key,
        form: { name: i % 3 === 0 ? "Vault" : `c${i}`, chainId: i % 2 === 0 ? 31337 : 31338, address: freshAddress() },
      });
      made.push({ id: res.body.id, address: res.body.address });
    }
    const newestFirst = made.map((c) => c.id).reverse();

    const first = await call("GET", "/v1/contracts", { key });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ object: "list", url: "/v1/contracts", start: 0, end: 10, total: 12 });
    expect(ids(first.body)).toEqual(newestFirst.slice(0, 10));
    const second = await call("GET", "/v1/contracts", { key, query: { skip: 10, limit: 10 } });
    expect(second.body).toMatchObject({ start: 10, end: 12, total: 12 });
    expect(ids(second.body)).toEqual(newestFirst.slice(10));
    const asc = await call("GET", "/v1/contracts", { key, query: { order: "asc", limit: 4, skip: 2 } });
    expect(asc.body).toMatchObject({ start: 2, end: 6, total: 12 });
    expect(ids(asc.body)).toEqual(made.slice(2, 6).map((c) => c.id));

    const vaults = await call("GET", "/v1/contracts", { key, query: { name: "Vault" } });
    expect(ids(vaults.body)).toEqual([made[9]!, made[6]!, made[3]!, made[0]!].map((c) => c.id));
    expect(vaults.body.total).toBe(4);

    const onB = await call("GET", "/v1/contracts", { key, query: { chainId: 31338, limit: 100 } });
    expect(ids(onB.body)).toEqual(made.filter((_, i) => i % 2 === 1).map((c) => c.id).reverse());
    expect(onB.body.data.every((c: { chainId: number }) => c.chainId === 31338)).toBe(true);
    const both = await call("GET", "/v1/contracts", { key, query: { name: "Vault", chainId: 31337 } });
    expect(ids(both.body)).toEqual([made[6]!, made[0]!].map((c) => c.id));
    expect((await call("GET", "/v1/contracts", { key, query: { chainId: 1 } })).body.total).toBe(0);

    const target = made[5]!;
    for (const address of [target.address, target.address.toLowerCase(), `0x${target.address.slice(2).toUpperCase()}`]) {
      const res = await call("GET", "/v1/contracts", { key, query: { address } });
      expect(ids(res.body), address).toEqual([target.id]);
    }
    // LIKE wildcards are plain characters here
    for (const address of ["%", "0x%", "_".repeat(42)]) {
      expect((await call("GET", "/v1/contracts", { key, query: { address } })).body.total, address).toBe(0);
    }

    await call("DELETE", `/v1/contracts/${made[0]!.id}`, { key });
    expect((await call("GET", "/v1/contracts", { key })).body.total).toBe(11);
    expect((await call("GET", "/v1/contracts", { key, query: { deleted: "false" } })).body.total).toBe(11);
    const gone = await call("GET", "/v1/contracts", { key, query: { deleted: "true" } });
    expect(gone.body).toMatchObject({ total: 1, start: 0, end: 1 });
    expect(ids(gone.body)).toEqual([made[0]!.id]);
    expect(ids((await call("GET", "/v1/contracts", { key, query: { deleted: true, name: "Vault", chainId: 31337 } })).body)).toEqual([made[0]!.id]);

    for (const query of [{ limit: 101 }, { limit: 0 }, { skip: -1 }, { order: "sideways" }, { chainId: "abc" }, { deleted: "maybe" }, { colour: "red" }]) {
      expectError(await call("GET", "/v1/contracts", { key, query }), 400, "invalid_request_error");
    }
  });

  it("registers an address again as a new contract, under another name or ABI, and keeps both", async () => {
    const key = a.keys.test.secret;
    const address = freshAddress();
    const { body: first } = await call("POST", "/v1/contracts", { key, json: { name: "first", chainId: 31337, address } });
    // a setup script run twice, or the same address under another name and ABI, in the other encoding
    const again = await call("POST", "/v1/contracts", {
      key,
      form: { name: "again", chainId: 31337, address: `0x${address.slice(2).toUpperCase()}`, abi: JSON.stringify(ERC20) },
    });
    expect(again.status).toBe(200);
    expect(again.body.id).toMatch(/^con_/);
    expect(again.body.id).not.toBe(first.id);
    expect(again.body.address).toBe(first.address);
    expect(again.body.name).toBe("again");
    expect((await call("GET", `/v1/contracts/${first.id}`, { key })).body).toEqual(first);

    const byAddress = await call("GET", "/v1/contracts", { key, query: { address, chainId: 31337, order: "asc" } });
    expect(ids(byAddress.body)).toEqual([first.id, again.body.id]);

    // moving a registration onto an address already registered is fine too; so is restoring a deleted one
    const otherChain = await call("POST", "/v1/contracts", { key, json: { name: "other chain", chainId: 31338, address } });
    const moved = await call("POST", `/v1/contracts/${otherChain.body.id}`, { key, json: { chainId: 31337, name: "moved" } });
    expect(moved.status).toBe(200);
    expect(moved.body).toMatchObject({ chainId: 31337, address: first.address, name: "moved" });
    await call("DELETE", `/v1/contracts/${first.id}`, { key });
    const restored = await call("POST", `/v1/contracts/${first.id}`, { key, json: { deleted: false } });
    expect(restored.status).toBe(200);
    expect(restored.body.deleted).toBe(false);
    expect((await call("GET", "/v1/contracts", { key, query: { address } })).body.total).toBe(3);
    // each registration keeps its own ABI
    expect((await call("GET", `/v1/contracts/${again.body.id}`, { key })).body.abi).toEqual(ERC20);
    expect((await call("GET", `/v1/contracts/${first.id}`, { key })).body.abi).toEqual([]);
  });

  it("accepts simultaneous registrations of one address, each a contract of its own", async () => {
    const key = a.keys.test.secret;
    const address = freshAddress();
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) => call("POST", "/v1/contracts", { key, json: { name: `racer ${i}`, chainId: 31338, address } })),
    );
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(new Set(results.map((r) => r.body.id)).size).toBe(6);
    expect((await call("GET", "/v1/contracts", { key, query: { address } })).body.total).toBe(6);
  });

  it("rejects missing and malformed fields with 400 and details per field", async () => {
    const key = a.keys.test.secret;
    const missing = expectError(await call("POST", "/v1/contracts", { key, form: { abi: "[]" } }), 400, "invalid_request_error");
    expect(Object.keys(missing.details!).sort()).toEqual(["address", "chainId", "name"]);
    for (const detail of Object.values(missing.details!)) expect(detail.message).toBe("Missing required parameter.");
    expectError(await call("POST", "/v1/contracts", { key }), 400);

    const valid = { name: "v", chainId: 31337, address: freshAddress() };
    const unsupported = expectError(await call("POST", "/v1/contracts", { key, json: { ...valid, chainId: 1 } }), 400, "invalid_request_error");
    expect(Object.keys(unsupported.details!)).toEqual(["chainId"]);
    expect(unsupported.message).toMatch(/31337/);
    expect(unsupported.message).toMatch(/31338/);

    const cases: [Record<string, unknown>, string][] = [
      [{ name: "" }, "name"],
      [{ name: "   " }, "name"],
      [{ name: "x".repeat(256) }, "name"],
      [{ name: 7 }, "name"],
      [{ chainId: "abc" }, "chainId"],
      [{ chainId: 31337.5 }, "chainId"],
      [{ chainId: 0 }, "chainId"],
      [{ address: "0x12" }, "address"],
      [{ address: `0x${"zz".repeat(20)}` }, "address"],
      [{ address: "5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed" }, "address"],
      [{ address: `${EIP55[0]}00` }, "address"],
      [{ address: 12 }, "address"],
      [{ publicVerification: "maybe" }, "publicVerification"],
      [{ abi: { 0: balanceOf } }, "abi"],
      [{ abi: "not json at all" }, "abi"],
      [{ abi: '{"type":"function"}' }, "abi"],
      [{ abi: [{ ...balanceOf, inputs: [{ name: "owner", type: "uint7" }] }] }, "abi[0]"],
      [{ abi: [balanceOf, { ...transfer, outputs: [{ type: "Strange" }] }] }, "abi[1]"],
      [{ abi: [{ type: "function", inputs: [] }] }, "abi[0]"],
      [{ abi: [{ type: "event", inputs: [] }] }, "abi[0]"],
      [{ abi: [{ type: "method", name: "f" }] }, "abi[0]"],
      [{ abi: [{ name: "f", stateMutability: "sometimes" }] }, "abi[0]"],
      [{ abi: [{ name: "f", inputs: [{ name: "s", type: "tuple" }] }] }, "abi[0]"],
      [{ abi: [{ name: "bad name" }] }, "abi[0]"],
      [{ abi: ["balanceOf(address)"] }, "abi[0]"],
      [{ deleted: true }, "deleted"],
      [{ nonsense: 1 }, "nonsense"],
    ];
    for (const [change, field] of cases) {
      const error = expectError(await call("POST", "/v1/contracts", { key, json: { ...valid, ...change } }), 400, "invalid_request_error");
      expect(Object.keys(error.details ?? {}), `${JSON.stringify(change)} → ${JSON.stringify(error.details)}`).toEqual([
        expect.stringMatching(new RegExp(`^${field.replace(/[[\]]/g, "\\$&")}`)),
      ]);
    }
    // the same rules reach form bodies
    const formAbi = expectError(
      await call("POST", "/v1/contracts", { key, form: { ...valid, abi: [balanceOf, { type: "function", name: "f", inputs: [{ type: "uint7" }] }] } }),
      400,
    );
    expect(Object.keys(formAbi.details!)).toEqual(["abi[1]"]);
    expectError(await call("POST", "/v1/contracts", { key, form: `name=v&chainId=31337&address=${freshAddress()}&abi=[{"name":` }), 400);
    // nothing of the above was stored
    expect((await call("GET", "/v1/contracts", { key, query: { address: valid.address } })).body.total).toBe(0);

    const { body: contract } = await call("POST", "/v1/contracts", { key, json: valid });
    const updates: [Record<string, unknown>, string][] = [
      [{ name: 5 }, "name"],
      [{ name: "" }, "name"],
      [{ chainId: "thirty" }, "chainId"],
      [{ chainId: 1 }, "chainId"],
      [{ address: "0x12" }, "address"],
      [{ address: ["0x"] }, "address"],
      [{ abi: "nope" }, "abi"],
      [{ abi: [{ name: "f", inputs: [{ type: "uint7" }] }] }, "abi[0]"],
      [{ publicVerification: "perhaps" }, "publicVerification"],
      [{ deleted: "yes" }, "deleted"],
      [{ id: "con_other" }, "id"],
    ];
    for (const [json, field] of updates) {
      const error = expectError(await call("POST", `/v1/contracts/${contract.id}`, { key, json }), 400, "invalid_request_error");
      expect(Object.keys(error.details ?? {}), JSON.stringify(json)).toEqual([expect.stringMatching(new RegExp(`^${field.replace(/[[\]]/g, "\\$&")}`))]);
    }
    expect((await call("GET", `/v1/contracts/${contract.id}`, { key })).body).toEqual(contract);
  });

  it("rejects ABI types that format to a signature but are no type", async () => {
    const key = a.keys.test.secret;
    for (const type of ["uint256,uint256", "string calldata", "address payable", "uint"]) {
      const abi = [{ type: "function", name: "f", inputs: [{ name: "x", type }], outputs: [], stateMutability: "view" }];
      const error = expectError(await call("POST", "/v1/contracts", { key, json: { name: "t", chainId: 31337, address: freshAddress(), abi } }), 400);
      expect(Object.keys(error.details!), type).toEqual(["abi[0]"]);
    }
    // and accepts every kind of entry written canonically
    const abi = [
      { type: "constructor", inputs: [{ name: "owner", type: "address" }], stateMutability: "payable" },
      { type: "fallback", stateMutability: "payable" },
      { type: "receive", stateMutability: "payable" },
      { type: "error", name: "Denied", inputs: [{ name: "who", type: "address" }] },
      { type: "error", name: "Paused" },
      { type: "event", name: "Ping" },
      { type: "event", name: "Anon", anonymous: true, inputs: [{ name: "x", type: "bytes32", indexed: true }] },
      {
        type: "function",
        name: "handleOps",
        inputs: [
          {
            name: "ops",
            type: "tuple[]",
            components: [
              { name: "sender", type: "address" },
              { name: "nonce", type: "uint256" },
              { name: "callData", type: "bytes" },
              { name: "inner", type: "tuple", components: [{ name: "v", type: "uint8[2][]" }] },
            ],
          },
          { name: "beneficiary", type: "address" },
          { name: "cb", type: "function" },
        ],
        outputs: [{ name: "ok", type: "bool" }, { name: "data", type: "bytes32[3]" }],
        stateMutability: "nonpayable",
      },
    ];
    const res = await call("POST", "/v1/contracts", { key, json: { name: "all kinds", chainId: 31337, address: freshAddress(), abi } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.abi).toEqual(abi.map((e) => ("inputs" in e ? e : { ...e, inputs: [] })));
  });

  it("isolates projects: another project's key sees nothing and changes nothing", async () => {
    const { body: mine } = await call("POST", "/v1/contracts", { key: a.keys.test.secret, json: { name: "mine", chainId: 31337, address: freshAddress() } });
    const other = b.keys.test.secret;
    expectError(await call("GET", `/v1/contracts/${mine.id}`, { key: other }), 404);
    expectError(await call("POST", `/v1/contracts/${mine.id}`, { key: other, form: { name: "stolen" } }), 404);
    expectError(await call("DELETE", `/v1/contracts/${mine.id}`, { key: other }), 404);
    for (const query of [{ limit: 100 }, { address: mine.address }, { name: "mine" }, { deleted: true, limit: 100 }]) {
      expect(ids((await call("GET", "/v1/contracts", { key: other, query })).body)).not.toContain(mine.id);
    }
    expect((await call("GET", `/v1/contracts/${mine.id}`, { key: a.keys.test.secret })).body).toEqual(mine);
  });

  it("isolates modes: test keys never see live contracts and the reverse", async () => {
    const project = await newProject();
    const { body: live } = await call("POST", "/v1/contracts", { key: project.keys.live.secret, json: { name: "live", chainId: 31339, address: freshAddress() } });
    const { body: test } = await call("POST", "/v1/contracts", { key: project.keys.test.secret, json: { name: "test", chainId: 31337, address: freshAddress() } });
    for (const [key, foreign] of [
      [project.keys.test.secret, live],
      [project.keys.live.secret, test],
    ] as const) {
      expectError(await call("GET", `/v1/contracts/${foreign.id}`, { key }), 404);
      expectError(await call("POST", `/v1/contracts/${foreign.id}`, { key, json: { name: "x" } }), 404);
      expectError(await call("DELETE", `/v1/contracts/${foreign.id}`, { key }), 404);
    }
    expect(ids((await call("GET", "/v1/contracts", { key: project.keys.test.secret })).body)).toEqual([test.id]);
    expect(ids((await call("GET", "/v1/contracts", { key: project.keys.live.secret })).body)).toEqual([live.id]);
    expect((await call("GET", `/v1/contracts/${live.id}`, { key: project.keys.live.secret })).body).toEqual(live);
  });

  it("requires a secret key on every contracts endpoint", async () => {
    const { body: c } = await call("POST", "/v1/contracts", { key: a.keys.test.secret, json: { name: "guarded", chainId: 31337, address: freshAddress() } });
    const requests: [string, string, Record<string, unknown>?][] = [
      ["GET", "/v1/contracts"],
      ["POST", "/v1/contracts", { name: "p", chainId: 31337, address: freshAddress() }],
      ["GET", `/v1/contracts/${c.id}`],
      ["POST", `/v1/contracts/${c.id}`, { name: "p" }],
      ["DELETE", `/v1/contracts/${c.id}`],
    ];
    for (const [method, path, json] of requests) {
      for (const publishable of [a.keys.test.publishable, a.keys.live.publishable]) {
        expectError(await call(method, path, { key: publishable, json }), 403, "permission_error");
        expectError(await call(method, path, { key: publishable, basic: true, json }), 403, "permission_error");
      }
      expectError(await call(method, path, { json }), 401, "authentication_error");
    }
    expect((await call("GET", `/v1/contracts/${c.id}`, { key: a.keys.test.secret })).body).toEqual(c);
    const created = await call("GET", "/v1/contracts", { key: a.keys.test.secret, query: { name: "p" } });
    expect(created.body.total).toBe(0);
  });
});

describe("ABI normalization", () => {
  it("makes a receive entry payable when it says nothing, as Solidity requires", async () => {
    const res = await call("POST", "/v1/contracts", {
      key: a.keys.test.secret,
      json: { name: "r", chainId: 31337, address: "0x00000000000000000000000000000000000000cc", abi: [{ type: "receive" }] },
    });
    expect(res.status).toBe(200);
    expect(res.body.abi).toEqual([{ type: "receive", inputs: [], stateMutability: "payable" }]);
  });
});
