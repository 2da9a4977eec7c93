import crypto from "node:crypto";
import { eq, like } from "drizzle-orm";
import { NonRetriableError } from "inngest";
import { afterEach, describe, expect, it, onTestFinished } from "vitest";
import { getDb } from "@/lib/db/client";
import { functionRuns } from "@/lib/db/schema";
import { inngest } from "./client";
import { CRON_EVENT, cronSlots, EmbeddedRunner, lastCronSlot, wakeTime } from "./runner";

const runners: EmbeddedRunner[] = [];
afterEach(async () => {
  await Promise.all(runners.splice(0).map((r) => r.stop()));
});

const uid = () => crypto.randomUUID();

async function runnerWith(functions: ConstructorParameters<typeof EmbeddedRunner>[1], options = {}) {
  const runner = new EmbeddedRunner(await getDb(), functions, { pollMs: 20, retryBaseMs: 10, ...options });
  runners.push(runner);
  await runner.start();
  return runner;
}

async function settled(eventId: string, timeoutMs = 10_000) {
  const db = await getDb();
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const rows = await db.select().from(functionRuns).where(eq(functionRuns.eventId, eventId));
    if (rows.length && rows.every((r) => r.status === "completed" || r.status === "failed")) return rows;
    if (Date.now() > deadline) throw new Error(`runs for ${eventId} did not settle: ${JSON.stringify(rows.map((r) => [r.status, r.attempt, r.error]))}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("the embedded runner", () => {
  it("runs each step once, in order, stores the output, and starts one run per event id", async () => {
    const calls: string[] = [];
    const name = `test/steps-${uid()}`;
    const fn = inngest.createFunction({ id: `steps-${uid()}`, triggers: [{ event: name }] }, async ({ event, step }) => {
      const a = await step.run("a", () => (calls.push("a"), (event.data.n as number) + 1));
      const b = await step.run("b", () => (calls.push("b"), a * 2));
      return { a, b };
    });
    const runner = await runnerWith([fn]);
    const id = uid();
    await runner.send([{ name, data: { n: 1 }, id }]);
    await runner.send([{ name, data: { n: 100 }, id }]);
    const [run] = await settled(id);
    expect(run).toMatchObject({ status: "completed", output: { a: 2, b: 4 } });
    expect(calls).toEqual(["a", "b"]);
    expect(run!.steps.order).toHaveLength(2);
  });

  it("retries a failing step with backoff, then carries on; gives up after the function's retries", async () => {
    let tries = 0;
    const name = `test/flaky-${uid()}`;
    const flaky = inngest.createFunction({ id: `flaky-${uid()}`, retries: 3, triggers: [{ event: name }] }, async ({ step }) => {
      const value = await step.run("flaky", () => {
        tries++;
        if (tries < 3) throw new Error(`try ${tries} failed`);
        return "ok";
      });
      return value;
    });
    const doomedName = `test/doomed-${uid()}`;
    let doomedTries = 0;
    const doomed = inngest.createFunction({ id: `doomed-${uid()}`, retries: 2, triggers: [{ event: doomedName }] }, async ({ step }) => {
      await step.run("never", () => {
        doomedTries++;
        throw new Error("always broken");
      });
    });
    const fatalName = `test/fatal-${uid()}`;
    let fatalTries = 0;
    const fatal = inngest.createFunction({ id: `fatal-${uid()}`, retries: 5, triggers: [{ event: fatalName }] }, async ({ step }) => {
      await step.run("fatal", () => {
        fatalTries++;
        throw new NonRetriableError("no point retrying");
      });
    });
    const runner = await runnerWith([flaky, doomed, fatal]);
    const [a, b, c] = [uid(), uid(), uid()];
    await runner.send([
      { name, data: {}, id: a },
      { name: doomedName, data: {}, id: b },
      { name: fatalName, data: {}, id: c },
    ]);
    expect((await settled(a))[0]).toMatchObject({ status: "completed", output: "ok" });
    expect(tries).toBe(3);
    const [failed] = await settled(b);
    expect(failed).toMatchObject({ status: "failed" });
    expect(failed!.error).toMatch(/always broken/);
    expect(doomedTries).toBe(3);
    expect((await settled(c))[0]!.status).toBe("failed");
    expect(fatalTries).toBe(1);
  });

  it("sleeps durably: the run waits in the database, not in memory", async () => {
    const name = `test/sleepy-${uid()}`;
    const fn = inngest.createFunction({ id: `sleepy-${uid()}`, triggers: [{ event: name }] }, async ({ step }) => {
      const before = await step.run("before", () => Date.now());
      await step.sleep("nap", "300ms");
      const after = await step.run("after", () => Date.now());
      return after - before;
    });
    const runner = await runnerWith([fn]);
    const id = uid();
    await runner.send([{ name, data: {}, id }]);
    // While it naps, the run is a row due at the nap's end (300 ms after the first step ran), held by no process.
    const db = await getDb();
    const row = async () => (await db.select().from(functionRuns).where(eq(functionRuns.eventId, id)))[0];
    let waiting = await row();
    for (const end = Date.now() + 10_000; !(waiting?.status === "queued" && waiting.runAt.getTime() > Date.now()) && Date.now() < end; ) {
      await new Promise((r) => setTimeout(r, 5));
      waiting = await row();
    }
    expect(waiting).toMatchObject({ status: "queued", lockedUntil: null });
    const before = waiting!.steps.state[waiting!.steps.order[0]!]!.data as number;
    expect(waiting!.runAt.getTime()).toBeGreaterThanOrEqual(before + 300);
    const [run] = await settled(id);
    expect(run!.output as number).toBeGreaterThanOrEqual(290);
  });

  it("resumes a run whose process died mid-step in another process, without redoing finished steps", async () => {
    const name = `test/crash-${uid()}`;
    const id = `crash-${uid()}`;
    const done: string[] = [];
    let crashed = false;
    const make = () =>
      inngest.createFunction({ id, triggers: [{ event: name }] }, async ({ step }) => {
        await step.run("first", () => done.push("first"));
        await step.run("second", async () => {
          if (!crashed) {
            crashed = true;
            await new Promise(() => {}); // the first process hangs here forever…
          }
          done.push("second");
        });
        return done.length;
      });
    // …and loses its database, as a killed process would: its lease is no longer renewed.
    let dead = false;
    const db = await getDb();
    const dying = new Proxy(db, {
      get: (target, prop, receiver) => {
        if (dead) throw new Error("this process is dead");
        return Reflect.get(target, prop, receiver);
      },
    });
    const first = new EmbeddedRunner(dying, [make()], { pollMs: 60_000, leaseMs: 300 });
    await first.start();
    const eventId = uid();
    await first.send([{ name, data: {}, id: eventId }]);
    while (!crashed) await new Promise((r) => setTimeout(r, 10));
    dead = true;
    // a second process with the same definitions takes over once the lease runs out
    await runnerWith([make()], { leaseMs: 300 });
    const [run] = await settled(eventId);
    expect(run).toMatchObject({ status: "completed", output: 2 });
    expect(done).toEqual(["first", "second"]);
  });

  it("keeps the lease of a run whose step outlasts it: neither this process nor another runs it twice", async () => {
    const name = `test/slow-${uid()}`;
    const id = `slow-${uid()}`;
    let runs = 0;
    const make = () =>
      inngest.createFunction({ id, triggers: [{ event: name }] }, async ({ step }) =>
        step.run("slow", async () => {
          runs++;
          await new Promise((r) => setTimeout(r, 1_500));
          return "done";
        }),
      );
    const first = await runnerWith([make()], { leaseMs: 300 });
    await runnerWith([make()], { leaseMs: 300 });
    const eventId = uid();
    await first.send([{ name, data: {}, id: eventId }]);
    const [run] = await settled(eventId);
    expect(run).toMatchObject({ status: "completed", output: "done" });
    expect(runs).toBe(1);
  });

  it("takes over a dead process's runs at once when it owns the database alone (embedded)", async () => {
    const name = `test/exclusive-${uid()}`;
    const id = `exclusive-${uid()}`;
    let hung = false;
    const make = () =>
      inngest.createFunction({ id, triggers: [{ event: name }] }, async ({ step }) =>
        step.run("only", async () => {
          if (!hung) {
            hung = true;
            await new Promise(() => {});
          }
          return "done";
        }),
      );
    const dead = new EmbeddedRunner(await getDb(), [make()], { pollMs: 20, leaseMs: 600_000 });
    await dead.start();
    const eventId = uid();
    await dead.send([{ name, data: {}, id: eventId }]);
    while (!hung) await new Promise((r) => setTimeout(r, 10));
    // The dead process holds the run under a lease of 10 minutes: finishing it now is taking it over, not waiting.
    const [held] = await (await getDb()).select().from(functionRuns).where(eq(functionRuns.eventId, eventId));
    expect(held!.status).toBe("running");
    expect(held!.lockedUntil!.getTime()).toBeGreaterThan(Date.now() + 500_000);
    await runnerWith([make()], { exclusive: true });
    const [run] = await settled(eventId);
    expect(run).toMatchObject({ status: "completed", output: "done" });
  });

  it("runs many runs at once: as many at the same moment as its concurrency, never more", async () => {
    const CONCURRENCY = 8;
    const name = `test/many-${uid()}`;
    // Each run's step holds until CONCURRENCY steps are executing together (or 10 s pass, so a runner that runs them
    // one by one fails the count below rather than hanging): with slots to spare, the first CONCURRENCY runs overlap.
    let executing = 0;
    let peak = 0;
    let full!: () => void;
    const allIn = new Promise<void>((resolve) => (full = resolve));
    const giveUp = setTimeout(() => full(), 10_000);
    onTestFinished(() => clearTimeout(giveUp));
    const fn = inngest.createFunction({ id: `many-${uid()}`, triggers: [{ event: name }] }, async ({ event, step }) =>
      step.run("double", async () => {
        executing++;
        peak = Math.max(peak, executing);
        if (executing === CONCURRENCY) full();
        await allIn;
        executing--;
        return (event.data.i as number) * 2;
      }),
    );
    const runner = await runnerWith([fn], { concurrency: CONCURRENCY });
    const ids = Array.from({ length: 5 * CONCURRENCY }, () => uid());
    await runner.send(ids.map((id, i) => ({ name, data: { i }, id })));
    const outputs = await Promise.all(ids.map(async (id) => (await settled(id, 20_000))[0]!.output));
    expect(outputs).toEqual(ids.map((_, i) => i * 2));
    expect(peak).toBe(CONCURRENCY);
  });

  it("runs a cron function once per slot, however many runners share the database", async () => {
    const seen: { name: string; cron: unknown }[] = [];
    const id = `every-second-${uid()}`;
    // cron-parser takes a seconds field, which lets the test see several slots quickly
    const fn = inngest.createFunction({ id, triggers: [{ cron: "* * * * * *" }] }, async ({ event, step }) =>
      step.run("tick", () => {
        seen.push({ name: event.name, cron: (event.data as { cron?: string }).cron });
        return event.id;
      }),
    );
    await Promise.all([runnerWith([fn]), runnerWith([fn]), runnerWith([fn])]);
    await new Promise((r) => setTimeout(r, 3_500));
    await Promise.all(runners.splice(0).map((r) => r.stop()));
    const runs = await (await getDb()).select().from(functionRuns).where(like(functionRuns.functionId, `%${id}`));
    // the slot before the start, then one a second: about 4 (the last one may be queued still), each run once
    const completed = runs.filter((r) => r.status === "completed");
    expect(completed.length).toBeGreaterThanOrEqual(3);
    expect(runs.length).toBeLessThanOrEqual(5);
    expect(new Set(runs.map((r) => r.eventId)).size).toBe(runs.length);
    expect(seen).toHaveLength(completed.length);
    expect(seen.every((e) => e.name === CRON_EVENT && e.cron === "* * * * * *")).toBe(true);
  });

  it("reads cron schedules in UTC, or in the time zone Inngest's TZ= prefix names", () => {
    const now = new Date("2026-11-25T12:00:30.000Z");
    expect(new Date(lastCronSlot("* * * * *", now)).toISOString()).toBe("2026-11-25T12:00:00.000Z");
    expect(new Date(lastCronSlot("0 9 * * *", now)).toISOString()).toBe("2026-11-25T09:00:00.000Z");
    expect(new Date(lastCronSlot("TZ=Europe/Paris 0 9 * * *", now)).toISOString()).toBe("2026-11-25T08:00:00.000Z");
    expect(() => lastCronSlot("every minute", now)).toThrow();
    // A tick skips parsing until the next slot; exactly on a slot, that is the slot itself, never the one after.
    expect(cronSlots("* * * * *", now)).toEqual({ last: Date.parse("2026-11-25T12:00:00.000Z"), next: Date.parse("2026-11-25T12:01:00.000Z") });
    const onSlot = cronSlots("* * * * *", new Date("2026-11-25T12:01:00.000Z"));
    expect(onSlot.next).toBeLessThanOrEqual(Date.parse("2026-11-25T12:01:00.000Z"));
  });

  it("reads sleep durations and dates", () => {
    expect(wakeTime("1s", 0)).toBe(1000);
    expect(wakeTime("1h30m", 0)).toBe(5_400_000);
    expect(wakeTime("250ms", 0)).toBe(250);
    expect(wakeTime("2030-01-01T00:00:00.000Z", 0)).toBe(Date.parse("2030-01-01T00:00:00.000Z"));
    expect(() => wakeTime("soon", 0)).toThrow(/unsupported/);
  });
});
