import { unixSeconds } from "@/lib/http/resource";
import type { ContractResponse } from "./schema";
import type { ContractRow } from "./service";

export function serializeContract(row: ContractRow): ContractResponse {
  return {
    id: row.id,
    object: "contract",
    createdAt: unixSeconds(row.createdAt),
    name: row.name,
    chainId: row.chainId,
    address: row.address,
    deleted: row.deleted,
    publicVerification: row.publicVerification,
    abi: row.abi as Record<string, unknown>[],
  };
}
