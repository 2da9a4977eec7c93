import { unixSeconds } from "@/lib/http/resource";
import type { PaymasterResponse } from "./schema";
import type { PaymasterRow } from "./service";

/** The SDK's PaymasterResponse (id, object, createdAt, address, url, context) plus name and deleted. */
export function serializePaymaster(row: PaymasterRow): PaymasterResponse {
  return {
    id: row.id,
    object: "paymaster",
    createdAt: unixSeconds(row.createdAt),
    address: row.address,
    ...(row.url !== null && { url: row.url }),
    ...(row.context !== null && { context: row.context }),
    ...(row.name !== null && { name: row.name }),
    deleted: row.deleted,
  };
}
