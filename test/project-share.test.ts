import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { entryPointAbi } from "@/contracts/artifacts";
import { serviceDeployment } from "@/lib/chain/contracts";
import { projectShareUse, withProjectShare } from "@/lib/http/concurrency";
import { projectScope } from "@/lib/http/rate-limit";
import type { ProjectWithKeys } from "@/lib/projects/service";
import { call, expectError, newProject } from "./helpers/api";

/** A promise the test settles by hand: work that holds a slot until released. */
const gate = () => {
  let release!: () => void;
  const done = new Promise<void>((resolve) => (release = resolve));
  return { done, release };
};

let a: ProjectWithKeys;
let b: ProjectWithKeys;
const contract: Record<string, string> = {};

beforeAll(async () => {
  [a, b] = await Promise.all([newProject("share-a"), newProject("share-b")]);
  for (const project of [a, b]) {
    const res = await call("POST", "/v1/contracts", {
      key: project.keys.test.secret,
      json: { name: "EntryPoint", chainId: 31337, address: serviceDeployment().entryPoint, abi: entryPointAbi },
    });
    contract[project.id] = res.body.id;
  }
});

afterEach(() => vi.unstubAllEnvs());

const readBalance = (project: ProjectWithKeys) =>
  call("GET", `/v1/contracts/${contract[project.id]}/read`, {
    key: project.keys.test.secret,
    query: { functionName: "balanceOf", functionArgs: [serviceDeployment().paymaster] },
  });

describe("per-project share of chain work", () => {
  it("queues a project's work behind its own slots, in order, and refuses past its queue", async () => {
    vi.stubEnv("CHAIN_CONCURRENCY_PER_PROJECT", "2");
    vi.stubEnv("CHAIN_QUEUE_PER_PROJECT", "2");
    const gates = [gate(), gate(), gate(), gate()];
    const order: number[] = [];
    const runs = gates.map((g, i) => withProjectShare("p1", async () => (await g.done, order.push(i), i)));
    await Promise.resolve();
    expect(projectShareUse("p1")).toEqual({ running: 2, waiting: 2 });
    await expect(withProjectShare("p1", async () => "over")).rejects.toMatchObject({ status: 429 });
    // another project is not behind p1's queue
    expect(await withProjectShare("p2", async () => "p2 ran")).toBe("p2 ran");
    gates[1]!.release();
    gates[0]!.release();
    await Promise.all(runs.slice(0, 2));
    gates[3]!.release();
    gates[2]!.release();
    expect(await Promise.all(runs)).toEqual([0, 1, 2, 3]);
    expect(projectShareUse("p1")).toEqual({ running: 0, waiting: 0 });
    // a failing piece of work frees its slot too
    await expect(withProjectShare("p1", async () => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
    expect(projectShareUse("p1")).toEqual({ running: 0, waiting: 0 });
  });

  it("answers 429 to a project whose share is taken, while another project's reads go through", async () => {
    vi.stubEnv("CHAIN_CONCURRENCY_PER_PROJECT", "1");
    vi.stubEnv("CHAIN_QUEUE_PER_PROJECT", "0");
    const held = gate();
    const holder = withProjectShare(projectScope({ projectId: a.id, livemode: false }), () => held.done);
    try {
      const refused = expectError(await readBalance(a), 429, "rate_limit_error");
      expect(refused.message).toContain("at most 1 at once");
      expect((await readBalance(b)).status).toBe(200);
      // live mode is a lane of its own
      expect(projectShareUse(projectScope({ projectId: a.id, livemode: true }))).toEqual({ running: 0, waiting: 0 });
    } finally {
      held.release();
      await holder;
    }
    expect((await readBalance(a)).status).toBe(200);
  });
});
