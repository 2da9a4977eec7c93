import { InngestTestEngine } from "@inngest/test";
import { and, eq, inArray, sql } from "drizzle-orm";
import type { Hex } from "viem";
import { beforeAll, describe, expect, it } from "vitest";
import { relayIntent, relayIntents } from "@/inngest/functions/relay";
import { resendUnsettledIntents } from "@/inngest/functions/unsettled";
import { serviceDeployment } from "@/lib/chain/contracts";
import { getDb } from "@/lib/db/client";
import { idempotencyKeys, transactionIntents } from "@/lib/db/schema";
import { jobBackend, registerJobBackend } from "@/lib/jobs/port";
import { credentialOf, requestHash } from "@/lib/http/idempotency";
import { findKey } from "@/lib/projects/service";
import { call } from "./helpers/api";
import { userOperationEvents } from "./helpers/chain";
import { eventually, intentRow, runInProcessOnly, sponsoredDeposits } from "./helpers/relay-fixtures";
import { newProject } from "./helpers/api";

/** The boundary where the API hands an intent to the background runner: its next send fails, the ones after go through. */
function failNextSend(error: Error) {
  const backend = jobBackend();
  const failed = { jobs: [] as string[] };
  registerJobBackend({
    ...backend,
    send: async (jobs) => {
      registerJobBackend(backend);
      failed.jobs = jobs.map((job) => job.id);
      throw error;
    },
  });
  return failed;
}

let key: string;
let projectId: string;
let deposits: Awaited<ReturnType<typeof sponsoredDeposits>>;

beforeAll(async () => {
  await runInProcessOnly([relayIntents, relayIntent]);
  const project = await newProject("idempotent intents");
  key = project.keys.test.secret;
  projectId = project.id;
  deposits = await sponsoredDeposits(key);
});

const intentBody = () => ({
  chainId: 31337,
  policy: deposits.policy,
  confirmationBlocks: 0,
  interactions: [{ contract: deposits.contract, functionName: "depositTo", functionArgs: [serviceDeployment().paymaster] }],
});

const timesOnChain = async (userOpHash: Hex) => (await userOperationEvents(userOpHash)).length;

const intentsOf = async (player: string) =>
  (await getDb()).select().from(transactionIntents).where(and(eq(transactionIntents.projectId, projectId), eq(transactionIntents.playerId, player)));

describe("Idempotency-Key on transaction intents", () => {
  it("replays the intent when its relay event failed to send, and the minute sweep still lands it, once", async () => {
    const { body: player } = await call("POST", "/v1/players", { key, json: { name: "relay fails once" } });
    const headers = { "idempotency-key": "tin-relay-send-fails" };
    const failed = failNextSend(new Error("event store unreachable"));

    const first = await call("POST", "/v1/transaction_intents", { key, json: { ...intentBody(), player: player.id }, headers });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body.id).toMatch(/^tin_/);
    expect(first.body.response).toBeUndefined(); // pending: nothing landed
    expect(failed.jobs).toEqual([`relay:${first.body.id}`]);

    const retry = await call("POST", "/v1/transaction_intents", { key, json: { ...intentBody(), player: player.id }, headers });
    expect(retry.status).toBe(200);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(retry.body.id).toBe(first.body.id);
    expect(await intentsOf(player.id)).toHaveLength(1);
    expect((await intentRow(first.body.id)).status).toBe("pending");

    // A minute later the sweep sends the event the request could not.
    await (await getDb())
      .update(transactionIntents)
      .set({ updatedAt: sql`now() - interval '2 minutes'` })
      .where(inArray(transactionIntents.id, [first.body.id]));
    const { error } = await new InngestTestEngine({ function: resendUnsettledIntents }).execute();
    expect(error).toBeUndefined();
    const landed = await eventually("the intent to land", async () => {
      const row = await intentRow(first.body.id);
      return row.status === "successful" ? row : false;
    }, 60_000);
    expect(await timesOnChain(landed.userOperationHash as Hex)).toBe(1);
    expect(await intentsOf(player.id)).toHaveLength(1);
  });

  it("runs concurrent duplicates once: the others wait for it and replay the same intent", async () => {
    const { body: player } = await call("POST", "/v1/players", { key, json: { name: "concurrent intents" } });
    const headers = { "idempotency-key": "tin-concurrent" };
    const results = await Promise.all(
      Array.from({ length: 5 }, () => call("POST", "/v1/transaction_intents", { key, json: { ...intentBody(), player: player.id }, headers })),
    );
    const ok = results.filter((r) => r.status === 200);
    for (const r of results) if (r.status !== 200) expect(r.body.error.type).toBe("idempotency_error");
    expect(new Set(ok.map((r) => r.body.id)).size).toBe(1);
    const [only] = await intentsOf(player.id);
    expect(await intentsOf(player.id)).toHaveLength(1);
    await eventually("the intent to land", async () => (await intentRow(only!.id)).status === "successful", 60_000);
    expect(await timesOnChain(only!.userOperationHash as Hex)).toBe(1);
  });

  it("answers an optimistic request once its op has landed (after the commit), and replays that answer", async () => {
    const { body: player } = await call("POST", "/v1/players", { key, json: { name: "optimistic" } });
    const headers = { "idempotency-key": "tin-optimistic" };
    const first = await call("POST", "/v1/transaction_intents", { key, json: { ...intentBody(), player: player.id, optimistic: true }, headers });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body.response).toMatchObject({ status: 1 });
    const again = await call("POST", "/v1/transaction_intents", { key, json: { ...intentBody(), player: player.id, optimistic: true }, headers });
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body).toEqual(first.body);
  });

  it("keeps nothing of a request that failed before its commit, so the retry runs", async () => {
    const { body: player } = await call("POST", "/v1/players", { key, json: { name: "refused" } });
    const headers = { "idempotency-key": "tin-bad-policy" };
    const refused = await call("POST", "/v1/transaction_intents", { key, json: { ...intentBody(), player: player.id, policy: "pol_missing" }, headers });
    expect(refused.status).toBe(400);
    const replayed = await call("POST", "/v1/transaction_intents", { key, json: { ...intentBody(), player: player.id, policy: "pol_missing" }, headers });
    expect(replayed.status).toBe(400);
    expect(replayed.headers.get("idempotent-replayed")).toBe("true");
    expect(await intentsOf(player.id)).toHaveLength(0);
  });

  it("after a crash between the intent's commit and the key's answer, the retry answers that intent, not a second one", async () => {
    const { body: player } = await call("POST", "/v1/players", { key, json: { name: "crashed mid-way" } });
    const body = { ...intentBody(), player: player.id };
    // The request that died: its intent committed (recorded under its request id), its claim never answered.
    const died = await call("POST", "/v1/transaction_intents", { key, json: body });
    expect(died.status, JSON.stringify(died.body)).toBe(200);
    const db = await getDb();
    const credential = credentialOf({ kind: "key", key: await findKey(db, key) });
    const abandoned = (k: string, requestId: string) =>
      db.insert(idempotencyKeys).values({ projectId, livemode: false, credential, key: k, requestHash: requestHash("POST", "/v1/transaction_intents", body), requestId, createdAt: sql`now() - interval '31 seconds'` });
    await abandoned("tin-crashed", died.headers.get("x-request-id")!);
    const retry = await call("POST", "/v1/transaction_intents", { key, json: body, headers: { "idempotency-key": "tin-crashed" } });
    expect(retry.status, JSON.stringify(retry.body)).toBe(200);
    expect(retry.body.id).toBe(died.body.id);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(await intentsOf(player.id)).toHaveLength(1);
    // A request that died before recording anything: the retry runs it.
    await abandoned("tin-crashed-early", "req_recorded_nothing");
    const rerun = await call("POST", "/v1/transaction_intents", { key, json: body, headers: { "idempotency-key": "tin-crashed-early" } });
    expect(rerun.status, JSON.stringify(rerun.body)).toBe(200);
    expect(rerun.body.id).not.toBe(died.body.id);
    expect(await intentsOf(player.id)).toHaveLength(2);
  });
});
