import http from "node:http";
import net from "node:net";
import { and, eq, inArray, notInArray } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { inngest } from "@/inngest/client";
import { functions } from "@/inngest/functions";
import { deliverEvent } from "@/inngest/functions/deliver";
import { startEmbeddedRunner } from "@/inngest/runner";
import { getDb } from "@/lib/db/client";
import { functionRuns, outboundEvents, webhookDeliveries } from "@/lib/db/schema";
import { call, newProject } from "./helpers/api";
import { eventually, sponsoredDeposits } from "./helpers/relay-fixtures";

/** Intents landed while the receiver is down: each sends broadcast and successful. */
const N = 5;
/** "Down for ten minutes", scaled: about 47 s of retries, the receiver down for the first ~15 of them. */
const SCHEDULE = "1s,2s,4s,8s,8s,8s,8s,8s";
const DOWN_MS = 15_000;
/** Failed attempts each event has at least before the receiver comes up. */
const DOWN_ATTEMPTS = 3;

interface Got {
  webhookId: string;
  type: string;
  intentId: string;
}

let projectId: string;
let key: string;
let port: number;
let server: http.Server | null = null;
const got: Got[] = [];

/** A port nobody listens on (yet): connections to it are refused. */
const closedPort = () =>
  new Promise<number>((resolve, reject) => {
    const probe = net.createServer();
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
    probe.on("error", reject);
  });

/** The receiver comes up on the port the webhook names. */
const comeUp = () =>
  new Promise<void>((resolve, reject) => {
    server = http.createServer((req, res) => {
      let body = "";
      req.on("data", (chunk) => (body += chunk));
      req.on("end", () => {
        const event = JSON.parse(body);
        got.push({ webhookId: String(req.headers["webhook-id"]), type: event.type, intentId: event.data.id });
        res.writeHead(200).end("ok");
      });
    });
    server.on("error", reject);
    server.listen(port, "127.0.0.1", () => resolve());
  });

const attempts = async () => (await getDb()).select().from(webhookDeliveries).where(eq(webhookDeliveries.projectId, projectId));

beforeAll(async () => {
  // Read by the delivery function at each run, so set before the first one.
  vi.stubEnv("WEBHOOK_RETRY_SCHEDULE", SCHEDULE);
  await startEmbeddedRunner(await getDb(), functions, { pollMs: 50 });
  const project = await newProject("receiver down, then up");
  projectId = project.id;
  key = project.keys.test.secret;
  port = await closedPort();
  const set = await call("POST", "/v1/settings/webhook", { key, json: { url: `http://127.0.0.1:${port}/hooks` } });
  expect(set.status, JSON.stringify(set.body)).toBe(200);
});
afterAll(async () => {
  vi.unstubAllEnvs();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
});

describe("a receiver that is down while intents land", () => {
  it("gets every event exactly once when it comes back up; the log shows the failed attempts, then one success per event", async () => {
    const deposits = await sponsoredDeposits(key);
    const intents = await Promise.all(Array.from({ length: N }, () => deposits.intent(1)));
    const ids = intents.map((i) => i.id);

    // Every intent lands and both its events fail while nobody listens, a few times each, for a while.
    const downSince = Date.now();
    await eventually(
      `${DOWN_ATTEMPTS} failed attempts for every event, ${DOWN_MS / 1000} s down`,
      async () => {
        const failed = new Map<string, number>();
        for (const a of await attempts()) if (a.status === "failed") failed.set(`${a.objectId}:${a.topic}`, (failed.get(`${a.objectId}:${a.topic}`) ?? 0) + 1);
        const each = ids.flatMap((id) => [failed.get(`${id}:transaction_intent.broadcast`) ?? 0, failed.get(`${id}:transaction_intent.successful`) ?? 0]);
        return Date.now() - downSince >= DOWN_MS && each.every((n) => n >= DOWN_ATTEMPTS);
      },
      60_000,
    );
    const beforeUp = await attempts();
    expect(beforeUp.every((a) => a.status === "failed" && a.responseStatus === null && a.error?.startsWith("could not connect"))).toBe(true);
    expect(got).toHaveLength(0);

    await comeUp();
    await eventually("every event received", () => got.length >= 2 * N, 60_000);
    // Wait for every delivery run to end (none left sleeping that could send a second copy).
    const db = await getDb();
    const messages = await db.select().from(outboundEvents).where(eq(outboundEvents.projectId, projectId));
    const runIds = messages.map((m) => `deliver:${m.id}:webhook`);
    await eventually(
      "every delivery run ended",
      async () =>
        (
          await db
            .select({ id: functionRuns.id })
            .from(functionRuns)
            .where(and(eq(functionRuns.functionId, deliverEvent.id(inngest.id)), inArray(functionRuns.eventId, runIds), notInArray(functionRuns.status, ["completed"])))
        ).length === 0,
      30_000,
    );

    // Exactly 2N: one per event, each with its own stable webhook-id, which is the event's msg_ id.
    expect(messages).toHaveLength(2 * N);
    expect(got).toHaveLength(2 * N);
    expect(new Set(got.map((g) => g.webhookId)).size).toBe(2 * N);
    expect(new Set(got.map((g) => g.webhookId))).toEqual(new Set(messages.map((m) => m.id)));
    expect(got.map((g) => `${g.intentId}:${g.type}`).sort()).toEqual(ids.flatMap((id) => [`${id}:transaction_intent.broadcast`, `${id}:transaction_intent.successful`]).sort());

    // The log: per event, attempts 1..k, every one failed but the last, which succeeded.
    const log = await attempts();
    for (const message of messages) {
      const mine = log.filter((a) => a.messageId === message.id).sort((a, b) => a.attempt - b.attempt);
      expect(mine.map((a) => a.attempt)).toEqual(mine.map((_, i) => i + 1));
      expect(mine.length).toBeGreaterThan(DOWN_ATTEMPTS);
      expect(mine.slice(0, -1).every((a) => a.status === "failed")).toBe(true);
      expect(mine.at(-1)).toMatchObject({ status: "success", responseStatus: 200, reason: "scheduled" });
    }
  }, 180_000);
});
