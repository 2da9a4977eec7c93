import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { functions } from "@/inngest/functions";
import { startEmbeddedRunner } from "@/inngest/runner";
import { getDb } from "@/lib/db/client";
import { call, newProject } from "./helpers/api";
import { eventually, intentRow, receiver, sponsoredDeposits } from "./helpers/relay-fixtures";

// The node accepts nothing from this process's relayer (as when every bundle fails for reasons not the op's).
vi.mock("@/lib/chain/relayer", async (original) => ({
  ...(await original<typeof import("@/lib/chain/relayer")>()),
  enqueue: () => Promise.reject(new Error("the bundle could not be sent: connection refused")),
}));

let hooks: Awaited<ReturnType<typeof receiver>>;

beforeAll(async () => {
  // Retries a millisecond apart: the relay spends its 10 in moments instead of minutes.
  await startEmbeddedRunner(await getDb(), functions, { pollMs: 20, retryBaseMs: 1 });
  hooks = await receiver();
});
afterAll(() => hooks?.close());

describe("an intent whose relay keeps failing", () => {
  it("does not stay pending: once its retries are spent it ends failed, with the error, and its webhook", async () => {
    const key = (await newProject("relay gives up")).keys.test.secret;
    await call("POST", "/v1/settings/webhook", { key, json: { url: `${hooks.url}/hooks` } });
    const intent = await (await sponsoredDeposits(key)).intent();
    const failed = await eventually("the intent fails", async () => {
      const row = await intentRow(intent.id);
      return row.status === "failed" && row;
    }, 30_000);
    expect(failed.response).toBeNull();
    expect(failed.error).toBe("The operation could not be relayed: the bundle could not be sent: connection refused");
    const hook = await eventually("its webhook", () => hooks.received.map((r) => JSON.parse(r.body)).find((b) => b.data.id === intent.id));
    expect(hook).toMatchObject({ type: "transaction_intent.failed", data: { id: intent.id } });
  });
});
