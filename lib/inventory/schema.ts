import { z } from "zod";
import { chainIdField, listField, listInput } from "@/lib/http/fields";
import { listResponse } from "@/lib/http/resource";

const conId = z.string().regex(/^con_[\w-]{1,100}$/, "Expected a contract id (con_...)");
/** At most this many contracts named in one filter. */
export const MAX_CONTRACT_FILTER = 100;
const contractFilter = () => listField(conId).pipe(z.array(conId).max(MAX_CONTRACT_FILTER)).optional();

/** Players name the chain; the SDK sends the filter as `contract`. */
export const playerNativeInput = z.strictObject({ chainId: chainIdField() });
export const playerListInput = z.strictObject({ chainId: chainIdField(), ...listInput, contract: contractFilter() });
/** An account is on one chain; the SDK sends the filter as `contractId`. */
export const accountNativeInput = z.strictObject({});
export const accountListInput = z.strictObject({ ...listInput, contractId: contractFilter() });

export type InventoryListInput = { limit?: number; skip?: number; order?: "asc" | "desc"; contracts?: string[]; param: string };

export const ASSET_TYPES = ["ETH", "ERC20", "ERC721", "ERC1155"] as const;

export const inventoryItem = z.object({
  /** "ETH" is the chain's native coin, whatever its symbol (the SDK's AssetType has no other). */
  assetType: z.enum(ASSET_TYPES),
  /** The token contract (absent for the native coin). */
  address: z.string().optional(),
  /** NFTs: a number while it is a safe integer, else its decimal string (ids are uint256). */
  tokenId: z.union([z.number().int(), z.string()]).optional(),
  /** Base units (wei for the native coin). */
  amount: z.string(),
  /** Unix seconds of the last transfer seen; null when none is known (the native coin, or older than the lookback). */
  lastTransferredAt: z.number().int().nullable(),
});
export type InventoryItem = z.infer<typeof inventoryItem>;

export const inventoryListResponse = listResponse(inventoryItem);
export const nativeInventoryResponse = z.object({ object: z.literal("inventory"), url: z.string(), data: inventoryItem });
