// Actions on an account itself (ownership transfer, guardian recovery), each run as a transaction intent to the account.
import { encodeFunctionData, isAddressEqual, recoverAddress, type Address, type Hex } from "viem";
import { smartAccountAbi } from "@/contracts/artifacts";
import { onChain, publicClient } from "@/lib/chain/clients";
import { requireDeployment } from "@/lib/chain/contracts";
import { chainFor, type ChainConfig } from "@/lib/chain/registry";
import type { Queryable } from "@/lib/db/client";
import { badRequest } from "@/lib/errors";
import { serviceAccount } from "@/lib/keys/service-keys";
import type { ProjectContext } from "@/lib/tenant";
import { liveDeployer } from "@/lib/intents/deployer";
import { playerSender, type IntentSender } from "@/lib/intents/sender";
import { loadPolicy, recordIntent, type IntentPlan, type IntentRow } from "@/lib/intents/service";
import { publishIntentEventAfterCommit } from "@/lib/deliveries/publish";
import { cancelUnsigned } from "@/lib/intents/land-intent";
import { getAccount, type AccountRow } from "@/lib/accounts/service";
import { accountTypeInfo, isDelegatedType } from "@/lib/account-records/types";

/**
 * Operations on the account itself (ownership, recovery) as transaction intents: calls to the
 * account, so the policy needs an account_functions rule, like any self-call.
 */
export async function selfIntent(
  db: Queryable,
  ctx: ProjectContext,
  account: AccountRow,
  /** Without a policy the account pays its own gas. */
  policyId: string | undefined,
  functionName: string,
  data: Hex,
  options: { sender?: IntentSender; direct?: boolean; args?: unknown[]; sessionId?: string; optimistic?: boolean; check?: IntentPlan["check"]; cause?: IntentPlan["cause"] } = {},
): Promise<IntentRow> {
  const chain = chainFor(ctx, account.chainId);
  const sponsor = await loadPolicy(db, ctx, policyId);
  await requireDeployment(chain);
  const to = account.address as Address;
  return recordIntent(db, ctx, chain, options.sender ?? (await playerSender(db, account)), {
    calls: [{ to, value: 0n, data }],
    ruled: [{ contractId: null, to, functionName, self: true }],
    sponsor,
    interactions: [{ to, functionName, functionArgs: options.args ?? [], data, value: "0" }],
    optimistic: options.optimistic ?? false,
    confirmationBlocks: 5,
    sessionId: options.sessionId,
    check: options.check,
    cause: options.cause ?? "account_action",
    ...(options.direct ? { callData: data } : {}),
  });
}

const readAccount = <T>(chain: ChainConfig, account: AccountRow, functionName: string, args: unknown[] = []) =>
  onChain(chain, () => publicClient(chain).readContract({ address: account.address as Address, abi: smartAccountAbi, functionName, args } as never) as Promise<T>);

/** Accounts whose type has no owner-driven ownership (a token-bound account follows its token) cannot transfer or recover it. */
function ownerDriven(account: AccountRow): AccountRow {
  const ownership: boolean = accountTypeInfo(account.accountType)?.ownership ?? true;
  if (!ownership) {
    const why = isDelegatedType(account.accountType)
      ? `a ${account.accountType} account is its owner's EOA (EIP-7702), whose key always controls it: it has no ownership to transfer and no guardians`
      : `a ${account.accountType} account has no owner-driven ownership (a token-bound account is controlled by whoever holds its token)`;
    throw badRequest(`Account ${account.id} cannot change owner through the API: ${why}.`, { id: { value: account.id, message: why } });
  }
  return account;
}

/** Step one of a two-step transfer: the new owner accepts it with its own call to acceptOwnership(). Signed by the owner. */
export async function requestOwnershipTransfer(db: Queryable, ctx: ProjectContext, id: string, input: { newOwnerAddress: Address; policy: string }) {
  const account = ownerDriven(await getAccount(db, ctx, id));
  if (isAddressEqual(input.newOwnerAddress, account.ownerAddress as Address)) {
    throw badRequest(`${input.newOwnerAddress} already owns account ${account.id}.`, { newOwnerAddress: { value: input.newOwnerAddress, message: "is the current owner" } });
  }
  const data = encodeFunctionData({ abi: smartAccountAbi, functionName: "transferOwnership", args: [input.newOwnerAddress] });
  return selfIntent(db, ctx, account, input.policy, "transferOwnership", data, { args: [input.newOwnerAddress] });
}

export async function cancelOwnershipTransfer(db: Queryable, ctx: ProjectContext, id: string, input: { policy: string }) {
  const account = ownerDriven(await getAccount(db, ctx, id));
  const data = encodeFunctionData({ abi: smartAccountAbi, functionName: "cancelOwnershipTransfer" });
  return selfIntent(db, ctx, account, input.policy, "cancelOwnershipTransfer", data);
}

/**
 * How the service drives recovery as the account's guardian (accounts created with defaultGuardian): it signs, as
 * guardian, a sponsored operation calling the recovery function directly, the only operation a guardian's signature
 * is valid for. Not deployed yet, the same operation carries the account's initCode, which deploys it with the
 * service as guardian (AccountFactory.createAccountWithGuardian): an account created recoverable is recoverable
 * before its first transaction, whoever holds (or lost) the owner key.
 */
async function recoveryPlan(db: Queryable, ctx: ProjectContext, id: string, step: "start" | "complete"): Promise<{ account: AccountRow; chain: ChainConfig; sender: IntentSender }> {
  const account = ownerDriven(await getAccount(db, ctx, id));
  const chain = chainFor(ctx, account.chainId);
  await requireDeployment(chain);
  const guardian = serviceAccount("guardian");
  const code = await onChain(chain, () => publicClient(chain).getCode({ address: account.address as Address }));
  const notGuardian = () =>
    badRequest(`The service is not a guardian of account ${account.id}: recovery through the API needs an account created with defaultGuardian=true.`, {
      id: { value: account.id, message: "the service is not its guardian" },
    });
  if (!code) {
    if (step === "complete") throw badRequest(`Account ${account.id} has no recovery in progress (it is not deployed yet); start one first.`);
    if (!account.defaultGuardian) throw notGuardian();
  } else if (!(await readAccount<boolean>(chain, account, "isGuardian", [guardian.address]))) {
    throw notGuardian();
  }
  return { account, chain, sender: { ...(await playerSender(db, account)), deployed: Boolean(code), signer: guardian } };
}

/**
 * An owner's first intent still awaiting its signature carries the account's deployment (one live deployer per
 * account), and an owner who lost the key never signs it: recovery would wait behind it for ever. It is cancelled, so
 * that the recovery's own operation deploys the account.
 */
async function cancelUnsignedDeployer(db: Queryable, account: AccountRow) {
  const deployer = await liveDeployer(db, account.chainId, account.id);
  if (deployer?.status !== "awaiting_signature") return;
  if (await cancelUnsigned(db, deployer.id, "cancelled by start_recovery, whose operation deploys the account instead")) {
    await publishIntentEventAfterCommit(db, deployer.id, "transaction_intent.cancelled");
  }
}

/** Proposes a new owner; it can take over after the recovery period with a strict majority of the guardians' signatures. */
export async function startRecovery(db: Queryable, ctx: ProjectContext, id: string, input: { newOwnerAddress: Address; policy: string }) {
  const { account, sender } = await recoveryPlan(db, ctx, id, "start");
  const data = encodeFunctionData({ abi: smartAccountAbi, functionName: "startRecovery", args: [input.newOwnerAddress] });
  if (!sender.deployed) {
    await loadPolicy(db, ctx, input.policy);
    await cancelUnsignedDeployer(db, account);
  }
  return selfIntent(db, ctx, account, input.policy, "startRecovery", data, { sender, direct: true, args: [input.newOwnerAddress] });
}

/**
 * Completes a due recovery with the other guardians' EIP-712 signatures of `recoveryHash()`;
 * the service adds its own and orders them by signer as the account requires.
 */
export async function completeRecovery(db: Queryable, ctx: ProjectContext, id: string, input: { newOwnerAddress: Address; policy: string; signatures: Hex[] }) {
  const { account, chain, sender } = await recoveryPlan(db, ctx, id, "complete");
  const [newOwner, , required] = await readAccount<readonly [Address, bigint, number]>(chain, account, "getRecovery");
  if (/^0x0{40}$/.test(newOwner)) throw badRequest(`Account ${account.id} has no recovery in progress; start one first.`);
  if (!isAddressEqual(newOwner, input.newOwnerAddress)) {
    throw badRequest(`The recovery in progress on account ${account.id} is to ${newOwner}, not ${input.newOwnerAddress}.`, {
      newOwnerAddress: { value: input.newOwnerAddress, message: `the recovery is to ${newOwner}` },
    });
  }
  const digest = await readAccount<Hex>(chain, account, "recoveryHash");
  const guardian = serviceAccount("guardian");
  const ours = await guardian.sign({ hash: digest });
  const signed = await Promise.all(
    input.signatures.map(async (signature, i) => {
      try {
        return { signer: await recoverAddress({ hash: digest, signature }), signature };
      } catch {
        throw badRequest(`signatures[${i}] is not a valid ECDSA signature.`, { [`signatures[${i}]`]: { value: signature, message: "malformed" } });
      }
    }),
  );
  // One signature per signer (the account refuses repeats), ours included once.
  const bySigner = new Map<string, { signer: Address; signature: Hex }>();
  for (const s of [...signed, { signer: guardian.address, signature: ours }]) bySigner.set(s.signer.toLowerCase(), s);
  const all = [...bySigner.values()].sort((a, b) => (BigInt(a.signer) < BigInt(b.signer) ? -1 : 1));
  if (all.length < required) {
    throw badRequest(
      `Completing the recovery of account ${account.id} needs signatures of ${required} guardians (a strict majority); there are ${all.length}, the service's included. Add other guardians' signatures of the account's recoveryHash().`,
      { signatures: { message: `needs ${required - 1} other guardians' signatures` } },
    );
  }
  const signatures = all.map((s) => s.signature);
  const data = encodeFunctionData({ abi: smartAccountAbi, functionName: "completeRecovery", args: [signatures] });
  return selfIntent(db, ctx, account, input.policy, "completeRecovery", data, { sender, direct: true, args: [signatures] });
}
