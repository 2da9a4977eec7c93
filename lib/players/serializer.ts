import { unixSeconds } from "@/lib/http/resource";
import type { PlayerResponse } from "./schema";
import type { PlayerRow } from "./service";

export function serializePlayer(
  row: PlayerRow,
  accounts: PlayerResponse["accounts"] = [],
  transactionIntents: PlayerResponse["transactionIntents"] = [],
): PlayerResponse {
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
    transactionIntents,
  };
}
