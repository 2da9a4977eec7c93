import crypto from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { getDb } from "@/lib/db/client";
import { inngest } from "@/inngest/client";
import { EmbeddedRunner } from "@/inngest/runner";

const runners: EmbeddedRunner[] = [];
let release = () => {};
afterEach(async () => {
  release();
  await Promise.all(runners.splice(0).map((r) => r.stop()));
});

/** A function whose runs record their project when they start, then wait until released. */
function blockingFunction() {
  const name = `test/fair-${crypto.randomUUID()}`;
  const started: string[] = [];
  const gate = new Promise<void>((resolve) => (release = resolve));
  const fn = inngest.createFunction({ id: `fair-${crypto.randomUUID()}`, triggers: [{ event: name }] }, async ({ event }) => {
    started.push(event.data.projectId as string);
    await gate;
  });
  return { fn, name, started };
}

const events = (name: string, projectId: string, n: number) => Array.from({ length: n }, () => ({ name, data: { projectId }, id: crypto.randomUUID() }));

async function until(check: () => boolean, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("the embedded runner's slots, across projects", () => {
  it("takes due runs in turns by project, not oldest first", async () => {
    const { fn, name, started } = blockingFunction();
    const runner = new EmbeddedRunner(await getDb(), [fn], { pollMs: 20, concurrency: 2, projectShare: 100 });
    runners.push(runner);
    const [a, b] = [`pro_${crypto.randomUUID()}`, `pro_${crypto.randomUUID()}`];
    await runner.send(events(name, a, 5)); // queued before the runner starts: all due at once
    await new Promise((r) => setTimeout(r, 5));
    await runner.send(events(name, b, 1));
    await runner.start();
    await until(() => started.length === 2);
    await new Promise((r) => setTimeout(r, 100)); // no third run: both slots are taken
    expect(started.sort()).toEqual([a, b].sort());
  });

  it("keeps slots for other projects: one project runs at most its share at once", async () => {
    const { fn, name, started } = blockingFunction();
    const runner = await startRunner(fn, { concurrency: 4, projectShare: 3 });
    const [a, b] = [`pro_${crypto.randomUUID()}`, `pro_${crypto.randomUUID()}`];
    await runner.send(events(name, a, 20));
    await until(() => started.length === 3);
    await new Promise((r) => setTimeout(r, 100));
    expect(started).toEqual([a, a, a]); // the fourth slot stays free for others
    await runner.send(events(name, b, 1));
    await until(() => started.length === 4);
    expect(started[3]).toBe(b);
  });
});

async function startRunner(fn: ReturnType<typeof blockingFunction>["fn"], options: { concurrency: number; projectShare: number }) {
  const runner = new EmbeddedRunner(await getDb(), [fn], { pollMs: 20, ...options });
  runners.push(runner);
  await runner.start();
  return runner;
}
