import crypto from "node:crypto";
import { InngestTestEngine } from "@inngest/test";
import { eq, inArray, sql } from "drizzle-orm";
import type { Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { beforeAll, describe, expect, it } from "vitest";
import { serviceDeployment } from "@/lib/chain/contracts";
import { getDb } from "@/lib/db/client";
import { functionRuns, transactionIntents } from "@/lib/db/schema";
import { createIntentInput } from "@/lib/intents/schema";
import { createIntent } from "@/lib/intents/service";
import type { ProjectContext } from "@/lib/tenant";
import { newProject } from "@/test/helpers/api";
import { userOperationEvents } from "@/test/helpers/chain";
import { eventually, intentRow, runInProcessOnly, sponsoredDeposits } from "@/test/helpers/relay-fixtures";
import { cancelUnsignedIntent } from "./expire";
import { inngest } from "../client";
import { relayJob } from "@/lib/jobs/messages";
import { relayIntent, relayIntents } from "./relay";
import { resendUnsettledIntents } from "./unsettled";

let ctx: ProjectContext;
let deposits: Awaited<ReturnType<typeof sponsoredDeposits>>;

beforeAll(async () => {
  await runInProcessOnly([relayIntents, relayIntent, cancelUnsignedIntent]);
  const project = await newProject("unsettled intents");
  ctx = { projectId: project.id, livemode: false };
  deposits = await sponsoredDeposits(project.keys.test.secret);
});

/** An intent recorded as the API records it, but with no event sent: what a process that died right after leaves. */
async function recordedOnly(extra: Record<string, unknown> = {}) {
  const input = createIntentInput.parse({
    chainId: 31337,
    policy: deposits.policy,
    confirmationBlocks: 0,
    interactions: [{ contract: deposits.contract, functionName: "depositTo", functionArgs: [serviceDeployment().paymaster] }],
    ...extra,
  });
  return (await createIntent(await getDb(), ctx, input)).intent;
}

const age = async (ids: string[], interval: string) =>
  (await getDb()).update(transactionIntents).set({ updatedAt: sql`now() - ${interval}::interval` }).where(inArray(transactionIntents.id, ids));

const runsFor = async (eventId: string) => (await getDb()).select().from(functionRuns).where(eq(functionRuns.eventId, eventId));

const timesOnChain = async (userOpHash: Hex) => (await userOperationEvents(userOpHash)).length;

const sweep = async () => {
  const { result, error } = await new InngestTestEngine({ function: resendUnsettledIntents }).execute();
  expect(error).toBeUndefined();
  return result as { intents: number };
};

describe("the resend-unsettled-intents function", () => {
  it("queues the lost relay of an intent recorded a while ago, which then lands once; a second sweep changes nothing", async () => {
    const stranded = await recordedOnly();
    const fresh = await recordedOnly();
    const forgotten = await recordedOnly();
    const unsigned = await recordedOnly({ externalOwnerAddress: privateKeyToAccount(generatePrivateKey()).address });
    expect(unsigned.status).toBe("awaiting_signature");
    await age([stranded.id, unsigned.id], "2 minutes");
    // older than Inngest remembers event ids for: sending it again could run it twice
    await age([forgotten.id], "2 days");
    expect(await runsFor(`relay:${stranded.id}`)).toHaveLength(0);

    expect((await sweep()).intents).toBeGreaterThanOrEqual(2);
    const relays = await runsFor(`relay:${stranded.id}`);
    expect(relays).toHaveLength(1);
    // the project named, as the runner shares its slots by it
    expect(relays[0]!.event.data).toEqual({ intentId: stranded.id, projectId: ctx.projectId });
    // a sponsored intent awaiting its signature gets its cancellation back (it sleeps for the sponsorship)
    const expiries = await runsFor(`expire:${unsigned.id}`);
    expect(expiries).toHaveLength(1);
    expect(expiries[0]!.event.data).toEqual({ intentId: unsigned.id, projectId: ctx.projectId });
    // one just recorded is left to the event its request is sending
    expect(await runsFor(`relay:${fresh.id}`)).toHaveLength(0);
    expect(await runsFor(`relay:${forgotten.id}`)).toHaveLength(0);

    const landed = await eventually("the stranded intent to land", async () => {
      const row = await intentRow(stranded.id);
      return row.status === "successful" && row.transactionHash ? row : false;
    }, 60_000);
    expect(landed.response).toMatchObject({ status: 1 });

    await sweep();
    expect(await runsFor(`relay:${stranded.id}`)).toHaveLength(1);
    expect(await runsFor(`expire:${unsigned.id}`)).toHaveLength(1);
    expect(await timesOnChain(stranded.userOperationHash as Hex)).toBe(1);
    expect((await intentRow(fresh.id)).status).toBe("pending");
  });

  it("starts the relay again of an intent still pending after its run ended (issue 13.17), a bounded number of times", async () => {
    const stuck = await recordedOnly();
    // What runs from before the fix left: the run completed, the intent pending for ever.
    await (await getDb()).insert(functionRuns).values({
      id: `run_${crypto.randomUUID()}`,
      functionId: relayIntent.id(inngest.id),
      eventId: `relay:${stuck.id}`,
      event: { ...relayJob(stuck.id, ctx.projectId), ts: Date.now() },
      status: "completed",
      steps: { order: [], state: {} },
    });
    await age([stuck.id], "2 minutes");
    await sweep();
    expect(await runsFor(`relay:${stuck.id}:1`)).toHaveLength(1);
    const landed = await eventually("the stuck intent to land", async () => {
      const row = await intentRow(stuck.id);
      return row.status === "successful" && row;
    }, 60_000);
    expect(landed.response).toMatchObject({ status: 1 });
    await sweep();
    expect(await runsFor(`relay:${stuck.id}:2`)).toHaveLength(0);
    expect(await timesOnChain(stuck.userOperationHash as Hex)).toBe(1);
  });
});
