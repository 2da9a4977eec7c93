import { unixSeconds } from "@/lib/http/resource";
import type { PlayerResponse } from "./schema";
import type { PlayerRow } from "./service";

/**
 * Accounts and transaction intents arrive with their own domains; until a player has any,
 * both lists are empty whether expanded or not.
 */
export function serializePlayer(row: PlayerRow): PlayerResponse {
  return {
    id: row.id,
    object: "player",
    createdAt: unixSeconds(row.createdAt),
    name: row.name,
    email: row.email,
    description: row.description,
    livemode: row.livemode,
    metadata: row.metadata ?? null,
    accounts: [],
    transactionIntents: [],
  };
}
