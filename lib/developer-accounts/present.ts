import type { Queryable } from "@/lib/db/client";
import { unixSeconds } from "@/lib/http/resource";
import { embeddedIntents } from "@/lib/intent-records/embedded";
import type { DeveloperAccountResponse } from "./schema";
import type { DeveloperAccountRow } from "./service";

/** Developer accounts as the API shows them, with their latest intents as `{id}` or expanded. */
export async function presentDeveloperAccounts(db: Queryable, rows: DeveloperAccountRow[], expand: readonly string[] | undefined): Promise<DeveloperAccountResponse[]> {
  const intentsBy = await embeddedIntents(db, "accountId", rows.map((r) => r.id), expand?.includes("transactionIntents") ?? false);
  return rows.map((row) => ({
    id: row.id,
    object: "developerAccount",
    createdAt: unixSeconds(row.createdAt),
    address: row.address,
    name: row.name,
    custodial: row.custodial,
    deleted: row.deleted,
    transactionIntents: intentsBy.get(row.id) ?? [],
  }));
}

export const presentDeveloperAccount = async (db: Queryable, row: DeveloperAccountRow, expand: readonly string[] | undefined) =>
  (await presentDeveloperAccounts(db, [row], expand))[0]!;
