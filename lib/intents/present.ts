import { inArray } from "drizzle-orm";
import { presentAccounts } from "@/lib/accounts/present";
import type { Queryable } from "@/lib/db/client";
import { accounts, developerAccounts, policies } from "@/lib/db/schema";
import { presentDeveloperAccounts } from "@/lib/developer-accounts/present";
import { presentPlayers } from "@/lib/players/present";
import { playersByIds } from "@/lib/players/service";
import { presentPolicies } from "@/lib/policies/present";
import type { ProjectContext } from "@/lib/tenant";
import { signingUrl } from "./signing-link";
import type { IntentResponse } from "./schema";
import { serializeIntent } from "@/lib/intent-records/serializer";
import type { IntentRow } from "./service";

type Expand = readonly string[] | undefined;
type Ref = { id: string; [key: string]: unknown };

/**
 * Intents as the API shows them, with player, account and policy expanded when asked; one
 * awaiting its owner's signature carries the signing page's link (on `origin`, or PUBLIC_URL).
 */
export async function presentIntents(db: Queryable, ctx: ProjectContext, rows: IntentRow[], expand: Expand, origin?: string): Promise<IntentResponse[]> {
  const unique = (ids: (string | null)[]) => [...new Set(ids.filter((id): id is string => id !== null))];
  const players = new Map<string, Ref>();
  const accountsById = new Map<string, Ref>();
  const policiesById = new Map<string, Ref>();
  if (expand?.includes("player")) {
    for (const p of await presentPlayers(db, ctx, await playersByIds(db, ctx, unique(rows.map((r) => r.playerId))), undefined)) players.set(p.id, p);
  }
  if (expand?.includes("account")) {
    const ids = unique(rows.map((r) => r.accountId));
    const playerAccountIds = ids.filter((id) => id.startsWith("acc_"));
    const developerIds = ids.filter((id) => id.startsWith("dac_"));
    const found = playerAccountIds.length ? await db.select().from(accounts).where(inArray(accounts.id, playerAccountIds)) : [];
    for (const a of await presentAccounts(db, ctx, found, undefined)) accountsById.set(a.id, a);
    const developers = developerIds.length ? await db.select().from(developerAccounts).where(inArray(developerAccounts.id, developerIds)) : [];
    for (const a of await presentDeveloperAccounts(db, developers, undefined)) accountsById.set(a.id, a);
  }
  if (expand?.includes("policy")) {
    const ids = unique(rows.map((r) => r.policyId));
    const found = ids.length ? await db.select().from(policies).where(inArray(policies.id, ids)) : [];
    for (const p of await presentPolicies(db, ctx, found, undefined)) policiesById.set(p.id, p);
  }
  return Promise.all(
    rows.map(async (row) => {
      const intent = serializeIntent(row, {
        player: row.playerId ? players.get(row.playerId) : undefined,
        account: accountsById.get(row.accountId),
        policy: row.policyId ? policiesById.get(row.policyId) : undefined,
      });
      const url = intent.nextAction ? await signingUrl(row, origin) : undefined;
      if (intent.nextAction && url) intent.nextAction.payload.signingUrl = url;
      return intent;
    }),
  );
}

export const presentIntent = async (db: Queryable, ctx: ProjectContext, row: IntentRow, expand: Expand, origin?: string) =>
  (await presentIntents(db, ctx, [row], expand, origin))[0]!;
