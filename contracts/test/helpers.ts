import { paymasterHash as servicePaymasterHash } from "@/lib/chain/userop";
import {
  concat,
  createPublicClient,
  createTestClient,
  createWalletClient,
  defineChain,
  encodeAbiParameters,
  encodeFunctionData,
  http,
  keccak256,
  parseEther,
  parseEventLogs,
  toHex,
  type Abi,
  type Account,
  type Address,
  type Chain,
  type ContractFunctionArgs,
  type ContractFunctionName,
  type Hex,
  type PrivateKeyAccount,
  type PublicClient,
  type TransactionReceipt,
  type Transport,
  type WalletClient,
} from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { getUserOperationHash } from "viem/account-abstraction";
import { accountFactoryAbi, entryPointAbi, smartAccountAbi } from "@/contracts/artifacts";
import { startAnvil, type AnvilNode } from "@/lib/chain/anvil";
import { ENTRY_POINT_V06, ensureDeployment, type Deployment } from "@/lib/chain/deployment";

/** Anvil's first default account: the deployer and self-bundler of these tests. */
export const FUNDED_KEY: Hex = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";

export interface TestChain {
  chainId: number;
  anvil: AnvilNode;
  chain: Chain;
  publicClient: PublicClient;
  /** The funded anvil key: deploys, funds and bundles (handleOps). */
  wallet: WalletClient<Transport, Chain, Account>;
  testClient: ReturnType<typeof createTestClient>;
  deployment: Deployment & { deployed: string[] };
  paymasterOwner: PrivateKeyAccount;
  paymasterSigner: PrivateKeyAccount;
  /** Owner of the ManagedV5 beacons (the service's "beacon-admin" key). */
  beaconAdmin: PrivateKeyAccount;
  stop(): Promise<void>;
}

export const randomAccount = () => privateKeyToAccount(generatePrivateKey());

// Fixed so every chain (and file) gets the same paymaster address.
const PAYMASTER_OWNER = privateKeyToAccount(keccak256(toHex("contracts test: paymaster owner")));
const PAYMASTER_SIGNER = privateKeyToAccount(keccak256(toHex("contracts test: paymaster signer")));
const BEACON_ADMIN = privateKeyToAccount(keccak256(toHex("contracts test: beacon admin")));

/** A fresh anvil with our contracts deployed and the paymaster's EntryPoint deposit funded. */
export async function startChain(chainId = 31337, { paymasterDeposit = parseEther("10") } = {}): Promise<TestChain> {
  const anvil = await startAnvil({ chainId, port: 0 });
  const chain = defineChain({
    id: chainId,
    name: `anvil ${chainId}`,
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [anvil.rpcUrl] } },
  });
  const transport = http(anvil.rpcUrl);
  const publicClient = createPublicClient({ chain, transport }) as PublicClient;
  const wallet = createWalletClient({ chain, transport, account: privateKeyToAccount(FUNDED_KEY) });
  const testClient = createTestClient({ mode: "anvil", chain, transport });
  try {
    const deployment = await ensureDeployment(publicClient, wallet, {
      paymasterOwner: PAYMASTER_OWNER.address,
      paymasterSigner: PAYMASTER_SIGNER.address,
      beaconAdmin: BEACON_ADMIN.address,
    });
    const t: TestChain = {
      chainId,
      anvil,
      chain,
      publicClient,
      wallet,
      testClient,
      deployment,
      paymasterOwner: PAYMASTER_OWNER,
      paymasterSigner: PAYMASTER_SIGNER,
      beaconAdmin: BEACON_ADMIN,
      stop: () => anvil.stop(),
    };
    if (paymasterDeposit > 0n) {
      await send(t, wallet, {
        address: deployment.entryPoint,
        abi: entryPointAbi,
        functionName: "depositTo",
        args: [deployment.paymaster],
        value: paymasterDeposit,
      });
    }
    return t;
  } catch (err) {
    await anvil.stop();
    throw err;
  }
}

/** A wallet client for `account` (give it ETH with `fund` first). */
export const walletFor = (t: TestChain, account: Account) =>
  createWalletClient({ chain: t.chain, transport: http(t.anvil.rpcUrl), account });

export async function fund(t: TestChain, address: Address, amount = parseEther("10")) {
  await t.testClient.setBalance({ address, value: amount });
}

/** Sends a contract write from `from` (default: the funded key) and waits for a successful receipt. Reverts throw
 * (from gas estimation) with the decoded error. */
export async function send<
  const abi extends Abi,
  functionName extends ContractFunctionName<abi, "nonpayable" | "payable">,
>(
  t: TestChain,
  from: WalletClient<Transport, Chain, Account> | null,
  call: {
    address: Address;
    abi: abi;
    functionName: functionName;
    args: ContractFunctionArgs<abi, "nonpayable" | "payable", functionName>;
    value?: bigint;
  },
): Promise<TransactionReceipt> {
  const wallet = from ?? t.wallet;
  // The generic write parameters are too deep for TypeScript to relate here; `call` is checked at the call site.
  const hash = await wallet.writeContract(call as never);
  const receipt = await t.publicClient.waitForTransactionReceipt({ hash });
  if (receipt.status !== "success") throw new Error(`transaction ${hash} reverted`);
  return receipt;
}

export async function now(t: TestChain): Promise<number> {
  return Number((await t.publicClient.getBlock()).timestamp);
}

/** The timestamp of the block a transaction landed in (the chain is shared: later blocks may follow at once). */
export async function blockTime(t: TestChain, receipt: TransactionReceipt): Promise<number> {
  return Number((await t.publicClient.getBlock({ blockNumber: receipt.blockNumber })).timestamp);
}

export async function increaseTime(t: TestChain, seconds: number) {
  await t.testClient.increaseTime({ seconds });
  await t.testClient.mine({ blocks: 1 });
}

// ---------------------------------------------------------------- accounts

export interface TestAccount {
  address: Address;
  owner: PrivateKeyAccount;
  salt: Hex;
}

export const initCodeFor = (t: TestChain, owner: Address, salt: Hex): Hex =>
  concat([
    t.deployment.accountFactory,
    encodeFunctionData({ abi: accountFactoryAbi, functionName: "createAccount", args: [owner, salt] }),
  ]);

export async function counterfactualAddress(t: TestChain, owner: Address, salt: Hex): Promise<Address> {
  return t.publicClient.readContract({
    address: t.deployment.accountFactory,
    abi: accountFactoryAbi,
    functionName: "getAddress",
    args: [owner, salt],
  });
}

/** A deployed account (through the factory, by the funded key) with a fresh owner and `balance` ETH. */
export async function newAccount(
  t: TestChain,
  { owner = randomAccount(), balance = parseEther("1") }: { owner?: PrivateKeyAccount; balance?: bigint } = {},
): Promise<TestAccount> {
  const salt = generatePrivateKey();
  await send(t, null, {
    address: t.deployment.accountFactory,
    abi: accountFactoryAbi,
    functionName: "createAccount",
    args: [owner.address, salt],
  });
  const address = await counterfactualAddress(t, owner.address, salt);
  if (balance > 0n) await fund(t, address, balance);
  return { address, owner, salt };
}

export const readAccount = <functionName extends ContractFunctionName<typeof smartAccountAbi, "view" | "pure">>(
  t: TestChain,
  address: Address,
  functionName: functionName,
  args?: ContractFunctionArgs<typeof smartAccountAbi, "view" | "pure", functionName>,
) => t.publicClient.readContract({ address, abi: smartAccountAbi, functionName, args } as never) as Promise<
  import("viem").ContractFunctionReturnType<typeof smartAccountAbi, "view" | "pure", functionName>
>;

// ---------------------------------------------------------------- call data

type AccountWrite = ContractFunctionName<typeof smartAccountAbi, "nonpayable" | "payable">;

export const accountCall = <functionName extends AccountWrite>(
  functionName: functionName,
  args: ContractFunctionArgs<typeof smartAccountAbi, "nonpayable" | "payable", functionName>,
): Hex => encodeFunctionData({ abi: smartAccountAbi, functionName, args } as never);

export const executeCall = (target: Address, value: bigint, data: Hex = "0x") =>
  accountCall("execute", [target, value, data]);

export const executeBatchCall = (calls: { target: Address; value?: bigint; data?: Hex }[]) =>
  accountCall("executeBatch", [
    calls.map((c) => c.target),
    calls.map((c) => c.value ?? 0n),
    calls.map((c) => c.data ?? "0x"),
  ]);

// ---------------------------------------------------------------- user operations (EntryPoint v0.6)

export interface UserOp {
  sender: Address;
  nonce: bigint;
  initCode: Hex;
  callData: Hex;
  callGasLimit: bigint;
  verificationGasLimit: bigint;
  preVerificationGas: bigint;
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
  paymasterAndData: Hex;
  signature: Hex;
}

export async function getNonce(t: TestChain, sender: Address, key = 0n): Promise<bigint> {
  return t.publicClient.readContract({
    address: t.deployment.entryPoint,
    abi: entryPointAbi,
    functionName: "getNonce",
    args: [sender, key],
  });
}

/** An unsigned userOp with generous gas limits and the sender's next nonce (for `nonceKey`) unless given. */
export async function buildOp(
  t: TestChain,
  op: Pick<UserOp, "sender" | "callData"> & Partial<UserOp> & { nonceKey?: bigint },
): Promise<UserOp> {
  const { nonceKey = 0n, ...fields } = op;
  return {
    nonce: fields.nonce ?? (await getNonce(t, op.sender, nonceKey)),
    initCode: "0x",
    callGasLimit: 300_000n,
    verificationGasLimit: op.initCode && op.initCode !== "0x" ? 700_000n : 300_000n,
    preVerificationGas: 50_000n,
    maxFeePerGas: 5_000_000_000n,
    maxPriorityFeePerGas: 1_000_000_000n,
    paymasterAndData: "0x",
    signature: "0x",
    ...fields,
  };
}

export const userOpHash = (t: TestChain, op: UserOp): Hex =>
  getUserOperationHash({
    userOperation: op,
    entryPointAddress: ENTRY_POINT_V06,
    entryPointVersion: "0.6",
    chainId: t.chainId,
  });

/** Signs like a wallet's personal_sign of the raw userOp hash. */
export async function signOp(t: TestChain, op: UserOp, signer: PrivateKeyAccount): Promise<UserOp> {
  return { ...op, signature: await signer.signMessage({ message: { raw: userOpHash(t, op) } }) };
}

/** VerifyingPaymaster.getHash, computed off-chain (the service's own computation). */
export const paymasterHash = (t: TestChain, op: UserOp, validUntil: number, validAfter: number, paymaster?: Address): Hex =>
  servicePaymasterHash(t.chainId, paymaster ?? t.deployment.paymaster, op, { validUntil, validAfter });

/** Adds the paymaster's sponsorship (valid for a day from the chain's clock unless told otherwise). */
export async function sponsor(
  t: TestChain,
  op: UserOp,
  {
    validUntil,
    validAfter = 0,
    signer = t.paymasterSigner,
  }: { validUntil?: number; validAfter?: number; signer?: PrivateKeyAccount } = {},
): Promise<UserOp> {
  const until = validUntil ?? (await now(t)) + 86_400;
  const signature = await signer.signMessage({ message: { raw: paymasterHash(t, op, until, validAfter) } });
  const times = encodeAbiParameters([{ type: "uint48" }, { type: "uint48" }], [until, validAfter]);
  return { ...op, paymasterAndData: concat([t.deployment.paymaster, times, signature]) };
}

export interface OpResult {
  userOpHash: Hex;
  sender: Address;
  nonce: bigint;
  success: boolean;
  actualGasCost: bigint;
  actualGasUsed: bigint;
  revertReason?: Hex;
}

/** Self-bundles `ops` with EntryPoint.handleOps from the funded key. A failed validation throws (FailedOp "AAxx"). */
export async function handleOps(t: TestChain, ops: UserOp[]): Promise<{ receipt: TransactionReceipt; results: OpResult[] }> {
  const receipt = await send(t, null, {
    address: t.deployment.entryPoint,
    abi: entryPointAbi,
    functionName: "handleOps",
    args: [ops, t.wallet.account.address],
  });
  const logs = parseEventLogs({ abi: entryPointAbi, logs: receipt.logs });
  const reasons = new Map<string, Hex>();
  for (const log of logs) {
    if (log.eventName === "UserOperationRevertReason") reasons.set(log.args.userOpHash, log.args.revertReason);
  }
  const results: OpResult[] = [];
  for (const log of logs) {
    if (log.eventName !== "UserOperationEvent") continue;
    const { userOpHash, sender, nonce, success, actualGasCost, actualGasUsed } = log.args;
    results.push({ userOpHash, sender, nonce, success, actualGasCost, actualGasUsed, revertReason: reasons.get(userOpHash) });
  }
  return { receipt, results };
}

/** Signs and submits one op, requiring its execution to succeed. */
export async function runOp(t: TestChain, op: UserOp, signer: PrivateKeyAccount) {
  const { receipt, results } = await handleOps(t, [await signOp(t, op, signer)]);
  const result = results[0];
  if (!result?.success) throw new Error(`userOp execution failed: ${result?.revertReason ?? "no event"}`);
  return { receipt, result };
}

/** An owner-signed op calling the account with `callData` (self-paid). */
export async function ownerOp(t: TestChain, account: TestAccount, callData: Hex) {
  return runOp(t, await buildOp(t, { sender: account.address, callData }), account.owner);
}

/** Sorts signers by address, as completeRecovery requires. */
export const byAddress = <T extends { address: Address }>(items: T[]) =>
  [...items].sort((a, b) => (BigInt(a.address) < BigInt(b.address) ? -1 : 1));

export const accountDomain = (t: TestChain, account: Address, chainId = t.chainId) =>
  ({ name: "SmartAccount", version: "1", chainId, verifyingContract: account }) as const;

export async function signRecovery(
  t: TestChain,
  account: Address,
  guardian: PrivateKeyAccount,
  recovery: { newOwner: Address; executeAfter: bigint; nonce: bigint },
): Promise<Hex> {
  return guardian.signTypedData({
    domain: accountDomain(t, account),
    types: {
      Recover: [
        { name: "newOwner", type: "address" },
        { name: "executeAfter", type: "uint64" },
        { name: "nonce", type: "uint256" },
      ],
    },
    primaryType: "Recover",
    message: recovery,
  });
}
