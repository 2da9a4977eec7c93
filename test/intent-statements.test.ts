import { eq } from "drizzle-orm";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { entryPointAbi } from "@/contracts/artifacts";
import { serviceDeployment } from "@/lib/chain/contracts";
import { getDb } from "@/lib/db/client";
import { sponsorshipEntries, sponsorshipHolds } from "@/lib/db/schema";
import { createIntent } from "@/lib/intents/service";
import { metrics } from "@/lib/metrics";
import { usdOf } from "@/lib/sponsorship/ledger";
import type { ProjectWithKeys } from "@/lib/projects/service";
import { call, newProject } from "./helpers/api";

let project: ProjectWithKeys;
let key: string;
let contract: string;
let policy: string;

const counted = async () => (await metrics.dbStatements.get()).values[0]?.value ?? 0;

/**
 * The statements of the least costly of `runs` calls: a runner's poll (every 500 ms) or a connection's first type
 * lookup may land inside one call, never inside all of them.
 */
async function fewestStatements(runs: (() => Promise<unknown>)[]): Promise<number> {
  let fewest = Infinity;
  for (const run of runs) {
    const before = await counted();
    await run();
    fewest = Math.min(fewest, (await counted()) - before);
  }
  return fewest;
}

const newPlayer = async () => {
  const player = (await call("POST", "/v1/players", { key, json: { name: "p" } })).body as { id: string };
  const account = (await call("POST", "/v1/accounts", { key, json: { chainId: 31337, player: player.id } })).body as { id: string };
  return { player: player.id, account: account.id };
};

/** What bench/intents.ts sends: a player's custodial account calls depositTo(<its account>), sponsored by a pay_for_user policy. */
const intentOf = (p: { player: string; account: string }) => async () =>
  createIntent(await getDb(), { projectId: project.id, livemode: false }, { chainId: 31337, player: p.player, policy, interactions: [{ contract, functionName: "depositTo", functionArgs: [p.account] }] });

beforeAll(async () => {
  vi.stubEnv("RATE_LIMIT_PER_SECOND", "0");
  project = await newProject("intent statements");
  key = project.keys.test.secret;
  const abi = entryPointAbi.filter((item) => item.type === "function" && item.name === "depositTo");
  contract = (await call("POST", "/v1/contracts", { key, json: { name: "EntryPoint", chainId: 31337, address: serviceDeployment().entryPoint, abi } })).body.id;
  policy = (await call("POST", "/v1/policies", { key, json: { name: "sponsor", chainId: 31337, strategy: { sponsorSchema: "pay_for_user" } } })).body.id;
  await call("POST", "/v1/policy_rules", { key, json: { policy, type: "contract_functions", contract, functionName: "depositTo" } });
});

describe(`an intent's statements (${process.env.DATABASE_URL ? "PostgreSQL" : "PGlite"})`, () => {
  it("records a sponsored custodial intent in 4: the policy with its rules, the player's account and key, the contract, then the intent with its hold", async () => {
    const db = await getDb();
    const players = await Promise.all(Array.from({ length: 4 }, newPlayer));
    // The project's first hold on the chain makes its balance row first (two statements more, once).
    await intentOf(players[0]!)();
    // Each account's first op (it deploys the account), then a second op of each while the first is pending.
    expect(await fewestStatements(players.slice(1).map(intentOf))).toBe(4);
    expect(await fewestStatements(players.slice(1).map(intentOf))).toBe(4);

    // The one statement wrote the hold and its journal entry as ledger.ts hold() does.
    const { intent } = await intentOf(players[1]!)();
    const [hold] = await db.select().from(sponsorshipHolds).where(eq(sponsorshipHolds.intentId, intent.id));
    expect(hold).toMatchObject({ status: "held", amount: intent.maxCost, cause: "intent", policyId: policy, playerId: players[1]!.player, accountId: intent.accountId, chainId: 31337 });
    const entries = await db.select().from(sponsorshipEntries).where(eq(sponsorshipEntries.holdId, hold!.id));
    expect(entries).toEqual([
      expect.objectContaining({ kind: "hold", amount: intent.maxCost, usd: usdOf(BigInt(intent.maxCost), hold!.usdPrice), cause: "intent", intentId: intent.id, policyId: policy, playerId: players[1]!.player }),
    ]);
  });
});
