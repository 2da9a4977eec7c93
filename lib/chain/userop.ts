import {
  BaseError,
  concat,
  decodeErrorResult,
  decodeFunctionData,
  encodeAbiParameters,
  encodeFunctionData,
  formatEther,
  hexToBytes,
  isHex,
  keccak256,
  parseAbi,
  size,
  slice,
  toHex,
  zeroAddress,
  type Abi,
  type Address,
  type Hex,
  type LocalAccount,
  type StateOverride,
} from "viem";
import { getUserOperationHash, type UserOperation } from "viem/account-abstraction";
import {
  accountFactoryAbi,
  entryPointAbi,
  erc1967ProxyBytecode,
  smartAccountAbi,
  verifyingPaymasterAbi,
} from "@/contracts/artifacts";
import { ApiError } from "@/lib/http/errors";
import { serviceAccount } from "@/lib/keys/service-keys";
import { publicClient } from "./clients";
import { serviceDeployment } from "./contracts";
import { managedAccountState, managedInitCode } from "./managed";
import type { ChainConfig } from "./registry";
import { tokenBoundAccountState } from "./token-bound";

/** A user operation for EntryPoint v0.6, as viem types it (`initCode` and `paymasterAndData` always set here). */
export type UserOp = UserOperation<"0.6">;

export interface AccountCall {
  to: Address;
  value: bigint;
  data: Hex;
}

// ---------------------------------------------------------------- errors

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

// ---------------------------------------------------------------- revert reasons

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

// ---------------------------------------------------------------- encoding

/** The account's callData for `calls`: `execute` for one call, `executeBatch` for several. */
export function encodeAccountCalls(calls: AccountCall[]): Hex {
  if (calls.length === 0) throw new Error("encodeAccountCalls: no calls");
  if (calls.length === 1) {
    const [call] = calls as [AccountCall];
    return encodeFunctionData({ abi: smartAccountAbi, functionName: "execute", args: [call.to, call.value, call.data] });
  }
  return encodeFunctionData({
    abi: smartAccountAbi,
    functionName: "executeBatch",
    args: [calls.map((c) => c.to), calls.map((c) => c.value), calls.map((c) => c.data)],
  });
}

/** The ETH an `execute`/`executeBatch` callData sends from the account (0 for other calls). */
export function callValue(callData: Hex): bigint {
  try {
    const call = decodeFunctionData({ abi: smartAccountAbi, data: callData });
    if (call.functionName === "execute") return call.args[1];
    if (call.functionName === "executeBatch") return call.args[1].reduce((sum, v) => sum + v, 0n);
  } catch {
    // not an execute call
  }
  return 0n;
}

/** The op as EntryPoint v0.6's `UserOperation` struct. */
export function toEntryPointOp(op: UserOp) {
  return {
    sender: op.sender,
    nonce: op.nonce,
    initCode: op.initCode ?? "0x",
    callData: op.callData,
    callGasLimit: op.callGasLimit,
    verificationGasLimit: op.verificationGasLimit,
    preVerificationGas: op.preVerificationGas,
    maxFeePerGas: op.maxFeePerGas,
    maxPriorityFeePerGas: op.maxPriorityFeePerGas,
    paymasterAndData: op.paymasterAndData ?? "0x",
    signature: op.signature,
  } as const;
}

const userOpTuple = {
  type: "tuple",
  components: [
    { name: "sender", type: "address" },
    { name: "nonce", type: "uint256" },
    { name: "initCode", type: "bytes" },
    { name: "callData", type: "bytes" },
    { name: "callGasLimit", type: "uint256" },
    { name: "verificationGasLimit", type: "uint256" },
    { name: "preVerificationGas", type: "uint256" },
    { name: "maxFeePerGas", type: "uint256" },
    { name: "maxPriorityFeePerGas", type: "uint256" },
    { name: "paymasterAndData", type: "bytes" },
    { name: "signature", type: "bytes" },
  ],
} as const;

/** The userOp hash the account's owner signs (personal_sign of it), for EntryPoint v0.6 on `chain`. */
export function userOperationHash(chain: ChainConfig, op: UserOp): Hex {
  return getUserOperationHash({
    userOperation: toEntryPointOp(op),
    entryPointAddress: serviceDeployment().entryPoint,
    entryPointVersion: "0.6",
    chainId: chain.chainId,
  });
}

/** Signs the op as a wallet's personal_sign of the raw userOp hash (owner, session key or guardian key). */
export async function signUserOperation(chain: ChainConfig, op: UserOp, signer: LocalAccount): Promise<UserOp> {
  return { ...op, signature: await signer.signMessage({ message: { raw: userOperationHash(chain, op) } }) };
}

// ---------------------------------------------------------------- gas

/**
 * preVerificationGas as bundlers compute it for v0.6 (eth-infinitism's calcPreVerificationGas, which alto follows):
 * the calldata cost of the packed op (signature counted as 65 non-zero bytes), 21000 for the bundle transaction as if
 * the op were alone in it, 18300 per op and 4 per word.
 */
export function preVerificationGas(op: UserOp): bigint {
  const encoded = encodeAbiParameters([userOpTuple], [{ ...toEntryPointOp(op), signature: toHex(new Uint8Array(65).fill(1)) }]);
  // Like the reference: drop the leading offset word and the last word.
  const packed = hexToBytes(encoded).subarray(32, -32);
  let callDataCost = 0;
  for (const byte of packed) callDataCost += byte === 0 ? 4 : 16;
  return BigInt(Math.round(callDataCost + 21_000 + 18_300 + (4 * (packed.length + 31)) / 32));
}

/** What the EntryPoint takes from the payer before execution: all gas limits at maxFeePerGas (verification ×3 with a paymaster). */
export function requiredPrefund(op: UserOp): bigint {
  const hasPaymaster = (op.paymasterAndData ?? "0x") !== "0x";
  const gas = op.callGasLimit + op.verificationGasLimit * (hasPaymaster ? 3n : 1n) + op.preVerificationGas;
  return gas * op.maxFeePerGas;
}

export interface Fees {
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
}

/** Never tip less than this (0.001 gwei): some chains suggest 0, which can leave an op unmined. */
export const MIN_PRIORITY_FEE = 1_000_000n;

/**
 * EIP-1559 fees for the next blocks: the node's suggested tip +20% (at least MIN_PRIORITY_FEE), and a max fee of twice
 * the latest base fee plus the tip, so the op stays includable through several blocks of rising base fee. Chains without
 * a base fee get the gas price +20% for both.
 */
export async function chainFees(chain: ChainConfig): Promise<Fees & { baseFee: bigint | null }> {
  const client = publicClient(chain);
  const block = await client.getBlock({ blockTag: "latest" });
  if (block.baseFeePerGas == null) {
    const gasPrice = ((await client.getGasPrice()) * 12n) / 10n;
    return { maxFeePerGas: gasPrice, maxPriorityFeePerGas: gasPrice, baseFee: null };
  }
  let tip: bigint;
  try {
    tip = await client.estimateMaxPriorityFeePerGas();
  } catch {
    tip = MIN_PRIORITY_FEE;
  }
  tip = (tip * 12n) / 10n;
  if (tip < MIN_PRIORITY_FEE) tip = MIN_PRIORITY_FEE;
  return { maxFeePerGas: block.baseFeePerGas * 2n + tip, maxPriorityFeePerGas: tip, baseFee: block.baseFeePerGas };
}

/**
 * A signature of the right shape for simulation: 65 bytes that recover to some address (so ECDSA recovery and the
 * account's signer lookups run as for a real signature) without being anyone's valid signature.
 */
export const DUMMY_SIGNATURE: Hex = `0x${"f".repeat(31)}${"0".repeat(33)}7${"a".repeat(63)}1c`;

/** Verification gas in simulation: ample for deploying and validating our account, small enough for any paymaster deposit. */
const SIMULATION_VERIFICATION_GAS = 1_500_000n;
/** Margins on simulated gas: validation runs again on chain and state may change between estimate and inclusion. */
const VERIFICATION_GAS_MARGIN = { percent: 30n, fixed: 10_000n };
const CALL_GAS_MARGIN = { percent: 20n, fixed: 10_000n };
/**
 * The dummy signature takes the account's most expensive path for an owner or a guardian (recovery, owner, session key
 * and guardian lookups), but a session key's real path also reads its whitelist (up to 10 cold slots), checks every
 * call target against it and writes its use counter.
 */
function sessionKeyVerificationGas(callData: Hex): bigint {
  let targets = 1n;
  try {
    const call = decodeFunctionData({ abi: smartAccountAbi, data: callData });
    if (call.functionName === "executeBatch") targets = BigInt(call.args[0].length);
  } catch {
    // not an account call: validation will refuse it anyway
  }
  return 50_000n + 2_500n * targets;
}
/** Paymaster sponsorship of a stub: valid for an hour from the chain's clock (only the length and rough byte mix matter). */
const STUB_SPONSORSHIP_SECONDS = 3_600;

const withMargin = (gas: bigint, margin: { percent: bigint; fixed: bigint }) => (gas * (100n + margin.percent)) / 100n + margin.fixed;

/** calldata gas of `data` in a transaction (4 per zero byte, 16 per other). */
function calldataGas(data: Hex): bigint {
  let gas = 0n;
  for (const byte of hexToBytes(data)) gas += byte === 0 ? 4n : 16n;
  return gas;
}

// ERC-1967 implementation slot, and the SmartAccount storage namespace (its first word holds the owner).
const IMPLEMENTATION_SLOT: Hex = "0x360894a13ba1a3210667c828492db98dca3e2076cc3735a920a3ca505d382bbc";
const ACCOUNT_STORAGE_SLOT: Hex = "0xcedfc6c6609eff5f46924b3d6d5dbedd8d0964621ec3fbdef29d07ed0e361000";

const proxyCodeCache = globalThis as unknown as { __accountProxyCode?: Map<number, Hex> };

/** The runtime code of our account proxy (eth_call of its creation code returns it), once per chain. */
async function accountProxyCode(chain: ChainConfig): Promise<Hex> {
  proxyCodeCache.__accountProxyCode ??= new Map();
  const cached = proxyCodeCache.__accountProxyCode.get(chain.chainId);
  if (cached) return cached;
  const { accountImplementation } = serviceDeployment();
  const creation = concat([
    erc1967ProxyBytecode,
    encodeAbiParameters([{ type: "address" }, { type: "bytes" }], [accountImplementation, "0x"]),
  ]);
  const { data } = await publicClient(chain).call({ data: creation });
  if (!data || data === "0x") throw new Error(`Could not compute the account proxy's runtime code on chain ${chain.chainId}`);
  proxyCodeCache.__accountProxyCode.set(chain.chainId, data);
  return data;
}

/**
 * State that makes an undeployed account look deployed (our proxy, our implementation, its owner and built-in guardian), so its call can be
 * estimated before the initCode runs. Only for initCode that deploys through our factories (or our ERC-6551 registry).
 */
async function counterfactualAccountState(chain: ChainConfig, sender: Address, initCode: Hex): Promise<StateOverride> {
  const tokenBound = tokenBoundAccountState(sender, initCode);
  if (tokenBound) return tokenBound;
  // A ManagedV5 account: the same SmartAccount storage behind a beacon proxy (lib/chain/managed.ts).
  const managed = managedInitCode(initCode);
  const { accountFactory, accountImplementation } = serviceDeployment();
  let owner: Address;
  let guardian: Address | null;
  if (managed) {
    ({ owner, guardian } = managed);
  } else {
    if (size(initCode) < 24 || slice(initCode, 0, 20).toLowerCase() !== accountFactory.toLowerCase()) {
      throw new UserOperationRejectedError(`initCode must deploy the account through our AccountFactory ${accountFactory}`);
    }
    const call = decodeFunctionData({ abi: accountFactoryAbi, data: slice(initCode, 20) });
    if (call.functionName !== "createAccount" && call.functionName !== "createAccountWithGuardian") {
      throw new UserOperationRejectedError("initCode must call AccountFactory.createAccount or createAccountWithGuardian");
    }
    owner = call.args[0];
    guardian = call.functionName === "createAccountWithGuardian" ? call.args[1] : null;
  }
  const word = (value: Address | bigint) => encodeAbiParameters([{ type: typeof value === "bigint" ? "uint256" : "address" }], [value]);
  const stateDiff: { slot: Hex; value: Hex }[] = [{ slot: ACCOUNT_STORAGE_SLOT, value: word(owner) }];
  if (guardian) {
    // The guardian the factory adds: `guardians` (namespace word 3) = [guardian], `guardianPosition` (word 4)[guardian] = 1.
    const guardiansSlot = BigInt(ACCOUNT_STORAGE_SLOT) + 3n;
    stateDiff.push(
      { slot: toHex(guardiansSlot, { size: 32 }), value: word(1n) },
      { slot: keccak256(word(guardiansSlot)), value: word(guardian) },
      { slot: keccak256(concat([word(guardian), word(guardiansSlot + 1n)])), value: word(1n) },
    );
  }
  if (managed) return managedAccountState(chain, sender, managed, stateDiff);
  stateDiff.push({ slot: IMPLEMENTATION_SLOT, value: word(accountImplementation) });
  return [{ address: sender, code: await accountProxyCode(chain), stateDiff }];
}

// ---------------------------------------------------------------- paymaster

export interface SponsorshipWindow {
  /** Unix seconds; 0 means no expiry. */
  validUntil: number;
  /** Unix seconds; 0 means valid at once. */
  validAfter: number;
}

/** A window of `seconds` from now, in the chain's time, which a node's clock (or a test chain's) need not share with ours. */
export async function sponsorshipWindow(chain: ChainConfig, seconds: number): Promise<SponsorshipWindow> {
  const { timestamp } = await publicClient(chain).getBlock({ blockTag: "latest" });
  return { validUntil: Number(timestamp) + seconds, validAfter: 0 };
}

/** VerifyingPaymaster.getHash(op, validUntil, validAfter), computed off-chain. */
export function paymasterHash(chainId: number, paymaster: Address, op: UserOp, window: SponsorshipWindow): Hex {
  return keccak256(
    encodeAbiParameters(
      [
        { type: "address" },
        { type: "uint256" },
        { type: "bytes32" },
        { type: "bytes32" },
        { type: "uint256" },
        { type: "uint256" },
        { type: "uint256" },
        { type: "uint256" },
        { type: "uint256" },
        { type: "uint256" },
        { type: "address" },
        { type: "uint48" },
        { type: "uint48" },
      ],
      [
        op.sender,
        op.nonce,
        keccak256(op.initCode ?? "0x"),
        keccak256(op.callData),
        op.callGasLimit,
        op.verificationGasLimit,
        op.preVerificationGas,
        op.maxFeePerGas,
        op.maxPriorityFeePerGas,
        BigInt(chainId),
        paymaster,
        window.validUntil,
        window.validAfter,
      ],
    ),
  );
}

const encodeWindow = (window: SponsorshipWindow) =>
  encodeAbiParameters([{ type: "uint48" }, { type: "uint48" }], [window.validUntil, window.validAfter]);

/** The paymaster's sponsorship of `op`: paymaster ++ abi.encode(validUntil, validAfter) ++ the paymaster signer's signature. */
export async function signPaymasterAndData(chain: ChainConfig, op: UserOp, window: SponsorshipWindow): Promise<Hex> {
  const { paymaster } = serviceDeployment();
  const hash = paymasterHash(chain.chainId, paymaster, op, window);
  const signature = await serviceAccount("paymaster-signer").signMessage({ message: { raw: hash } });
  return concat([paymaster, encodeWindow(window), signature]);
}

/** `op` with the service's sponsorship (paymasterAndData) signed; the account signs after this. */
export async function sponsorUserOperation(chain: ChainConfig, op: UserOp, window: SponsorshipWindow): Promise<UserOp> {
  return { ...op, paymasterAndData: await signPaymasterAndData(chain, op, window) };
}

/** paymasterAndData of the final length and a realistic byte mix, for estimation before the real one is signed. */
export function stubPaymasterAndData(now: number): Hex {
  return concat([serviceDeployment().paymaster, encodeWindow({ validUntil: now + STUB_SPONSORSHIP_SECONDS, validAfter: 0 }), DUMMY_SIGNATURE]);
}

// ---------------------------------------------------------------- building

export interface BuildUserOperationParams {
  sender: Address;
  /** Deploys the account (our factory's createAccount); "0x" once deployed. Dropped when the account already has code. */
  initCode: Hex;
  /**
   * The account is not deployed yet, but another op (carrying `initCode`) deploys it before this one runs: the op is
   * built without initCode, its gas estimated as if the account were deployed (`initCode` still tells its owner).
   */
  deployedFirst?: boolean;
  callData: Hex;
  /** The 2D nonce key (192 bits): ops with different keys never wait for each other. Default 0. */
  nonceKey?: bigint;
  /** Our paymaster pays; otherwise the account pays from its EntryPoint deposit and balance. */
  sponsored: boolean;
  /** Who will sign: a session key's validation costs more gas than the owner's (or a guardian's). Default "owner". */
  signerKind?: "owner" | "sessionKey";
  /** With `sponsored`, sign the sponsorship at once for this window; otherwise paymasterAndData is left a stub to sign with signPaymasterAndData. */
  sponsorship?: SponsorshipWindow;
  /**
   * With `sponsored`, the stub paymasterAndData for simulation, from the paymaster that will sign (an ERC-7677
   * service's pm_getPaymasterStubData); our VerifyingPaymaster's stub by default. Gets the draft op (dummy signature).
   */
  paymasterStub?: (draft: UserOp) => Promise<Hex>;
}

export interface UserOperationEstimate {
  /** Gas the validation used in simulation (account deployment, validateUserOp and the paymaster). */
  validationGas: bigint;
  /** eth_estimateGas of the account call from the EntryPoint, less its intrinsic gas. */
  callGas: bigint;
  /** The most the op can cost its payer: requiredPrefund(op). */
  maxCost: bigint;
  /** ETH the call itself sends from the account (execute/executeBatch values). */
  value: bigint;
}

/**
 * An unsigned user operation with real gas figures (see estimateUserOperation). Its `signature` is "0x"; when
 * sponsored without `sponsorship`, its paymasterAndData is a stub of the final length to replace with
 * signPaymasterAndData before the account signs.
 */
export async function buildUserOperation(chain: ChainConfig, params: BuildUserOperationParams): Promise<UserOp> {
  return (await estimateUserOperation(chain, params)).op;
}

/**
 * Builds the op and says how its gas was found:
 * - nonce: EntryPoint.getNonce(sender, nonceKey); fees: chainFees.
 * - callGasLimit: eth_estimateGas of the account call from the EntryPoint (the node's binary search honours the 63/64
 *   rule), an undeployed account made to look deployed with a state override; less intrinsic gas, +20% +10k.
 *   A revert there is a CallRevertedError with its decoded reason.
 * - verificationGasLimit: EntryPoint.simulateHandleOp with a dummy signature and stub paymasterAndData of final
 *   length (an unsponsored sender's balance overridden so the prefund never fails): preOpGas − preVerificationGas,
 *   +30% +10k (session keys: +50k +2.5k per call target). A FailedOp there is a UserOperationRejectedError ("AAxx …").
 * - preVerificationGas: the v0.6 bundler calldata formula (preVerificationGas()).
 * Unsponsored, the account must hold the prefund its deposit does not cover plus the value it sends, or this throws
 * InsufficientFundsError before anything is sent; sponsored, it must hold the value.
 */
export async function estimateUserOperation(
  chain: ChainConfig,
  params: BuildUserOperationParams,
): Promise<{ op: UserOp; estimate: UserOperationEstimate }> {
  const client = publicClient(chain);
  const { entryPoint } = serviceDeployment();
  const { sender, callData, sponsored } = params;
  const nonceKey = params.nonceKey ?? 0n;
  if (nonceKey < 0n || nonceKey >= 1n << 192n) throw new UserOperationRejectedError("the nonce key must fit in 192 bits");

  const [nonce, fees, code, balance, deposit, block] = await Promise.all([
    client.readContract({ address: entryPoint, abi: entryPointAbi, functionName: "getNonce", args: [sender, nonceKey] }),
    chainFees(chain),
    client.getCode({ address: sender }),
    client.getBalance({ address: sender }),
    client.readContract({ address: entryPoint, abi: entryPointAbi, functionName: "balanceOf", args: [sender] }),
    client.getBlock({ blockTag: "latest" }),
  ]);
  const deployed = code !== undefined && code !== "0x";
  if (!deployed && params.initCode === "0x") throw new UserOperationRejectedError("AA20 account not deployed");
  const afterDeployment = !deployed && params.deployedFirst === true;
  const initCode: Hex = deployed || afterDeployment ? "0x" : params.initCode;
  const accountState = deployed ? undefined : await counterfactualAccountState(chain, sender, params.initCode);

  const value = callValue(callData);
  const symbol = chain.nativeCurrency.symbol;
  if (value > balance) {
    throw new InsufficientFundsError(sender, value, balance, { gasPrefund: 0n, deposit: 0n, value }, symbol);
  }

  // callGasLimit: the account call exactly as the EntryPoint makes it.
  let callEstimate: bigint;
  try {
    callEstimate = await client.estimateGas({
      account: entryPoint,
      to: sender,
      data: callData,
      stateOverride: accountState,
    });
  } catch (err) {
    const data = revertDataOf(err);
    if (data !== undefined || /revert/i.test((err as Error).message)) throw new CallRevertedError(data ?? "0x", describeRevert(data));
    throw err;
  }
  const callGas = callEstimate > 21_000n + calldataGas(callData) ? callEstimate - 21_000n - calldataGas(callData) : 0n;
  const callGasLimit = withMargin(callGas, CALL_GAS_MARGIN);

  const draft: UserOp = {
    sender,
    nonce,
    initCode,
    callData,
    callGasLimit,
    verificationGasLimit: SIMULATION_VERIFICATION_GAS,
    preVerificationGas: 0n,
    maxFeePerGas: fees.maxFeePerGas,
    maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
    paymasterAndData: "0x",
    signature: DUMMY_SIGNATURE,
  };
  if (sponsored) draft.paymasterAndData = params.paymasterStub ? await params.paymasterStub({ ...draft }) : stubPaymasterAndData(Number(block.timestamp));
  draft.preVerificationGas = preVerificationGas(draft);

  // verificationGasLimit: what validation (deployment, account, paymaster) used in simulateHandleOp.
  // An op that runs after another deployed its account validates against the deployed account.
  const senderState = afterDeployment ? accountState![0]! : { address: sender };
  const simulationOverride: StateOverride | undefined =
    sponsored && !afterDeployment ? undefined : [{ ...senderState, ...(sponsored ? {} : { balance: balance + requiredPrefund(draft) }) }];
  const result = await simulateHandleOp(chain, draft, simulationOverride);
  const validationGas = result.preOpGas - draft.preVerificationGas;
  let verificationGasLimit = withMargin(validationGas, VERIFICATION_GAS_MARGIN);
  if (params.signerKind === "sessionKey") verificationGasLimit += sessionKeyVerificationGas(callData);

  let op: UserOp = { ...draft, verificationGasLimit, signature: "0x" };
  op.preVerificationGas = preVerificationGas({ ...op, signature: DUMMY_SIGNATURE });
  const maxCost = requiredPrefund(op);

  if (!sponsored) {
    const missing = maxCost > deposit ? maxCost - deposit : 0n;
    if (balance < missing + value) {
      throw new InsufficientFundsError(sender, missing + value, balance, { gasPrefund: maxCost, deposit, value }, symbol);
    }
  }
  if (sponsored && params.sponsorship) op = await sponsorUserOperation(chain, op, params.sponsorship);
  return { op, estimate: { validationGas, callGas, maxCost, value } };
}

export interface ExecutionResult {
  preOpGas: bigint;
  paid: bigint;
  validAfter: number;
  validUntil: number;
}

/** EntryPoint.simulateHandleOp (which always reverts): its ExecutionResult, or the FailedOp as UserOperationRejectedError. */
export async function simulateHandleOp(chain: ChainConfig, op: UserOp, stateOverride?: StateOverride): Promise<ExecutionResult> {
  const { entryPoint } = serviceDeployment();
  const data = encodeFunctionData({
    abi: entryPointAbi,
    functionName: "simulateHandleOp",
    args: [toEntryPointOp(op), zeroAddress, "0x"],
  });
  let revert: Hex | undefined;
  try {
    await publicClient(chain).call({ to: entryPoint, data, stateOverride });
  } catch (err) {
    revert = revertDataOf(err);
    if (revert === undefined) throw err;
  }
  if (revert === undefined) throw new Error("EntryPoint.simulateHandleOp returned instead of reverting");
  let decoded;
  try {
    decoded = decodeErrorResult({ abi: entryPointAbi, data: revert });
  } catch {
    throw new UserOperationRejectedError(`simulation reverted: ${describeRevert(revert)}`);
  }
  if (decoded.errorName === "ExecutionResult") {
    const [preOpGas, paid, validAfter, validUntil] = decoded.args;
    return { preOpGas, paid, validAfter, validUntil };
  }
  if (decoded.errorName === "FailedOp") throw new UserOperationRejectedError(decoded.args[1], Number(decoded.args[0]));
  throw new UserOperationRejectedError(`simulation reverted: ${describeRevert(revert)}`);
}
