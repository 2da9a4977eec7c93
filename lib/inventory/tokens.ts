import { parseAbi, type Abi } from "viem";

/** The events token holdings are read from: ERC-721's Transfer (tokenId indexed) and ERC-1155's two. */
export const nftEvents = parseAbi([
  "event Transfer(address indexed from, address indexed to, uint256 indexed tokenId)",
  "event TransferSingle(address indexed operator, address indexed from, address indexed to, uint256 id, uint256 value)",
  "event TransferBatch(address indexed operator, address indexed from, address indexed to, uint256[] ids, uint256[] values)",
]);

/** ERC-20's Transfer: the same topic as ERC-721's, told apart by its unindexed value (three topics, not four). */
export const erc20TransferEvent = parseAbi(["event Transfer(address indexed from, address indexed to, uint256 value)"])[0];

export type TokenKind = "erc20" | "nft" | "unknown";

/**
 * What a registered contract's ABI says it is. ERC-721 and ERC-1155 both have something ERC-20 lacks
 * (ownerOf, TransferSingle/TransferBatch, balanceOf(address,uint256)); without those, balanceOf(address)
 * with decimals() or transfer(address,uint256) is ERC-20. An ABI that says neither (often an empty one)
 * is "unknown": both inventories try it.
 */
export function tokenKind(abi: unknown[]): TokenKind {
  const items = abi.filter((i): i is { type: string; name?: string; inputs?: unknown[] } => typeof i === "object" && i !== null && "type" in i);
  const fn = (name: string, inputs?: number) => items.some((i) => i.type === "function" && i.name === name && (inputs === undefined || (i.inputs ?? []).length === inputs));
  const event = (name: string) => items.some((i) => i.type === "event" && i.name === name);
  if (fn("ownerOf", 1) || fn("balanceOf", 2) || event("TransferSingle") || event("TransferBatch")) return "nft";
  if (fn("balanceOf", 1) && (fn("decimals", 0) || fn("transfer", 2))) return "erc20";
  return "unknown";
}

/** balanceOf and decimals, whatever ABI the contract was registered with (the stored one may be empty). */
export const erc20Reads = parseAbi(["function balanceOf(address) view returns (uint256)", "function decimals() view returns (uint8)"]) as Abi;
