import { unixSeconds } from "@/lib/http/resource";
import type { PaymasterResponse } from "./schema";
import type { PaymasterRow, PaymasterWithCode } from "./service";

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

/** What the address holds, in words, when it has no code yet where it matters; null when it has. */
export function codeNotice({ row, deployedOn, chainId }: PaymasterWithCode): string | null {
  if (chainId !== undefined ? deployedOn.includes(chainId) : deployedOn.length > 0) return null;
  const where = chainId !== undefined ? `on chain ${chainId}` : `on any ${row.livemode ? "live" : "test"} chain`;
  return `No code at this address yet ${where}: the paymaster is registered, and a policy can sponsor through it once its contract is deployed on the policy's chain.`;
}

/** A single answer: the paymaster, the chains where its address has code, and a notice while it has none. */
export function serializePaymasterWithCode(found: PaymasterWithCode): PaymasterResponse {
  const notice = codeNotice(found);
  return { ...serializePaymaster(found.row), deployedOn: found.deployedOn, ...(notice && { notice }) };
}
