import crypto from "node:crypto";
import { and, eq, isNotNull } from "drizzle-orm";
import { afterEach, describe, expect, it } from "vitest";
import { getDb } from "@/lib/db/client";
import { functionRuns } from "@/lib/db/schema";
import { inngest } from "./client";
import { EmbeddedRunner } from "./runner";

const runners: EmbeddedRunner[] = [];
afterEach(async () => {
  await Promise.all(runners.splice(0).map((r) => r.stop()));
});

const uid = () => crypto.randomUUID();

function runnerOf(functions: ConstructorParameters<typeof EmbeddedRunner>[1], options = {}) {
  const runner = new EmbeddedRunner(getDbSync(), functions, { pollMs: 20, retryBaseMs: 10, ...options });
  runners.push(runner);
  return runner;
}
let db: Awaited<ReturnType<typeof getDb>>;
const getDbSync = () => db;

/** The batch runs of a function, oldest first, with the ids of their events. */
async function batchesOf(functionId: string) {
  const rows = await db
    .select()
    .from(functionRuns)
    .where(and(eq(functionRuns.functionId, `${inngest.id}-${functionId}`), isNotNull(functionRuns.events)))
    .orderBy(functionRuns.createdAt);
  return rows.map((r) => ({ status: r.status, ids: r.events!.map((e) => e.id), output: r.output }));
}

async function until<T>(what: string, check: () => Promise<T | false>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A batched function whose runs wait for `gate` in their one step, recording the events each run got. */
function gatedBatchFunction(maxSize: number, timeout: `${number}s`) {
  const name = `test/batched-${uid()}`;
  const id = `batched-${uid()}`;
  const seen: string[][] = [];
  let open: () => void = () => {};
  let gate = new Promise<void>((r) => (open = r));
  let always = false;
  const fn = inngest.createFunction({ id, triggers: [{ event: name }], batchEvents: { maxSize, timeout } }, async ({ events, step }) => {
    const ids = events.map((e) => e.id!);
    await step.run("work", async () => {
      seen.push(ids);
      if (!always) await gate;
      return ids.length;
    });
    return { size: ids.length };
  });
  return {
    fn,
    id,
    name,
    seen,
    /** Lets the runs waiting go on; later ones wait again. */
    release: () => {
      open();
      gate = new Promise<void>((r) => (open = r));
    },
    /** Lets every run go on without waiting. */
    openAll: () => {
      always = true;
      open();
    },
  };
}

describe("the embedded runner's event batches (batchEvents)", () => {
  it("starts a batch at once when idle; while one runs, gathers events into the next, full ones at once; each event in one batch", async () => {
    db = await getDb();
    const f = gatedBatchFunction(5, "30s");
    const runner = runnerOf([f.fn]);
    await runner.start();
    const started = Date.now();
    await runner.send([{ name: f.name, data: {}, id: "e0" + f.id }]);
    // Idle: no waiting for the 30 s timeout.
    await until("the first batch", async () => f.seen.length === 1);
    expect(f.seen[0]).toEqual(["e0" + f.id]);
    // While it runs: seven more. Five fill a batch, which starts at once; two wait (the timeout is far).
    const more = Array.from({ length: 7 }, (_, i) => `e${i + 1}${f.id}`);
    for (const id of more) await runner.send([{ name: f.name, data: {}, id }]);
    await until("the full batch", async () => f.seen.length === 2);
    expect(f.seen[1]).toEqual(more.slice(0, 5));
    await new Promise((r) => setTimeout(r, 300));
    expect(f.seen).toHaveLength(2);
    // Nothing running any more: the two left form a batch at once.
    f.release();
    await until("the last batch", async () => f.seen.length === 3);
    expect(f.seen[2]).toEqual(more.slice(5));
    f.openAll();
    const batches = await until("all completed", async () => {
      const b = await batchesOf(f.id);
      return b.length === 3 && b.every((x) => x.status === "completed") && b;
    });
    expect(batches.map((b) => b.ids.length)).toEqual([1, 5, 2]);
    // All within the batches' 30 s timeout: none of them waited for it.
    expect(Date.now() - started).toBeLessThan(30_000);
    // Each event's own row says which batch took it.
    const events = await db.select().from(functionRuns).where(and(eq(functionRuns.functionId, `${inngest.id}-${f.id}`), eq(functionRuns.eventId, more[0]!)));
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ status: "completed", output: { batch: expect.stringMatching(/^run_/) } });
  }, 60_000);

  it("sends an event id once: a second send of it joins no batch", async () => {
    db = await getDb();
    const f = gatedBatchFunction(10, "1s");
    f.openAll();
    const runner = runnerOf([f.fn]);
    const id = `dup-${uid()}`;
    await runner.send([{ name: f.name, data: {}, id }]);
    await runner.send([{ name: f.name, data: {}, id }]);
    await runner.start();
    await until("the batch", async () => (await batchesOf(f.id)).some((b) => b.status === "completed"));
    await new Promise((r) => setTimeout(r, 200));
    expect((await batchesOf(f.id)).map((b) => b.ids)).toEqual([[id]]);
  });

  it("lets each project's events take turns in a batch: one project's backlog does not fill it", async () => {
    db = await getDb();
    const f = gatedBatchFunction(5, "1s");
    f.openAll();
    const runner = runnerOf([f.fn]);
    const busy = Array.from({ length: 8 }, (_, i) => ({ name: f.name, data: { projectId: "pro_busy" }, id: `busy-${i}-${f.id}` }));
    const quiet = Array.from({ length: 2 }, (_, i) => ({ name: f.name, data: { projectId: "pro_quiet" }, id: `quiet-${i}-${f.id}` }));
    await runner.send(busy);
    await runner.send(quiet);
    await runner.start();
    await until("every event batched", async () => (await batchesOf(f.id)).flatMap((b) => b.ids).length === 10);
    const [first] = await batchesOf(f.id);
    expect(first!.ids).toEqual(expect.arrayContaining(quiet.map((e) => e.id)));
    expect(first!.ids).toHaveLength(5);
  });

  it("across instances on one database: every event lands in exactly one batch, the other instance's once their timeout passes", async () => {
    db = await getDb();
    const f = gatedBatchFunction(10, "0.2s");
    f.openAll();
    const a = runnerOf([f.fn]);
    const b = runnerOf([f.fn]);
    await Promise.all([a.start(), b.start()]);
    const ids = Array.from({ length: 60 }, (_, i) => `x${i}-${f.id}`);
    await Promise.all(ids.map((id, i) => (i % 2 ? a : b).send([{ name: f.name, data: {}, id }])));
    const batched = await until("every event batched", async () => {
      const all = (await batchesOf(f.id)).flatMap((x) => x.ids);
      return all.length >= ids.length && all;
    });
    expect(batched.sort()).toEqual([...ids].sort());
    // And an instance that sent nothing forms batches of events another one left (it stopped before forming them).
    const left = runnerOf([f.fn]);
    const orphan = `orphan-${f.id}`;
    await left.send([{ name: f.name, data: {}, id: orphan }]);
    await Promise.all([a.stop(), b.stop()]);
    const c = runnerOf([f.fn]);
    await c.start();
    await until("the orphan batched", async () => (await batchesOf(f.id)).some((x) => x.ids.includes(orphan)));
  });
});
