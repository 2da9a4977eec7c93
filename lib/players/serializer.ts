import { unixSeconds } from "@/lib/http/resource";
import type { PlayerResponse } from "./schema";
import type { PlayerRow } from "./service";

/** Transaction intents arrive with their own domain; until then the list is empty. */
export function serializePlayer(row: PlayerRow, accounts: PlayerResponse["accounts"] = []): PlayerResponse {
  return {
    id: row.id,
    object: "player",
    createdAt: unixSeconds(row.createdAt),
    name: row.name,
    email: row.email,
    description: row.description,
    livemode: row.livemode,
    metadata: row.metadata ?? null,
    accounts,
    transactionIntents: [],
  };
}
