// Gas and fees: preVerificationGas, the prefund, EIP-1559 fees, and what simulation needs (dummy signature, margins,
// state that makes an undeployed account look deployed).
import {
  concat,
  decodeFunctionData,
  encodeAbiParameters,
  hexToBytes,
  keccak256,
  size,
  slice,
  toHex,
  type Address,
  type Hex,
  type StateOverride,
} from "viem";
import { erc1967ProxyBytecode, smartAccountAbi } from "@/contracts/artifacts";
import { accountFactoryInitCode } from "@/lib/chain/accounts";
import { publicClient } from "@/lib/chain/clients";
import { coalesce, latestBlock } from "@/lib/chain/coalesce";
import { serviceDeployment } from "@/lib/chain/contracts";
import { managedAccountState, managedInitCode } from "@/lib/chain/managed";
import type { ChainConfig } from "@/lib/chain/registry";
import { tokenBoundAccountState } from "@/lib/chain/token-bound";
import { toEntryPointOp, userOpTuple, type UserOp } from "./encoding";
import { UserOperationRejectedError } from "./errors";
import { processSingleton } from "@/lib/singleton";

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

/** As the v0.6 EntryPoint reads an op: no paymasterAndData, or one naming the zero address, is no paymaster (the account pays). */
export const paymasterPays = (paymasterAndData: Hex | undefined) =>
  !!paymasterAndData && size(paymasterAndData) >= 20 && BigInt(slice(paymasterAndData, 0, 20)) !== 0n;

/** What the EntryPoint takes from the payer before execution: all gas limits at maxFeePerGas (verification ×3 with a paymaster). */
export function requiredPrefund(op: Pick<UserOp, "callGasLimit" | "verificationGasLimit" | "preVerificationGas" | "maxFeePerGas" | "paymasterAndData">): bigint {
  const gas = op.callGasLimit + op.verificationGasLimit * (paymasterPays(op.paymasterAndData) ? 3n : 1n) + op.preVerificationGas;
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
export function chainFees(chain: ChainConfig): Promise<Fees & { baseFee: bigint | null }> {
  return coalesce(chain, "fees", () => fetchFees(chain));
}

async function fetchFees(chain: ChainConfig): Promise<Fees & { baseFee: bigint | null }> {
  const client = publicClient(chain);
  const block = await latestBlock(chain);
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
export const SIMULATION_VERIFICATION_GAS = 1_500_000n;
/** Margins on simulated gas: validation runs again on chain and state may change between estimate and inclusion. */
export const VERIFICATION_GAS_MARGIN = { percent: 30n, fixed: 10_000n };
export const CALL_GAS_MARGIN = { percent: 20n, fixed: 10_000n };
/**
 * The dummy signature takes the account's most expensive path for an owner or a guardian (recovery, owner, session key
 * and guardian lookups), but a session key's real path also reads its whitelist (up to 10 cold slots), checks every
 * call target against it and writes its use counter.
 */
export function sessionKeyVerificationGas(callData: Hex): bigint {
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
export const STUB_SPONSORSHIP_SECONDS = 3_600;

export const withMargin = (gas: bigint, margin: { percent: bigint; fixed: bigint }) => (gas * (100n + margin.percent)) / 100n + margin.fixed;

/** calldata gas of `data` in a transaction (4 per zero byte, 16 per other). */
export function calldataGas(data: Hex): bigint {
  let gas = 0n;
  for (const byte of hexToBytes(data)) gas += byte === 0 ? 4n : 16n;
  return gas;
}

// ERC-1967 implementation slot, and the SmartAccount storage namespace (its first word holds the owner).
const IMPLEMENTATION_SLOT: Hex = "0x360894a13ba1a3210667c828492db98dca3e2076cc3735a920a3ca505d382bbc";
const ACCOUNT_STORAGE_SLOT: Hex = "0xcedfc6c6609eff5f46924b3d6d5dbedd8d0964621ec3fbdef29d07ed0e361000";

const proxyCodeCache = processSingleton("accountProxyCode", () => new Map<number, Hex>());

/** The runtime code of our account proxy (eth_call of its creation code returns it), once per chain: ERC1967Proxy has no immutables, so it is also the v0.8 accounts' proxy code. */
export async function accountProxyCode(chain: ChainConfig): Promise<Hex> {
  const cached = proxyCodeCache.get(chain.chainId);
  if (cached) return cached;
  const { accountImplementation } = serviceDeployment();
  const creation = concat([
    erc1967ProxyBytecode,
    encodeAbiParameters([{ type: "address" }, { type: "bytes" }], [accountImplementation, "0x"]),
  ]);
  const { data } = await publicClient(chain).call({ data: creation });
  if (!data || data === "0x") throw new Error(`Could not compute the account proxy's runtime code on chain ${chain.chainId}`);
  proxyCodeCache.set(chain.chainId, data);
  return data;
}

/**
 * State that makes an undeployed account look deployed (our proxy, our implementation, its owner and built-in guardian), so its call can be
 * estimated before the initCode runs. Only for initCode that deploys through our factories (or our ERC-6551 registry).
 */
export async function counterfactualAccountState(chain: ChainConfig, sender: Address, initCode: Hex): Promise<StateOverride> {
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
    const deployment = accountFactoryInitCode(initCode);
    if (!deployment) throw new UserOperationRejectedError("initCode must call AccountFactory.createAccount or createAccountWithGuardian");
    ({ owner, guardian } = deployment);
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
