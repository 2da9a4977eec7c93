// Readable revert reasons: the revert data in a viem error, decoded against our contracts' and common errors.
import { BaseError, decodeErrorResult, isHex, parseAbi, size, slice, type Abi, type Hex } from "viem";
import { accountFactoryAbi, entryPointAbi, entryPointV08Abi, simple7702AccountAbi, smartAccountAbi, verifyingPaymasterAbi } from "@/contracts/artifacts";

const commonErrors = parseAbi([
  "error ERC20InsufficientBalance(address sender, uint256 balance, uint256 needed)",
  "error ERC20InsufficientAllowance(address spender, uint256 allowance, uint256 needed)",
  "error ERC20InvalidReceiver(address receiver)",
  "error ERC721NonexistentToken(uint256 tokenId)",
  "error ERC721IncorrectOwner(address sender, uint256 tokenId, address owner)",
  "error ERC721InsufficientApproval(address operator, uint256 tokenId)",
  "error ERC1155InsufficientBalance(address sender, uint256 balance, uint256 needed, uint256 tokenId)",
  "error AddressEmptyCode(address target)",
  "error FailedCall()",
]);

const errorAbi = [
  ...smartAccountAbi,
  ...accountFactoryAbi,
  ...verifyingPaymasterAbi,
  ...entryPointAbi,
  ...entryPointV08Abi,
  ...simple7702AccountAbi,
  ...commonErrors,
].filter((item) => item.type === "error") as Abi;

const PANICS: Record<number, string> = {
  0x01: "assertion failed",
  0x11: "arithmetic overflow or underflow",
  0x12: "division by zero",
  0x21: "invalid enum value",
  0x22: "invalid storage byte array",
  0x31: "pop on an empty array",
  0x32: "array index out of bounds",
  0x41: "out of memory",
  0x51: "call to an uninitialized function",
};

const show = (value: unknown): string =>
  typeof value === "bigint" ? value.toString() : Array.isArray(value) ? `[${value.map(show).join(", ")}]` : String(value);

/** A readable revert reason: Error(string), Panic, our contracts' and common OpenZeppelin custom errors, or the raw data. */
export function describeRevert(data: Hex | undefined): string {
  if (!data || data === "0x") return "reverted without a reason";
  try {
    const decoded = decodeErrorResult({ abi: errorAbi, data });
    if (decoded.errorName === "Error") return String(decoded.args?.[0]);
    if (decoded.errorName === "Panic") {
      const code = Number(decoded.args?.[0]);
      return `panic 0x${code.toString(16).padStart(2, "0")} (${PANICS[code] ?? "unknown"})`;
    }
    return `${decoded.errorName}(${(decoded.args ?? []).map(show).join(", ")})`;
  } catch {
    return size(data) >= 4 ? `custom error ${slice(data, 0, 4)} (data ${data})` : `reverted with data ${data}`;
  }
}

/** The revert data inside a viem error (eth_call / eth_estimateGas), if the node returned any. */
export function revertDataOf(err: unknown): Hex | undefined {
  if (!(err instanceof BaseError)) return undefined;
  let found: Hex | undefined;
  err.walk((e) => {
    const data = (e as { data?: unknown }).data;
    const hex = typeof data === "object" && data !== null ? (data as { data?: unknown }).data : data;
    if (typeof hex === "string" && isHex(hex)) found = hex;
    return false;
  });
  return found;
}
