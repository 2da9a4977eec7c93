// Test helpers for our EntryPoint v0.8 contracts: viem's unpacked UserOperation<"0.8">, packed for the real
// EntryPoint's handleOps on anvil, hashed with getUserOperationHash (EIP-712) and signed raw.
import {
  encodeFunctionData,
  parseEther,
  parseEventLogs,
  type Address,
  type ContractFunctionArgs,
  type ContractFunctionName,
  type ContractFunctionReturnType,
  type Hex,
  type PrivateKeyAccount,
  type SignedAuthorization,
  type TransactionReceipt,
} from "viem";
import { generatePrivateKey } from "viem/accounts";
import { getUserOperationHash, toPackedUserOperation, type UserOperation } from "viem/account-abstraction";
import { accountFactoryV8Abi, entryPointV08Abi, smartAccountV8Abi } from "@/contracts/artifacts";
import { ENTRY_POINT_V08 } from "@/lib/chain/deployment";
import { paymasterDataV08, paymasterHashV08 } from "@/lib/chain/paymaster-v08";
import { fund, now, randomAccount, send, startChain, type TestChain } from "./helpers";

export type OpV08 = UserOperation<"0.8">;

/** A fresh anvil with our contracts, the v0.8 paymaster's deposit funded too. */
export async function startChainV08(chainId = 31337): Promise<TestChain> {
  const t = await startChain(chainId);
  try {
    await send(t, null, {
      address: ENTRY_POINT_V08,
      abi: entryPointV08Abi,
      functionName: "depositTo",
      args: [t.deployment.paymasterV08],
      value: parseEther("10"),
    });
    return t;
  } catch (err) {
    await t.stop();
    throw err;
  }
}

// ---------------------------------------------------------------- accounts and call data

export interface TestAccountV08 {
  address: Address;
  owner: PrivateKeyAccount;
  salt: Hex;
}

export const factoryDataV08 = (owner: Address, salt: Hex, guardian?: Address): Hex =>
  guardian
    ? encodeFunctionData({ abi: accountFactoryV8Abi, functionName: "createAccountWithGuardian", args: [owner, guardian, salt] })
    : encodeFunctionData({ abi: accountFactoryV8Abi, functionName: "createAccount", args: [owner, salt] });

export const getAddressV08 = (t: TestChain, owner: Address, salt: Hex): Promise<Address> =>
  t.publicClient.readContract({ address: t.deployment.accountFactoryV08, abi: accountFactoryV8Abi, functionName: "getAddress", args: [owner, salt] });

/** A SmartAccountV8 deployed through the factory (by the funded key) with a fresh owner and `balance` ETH. */
export async function newAccountV08(
  t: TestChain,
  { owner = randomAccount(), balance = parseEther("1") }: { owner?: PrivateKeyAccount; balance?: bigint } = {},
): Promise<TestAccountV08> {
  const salt = generatePrivateKey();
  await send(t, null, { address: t.deployment.accountFactoryV08, abi: accountFactoryV8Abi, functionName: "createAccount", args: [owner.address, salt] });
  const address = await getAddressV08(t, owner.address, salt);
  if (balance > 0n) await fund(t, address, balance);
  return { address, owner, salt };
}

export const readV08 = <functionName extends ContractFunctionName<typeof smartAccountV8Abi, "view" | "pure">>(
  t: TestChain,
  address: Address,
  functionName: functionName,
  args?: ContractFunctionArgs<typeof smartAccountV8Abi, "view" | "pure", functionName>,
) =>
  t.publicClient.readContract({ address, abi: smartAccountV8Abi, functionName, args } as never) as Promise<
    ContractFunctionReturnType<typeof smartAccountV8Abi, "view" | "pure", functionName>
  >;

type AccountWrite = ContractFunctionName<typeof smartAccountV8Abi, "nonpayable" | "payable">;

export const callV08 = <functionName extends AccountWrite>(
  functionName: functionName,
  args: ContractFunctionArgs<typeof smartAccountV8Abi, "nonpayable" | "payable", functionName>,
): Hex => encodeFunctionData({ abi: smartAccountV8Abi, functionName, args } as never);

export const executeV08 = (target: Address, value: bigint, data: Hex = "0x") => callV08("execute", [target, value, data]);

export const executeBatchV08 = (calls: { target: Address; value?: bigint; data?: Hex }[]) =>
  callV08("executeBatch", [calls.map((c) => ({ target: c.target, value: c.value ?? 0n, data: c.data ?? "0x" }))]);

// ---------------------------------------------------------------- user operations

export async function getNonceV08(t: TestChain, sender: Address, key = 0n): Promise<bigint> {
  return t.publicClient.readContract({ address: ENTRY_POINT_V08, abi: entryPointV08Abi, functionName: "getNonce", args: [sender, key] });
}

/** An unsigned op with generous gas limits and the sender's next nonce unless given. */
export async function buildOpV08(t: TestChain, op: Pick<OpV08, "sender" | "callData"> & Partial<OpV08>): Promise<OpV08> {
  return {
    nonce: op.nonce ?? (await getNonceV08(t, op.sender)),
    callGasLimit: 300_000n,
    verificationGasLimit: op.factory ? 700_000n : 300_000n,
    preVerificationGas: 50_000n,
    maxFeePerGas: 5_000_000_000n,
    maxPriorityFeePerGas: 1_000_000_000n,
    signature: "0x",
    ...op,
  };
}

/** The v0.8 userOpHash (EIP-712); for an op with the 0x7702 marker viem hashes its authorization's address as the delegate. */
export const userOpHashV08 = (t: TestChain, op: OpV08): Hex =>
  getUserOperationHash({ userOperation: op, entryPointAddress: ENTRY_POINT_V08, entryPointVersion: "0.8", chainId: t.chainId });

/** A raw ECDSA signature of the userOpHash, which is what our v0.8 accounts (and Simple7702Account) check. */
export async function signOpV08(t: TestChain, op: OpV08, signer: PrivateKeyAccount): Promise<OpV08> {
  return { ...op, signature: await signer.sign({ hash: userOpHashV08(t, op) }) };
}

/** Adds VerifyingPaymasterV8's sponsorship (valid for a day from the chain's clock unless told otherwise). */
export async function sponsorV08(
  t: TestChain,
  op: OpV08,
  {
    validUntil,
    validAfter = 0,
    signer = t.paymasterSigner,
    paymasterVerificationGasLimit = 100_000n,
    paymasterPostOpGasLimit = 0n,
    delegate,
  }: {
    validUntil?: number;
    validAfter?: number;
    signer?: PrivateKeyAccount;
    paymasterVerificationGasLimit?: bigint;
    paymasterPostOpGasLimit?: bigint;
    delegate?: Address;
  } = {},
): Promise<OpV08> {
  const window = { validUntil: validUntil ?? (await now(t)) + 86_400, validAfter };
  const withLimits = { ...op, paymaster: t.deployment.paymasterV08, paymasterVerificationGasLimit, paymasterPostOpGasLimit };
  const hash = paymasterHashV08(t.chainId, t.deployment.paymasterV08, withLimits, window, delegate);
  const signature = await signer.signMessage({ message: { raw: hash } });
  return { ...withLimits, paymasterData: paymasterDataV08(window, signature) };
}

export interface OpResultV08 {
  userOpHash: Hex;
  sender: Address;
  success: boolean;
  actualGasCost: bigint;
  actualGasUsed: bigint;
  revertReason?: Hex;
}

/**
 * Self-bundles `ops` with EntryPoint v0.8's handleOps from the funded key; with `authorizationList`, in a type-4
 * transaction (EIP-7702). A failed validation throws (FailedOp "AAxx").
 */
export async function handleOpsV08(
  t: TestChain,
  ops: OpV08[],
  { authorizationList }: { authorizationList?: SignedAuthorization[] } = {},
): Promise<{ receipt: TransactionReceipt; results: OpResultV08[] }> {
  const hash = await t.wallet.writeContract({
    address: ENTRY_POINT_V08,
    abi: entryPointV08Abi,
    functionName: "handleOps",
    args: [ops.map((op) => toPackedUserOperation(op)), t.wallet.account.address],
    ...(authorizationList && { authorizationList }),
  });
  const receipt = await t.publicClient.waitForTransactionReceipt({ hash });
  if (receipt.status !== "success") throw new Error(`handleOps ${hash} reverted`);
  const logs = parseEventLogs({ abi: entryPointV08Abi, logs: receipt.logs });
  const reasons = new Map<string, Hex>();
  for (const log of logs) if (log.eventName === "UserOperationRevertReason") reasons.set(log.args.userOpHash, log.args.revertReason);
  const results: OpResultV08[] = [];
  for (const log of logs) {
    if (log.eventName !== "UserOperationEvent") continue;
    const { userOpHash, sender, success, actualGasCost, actualGasUsed } = log.args;
    results.push({ userOpHash, sender, success, actualGasCost, actualGasUsed, revertReason: reasons.get(userOpHash) });
  }
  return { receipt, results };
}

/** Signs and submits one op, requiring its execution to succeed. */
export async function runOpV08(t: TestChain, op: OpV08, signer: PrivateKeyAccount, options: { authorizationList?: SignedAuthorization[] } = {}) {
  const { receipt, results } = await handleOpsV08(t, [await signOpV08(t, op, signer)], options);
  const result = results[0];
  if (!result?.success) throw new Error(`userOp execution failed: ${result?.revertReason ?? "no event"}`);
  return { receipt, result };
}

/** An owner-signed op calling the account with `callData` (paid by the account). */
export async function ownerOpV08(t: TestChain, account: { address: Address; owner: PrivateKeyAccount }, callData: Hex) {
  return runOpV08(t, await buildOpV08(t, { sender: account.address, callData }), account.owner);
}

/** `eoa`'s authorization to delegate to `implementation` (default: our DelegatedAccountV8), for a transaction someone else sends. */
export async function authorize(t: TestChain, eoa: PrivateKeyAccount, implementation: Address = t.deployment.delegatedAccountV08): Promise<SignedAuthorization> {
  const nonce = await t.publicClient.getTransactionCount({ address: eoa.address });
  return eoa.signAuthorization({ address: implementation, chainId: t.chainId, nonce });
}

/** The EIP-7702 initCode marker (factory "0x7702"): the op's hash then binds the sender's delegate. */
export const EIP7702_FACTORY = "0x7702000000000000000000000000000000000000" as const;
