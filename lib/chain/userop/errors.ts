// The errors a user operation meets before it is sent: the account cannot pay, its call reverts, the EntryPoint refuses it.
import { formatEther, type Address, type Hex } from "viem";
import { ApiError } from "@/lib/errors";

/** The account cannot pay: for an unsponsored op its gas prefund plus the value it sends, or the value alone. */
export class InsufficientFundsError extends ApiError {
  constructor(
    readonly account: Address,
    /** What the account's ETH balance must cover (wei): the prefund its EntryPoint deposit does not cover, plus value sent. */
    readonly required: bigint,
    /** The account's balance (wei). */
    readonly available: bigint,
    readonly breakdown: { gasPrefund: bigint; deposit: bigint; value: bigint },
    symbol = "ETH",
  ) {
    const parts = [
      breakdown.gasPrefund > 0n ? `gas prefund ${formatEther(breakdown.gasPrefund)} ${symbol}` : null,
      breakdown.deposit > 0n ? `less its EntryPoint deposit ${formatEther(breakdown.deposit)} ${symbol}` : null,
      breakdown.value > 0n ? `value sent ${formatEther(breakdown.value)} ${symbol}` : null,
    ].filter(Boolean);
    super(
      400,
      "invalid_request_error",
      `Account ${account} cannot pay for this operation: it needs ${formatEther(required)} ${symbol}` +
        (parts.length ? ` (${parts.join(", ")})` : "") +
        ` but holds ${formatEther(available)} ${symbol}. Fund the account or use a sponsoring policy.`,
    );
  }

  get shortfall(): bigint {
    return this.required - this.available;
  }
}

/** The operation's call (the account's execution) reverts; `reason` is the decoded revert data. */
export class CallRevertedError extends ApiError {
  constructor(
    readonly revertData: Hex,
    readonly reason: string,
  ) {
    super(400, "invalid_request_error", `The transaction would revert: ${reason}`);
  }
}

const AA_HINTS: Record<string, string> = {
  AA10: "the account is already deployed, so initCode must be empty",
  AA13: "deploying the account failed",
  AA20: "the account is not deployed and no initCode was given",
  AA21: "the account did not pay its gas prefund",
  AA22: "the signature is expired or not yet valid",
  AA23: "the account's validation reverted",
  AA24: "the signature does not match the account's owner or an active session key",
  AA25: "the nonce was already used or is out of sequence",
  AA31: "the paymaster's EntryPoint deposit is too low",
  AA32: "the sponsorship is expired or not yet valid",
  AA33: "the paymaster's validation reverted",
  AA34: "the sponsorship signature is invalid",
  AA40: "verification used more gas than verificationGasLimit",
  AA41: "verificationGasLimit is too low",
  AA51: "the prefund is below the actual gas cost",
  AA95: "the bundle ran out of gas",
};

/** The EntryPoint refused the operation in validation (`FailedOp(opIndex, "AAxx …")`). */
export class UserOperationRejectedError extends ApiError {
  /** "AA25" and so on, or null when the reason carries no code. */
  readonly code: string | null;

  constructor(
    readonly reason: string,
    readonly opIndex = 0,
  ) {
    const code = /^(AA\d\d)\b/.exec(reason)?.[1] ?? null;
    const hint = code ? AA_HINTS[code] : undefined;
    // A paymaster out of deposit is ours to fix, not the caller's.
    const ours = code === "AA31";
    super(
      ours ? 503 : 400,
      ours ? "api_error" : "invalid_request_error",
      `The user operation was rejected: ${reason}${hint ? ` (${hint})` : ""}.`,
    );
    this.code = code;
  }
}
