// What a userOperation makes the account do: the session-key checks read its calls (accountCalls), the signing page
// (lib/signing) describes them.
import { decodeFunctionData, erc20Abi, formatEther, formatUnits, isAddressEqual, maxUint256, size, slice, type Abi, type Address, type Hex } from "viem";
import { accountFactoryAbi, erc6551RegistryAbi, managedAccountFactoryAbi, simple7702AccountAbi, smartAccountAbi } from "@/contracts/artifacts";
import { decodedJson } from "@/lib/contracts/decoded-json";

/**
 * What a v0.6 userOperation makes the account do, read from the op itself (initCode and
 * callData), never from what the developer declared: the owner's signature authorizes the op,
 * so every call in it is shown, with the ones that change who controls the account or spend its
 * money said in words.
 */

/** One call the account makes (or, for a direct op, the account's own function the EntryPoint calls). */
export interface RawCall {
  to: Address;
  value: bigint;
  data: Hex;
}

export type CallKind =
  /** initCode: the account is created by this op (with its first guardian, when the factory builds one in). */
  | "deployment"
  /** addGuardian: someone else may recover (take over) the account. */
  | "guardian"
  /** The policy's token payment to the project for the gas. */
  | "token_charge"
  /** Any other call to the account itself (ownership, session keys, recovery, upgrade…). */
  | "account"
  /** An ERC-20 transfer, approval or transferFrom. */
  | "token"
  /** Native coin sent with no data. */
  | "transfer"
  /** A function of a registered contract. */
  | "contract"
  /** A call no ABI we know decodes: shown raw. */
  | "unknown";

export interface DecodedCall {
  kind: CallKind;
  /** What it does, in words the owner can check. */
  summary: string;
  /** Hands control of the account to someone, or lets someone spend from it. */
  attention: boolean;
  to: Address;
  /** Native amount sent along, e.g. "0.5 ETH". */
  value: string;
  /** The registered contract (or "Your account" / the account factory) the call goes to. */
  contract: { id: string | null; name: string } | null;
  functionName: string | null;
  /** The decoded arguments as JSON. */
  args: string | null;
  /** The first 4 bytes of the data, when there are any. */
  selector: Hex | null;
  /** The call's raw data, always given: the decoding above is only a reading of it. */
  data: Hex;
}

/** What a call's target is known as, for naming it and decoding its data. */
export interface KnownContract {
  id: string;
  name: string;
  abi: unknown[];
}

export interface TokenInfo {
  symbol: string;
  decimals: number;
}

/** What the decoder knows about the project, the service and the chain. */
export interface DecodeContext {
  /** The op's sender: the account whose owner signs. */
  account: Address;
  /** The native coin's symbol. */
  symbol: string;
  accountFactory: Address;
  /** Our ManagedAccountFactory, which deploys ManagedV5 accounts (and their project's beacon). */
  managedAccountFactory?: Address;
  /** Our ERC-6551 registry, which deploys token-bound (ERC6551V1) accounts. */
  tokenBoundRegistry?: Address;
  /** The service's guardian key (accounts created with defaultGuardian get it as a guardian). */
  serviceGuardian: Address;
  /** Registered contracts of the project on the chain, by lowercase address (several registrations may share one). */
  contracts: Map<string, KnownContract[]>;
  /** The project's developer accounts, by lowercase address: token payments to them go to the project. */
  projectAccounts: Set<string>;
  /** ERC-20 symbol and decimals read from the chain, by lowercase address (absent when it did not answer). */
  tokens: Map<string, TokenInfo>;
  /** The token charge the intent's policy added: `token` paid `amount` base units for the gas. */
  charge: { token: Address; amount: bigint } | null;
}

const key = (address: string) => address.toLowerCase();

/**
 * The calls of an account's callData: `execute` is one call, `executeBatch` several; empty
 * callData calls nothing; anything else calls the account's own function directly (the op's
 * form for guardian-signed recovery), so it is shown as a call to the account.
 */
export function accountCalls(sender: Address, callData: Hex): RawCall[] {
  if (size(callData) === 0) return [];
  try {
    const call = decodeFunctionData({ abi: smartAccountAbi, data: callData });
    if (call.functionName === "execute") {
      const [to, value, data] = call.args;
      return [{ to, value, data }];
    }
    if (call.functionName === "executeBatch") {
      const [targets, values, datas] = call.args;
      // Lists of different lengths make the account revert (LengthMismatch): shown as the one call it is.
      if (targets.length === values.length && targets.length === datas.length) {
        return targets.map((to, i) => ({ to, value: values[i]!, data: datas[i]! }));
      }
    }
  } catch {
    // not a v0.6 execute call: a v0.8 one, or a direct call to the account, decoded (or shown raw) below
  }
  try {
    // EntryPoint v0.8 accounts (BaseAccount v0.8: SmartAccountV8, DelegatedAccountV8): executeBatch takes Call[].
    const call = decodeFunctionData({ abi: simple7702AccountAbi, data: callData });
    if (call.functionName === "executeBatch") return call.args[0].map((c) => ({ to: c.target, value: c.value, data: c.data }));
  } catch {
    // a direct call to the account
  }
  return [{ to: sender, value: 0n, data: callData }];
}

const when = (seconds: number | bigint) => `${new Date(Number(seconds) * 1000).toISOString().slice(0, 16).replace("T", " ")} UTC`;

/** The words for a known party: the account itself, the service, the project, a registered contract. */
function who(ctx: DecodeContext, address: Address): string {
  if (isAddressEqual(address, ctx.account)) return `your account (${address})`;
  if (isAddressEqual(address, ctx.serviceGuardian)) return `the service (${address})`;
  if (ctx.projectAccounts.has(key(address))) return `the project (${address})`;
  const contract = ctx.contracts.get(key(address))?.[0];
  return contract ? `${contract.name} (${address})` : address;
}

const nativeAmount = (ctx: DecodeContext, wei: bigint) => `${formatEther(wei)} ${ctx.symbol}`;

function tokenAmount(ctx: DecodeContext, token: Address, amount: bigint): string {
  const info = ctx.tokens.get(key(token));
  return info ? `${formatUnits(amount, info.decimals)} ${info.symbol}` : `${amount} base units of the token at ${token}`;
}

const selectorOf = (data: Hex): Hex | null => (size(data) >= 4 ? slice(data, 0, 4) : null);

function decode(abi: unknown[], data: Hex): { functionName: string; args: readonly unknown[] } | null {
  try {
    const call = decodeFunctionData({ abi: abi as Abi, data });
    return { functionName: call.functionName, args: call.args ?? [] };
  } catch {
    return null;
  }
}

type Words = { kind: CallKind; summary: string; attention: boolean };

/** A call of the account to itself, in words: these change who controls it. */
function accountWords(ctx: DecodeContext, fn: string, args: readonly unknown[], value: bigint): Words {
  const a = (i: number) => args[i] as Address;
  const account = (summary: string, attention = true): Words => ({ kind: "account", summary, attention });
  switch (fn) {
    case "addGuardian":
      return {
        kind: "guardian",
        summary: `Adds ${who(ctx, a(0))} as a guardian of your account: it can help recover the account if you lose your key`,
        attention: true,
      };
    case "removeGuardian":
      return account(`Removes ${who(ctx, a(0))} as a guardian of your account`, false);
    case "transferOwnership":
      return account(`Offers your account to a new owner, ${a(0)}: once it accepts, it controls the account instead of you`);
    case "cancelOwnershipTransfer":
      return account("Cancels the pending transfer of your account to a new owner", false);
    case "acceptOwnership":
      return account("Makes your account accept the ownership it was offered");
    case "registerSessionKey": {
      const [sessionKey, validAfter, validUntil, limit, whitelist, maxFeePerOp] = args as [Address, number, number, number, readonly Address[], bigint];
      const from = Number(validAfter) === 0 ? "now" : when(validAfter);
      const targets = whitelist.length ? `calling only ${whitelist.map((t) => who(ctx, t)).join(", ")}` : "calling any contract but your account itself";
      // 2^48-1, the largest uint48, is how the sessions API registers a key without a use limit.
      const uses = Number(limit) === 2 ** 48 - 1 ? "any number of operations" : `at most ${limit} operations`;
      const fees = maxFeePerOp === 0n ? "only when a sponsor pays their fees" : `each making your account pay at most ${nativeAmount(ctx, maxFeePerOp)} in fees`;
      return account(`Lets the session key ${sessionKey} sign for your account from ${from} until ${when(validUntil)}, ${uses}, ${targets}, ${fees}`);
    }
    case "revokeSessionKey":
      return account(`Revokes the session key ${a(0)}`, false);
    case "startRecovery":
      return account(`Starts recovering your account to a new owner, ${a(0)}`);
    case "completeRecovery":
      return account(`Completes the recovery of your account to its new owner, with ${(args[0] as readonly Hex[]).length} guardian signature(s)`);
    case "cancelRecovery":
      return account("Cancels the recovery of your account in progress", false);
    case "withdrawDepositTo":
      return account(`Withdraws ${nativeAmount(ctx, args[1] as bigint)} of your account's EntryPoint deposit to ${who(ctx, a(0))}`);
    case "addDeposit":
      return account(`Adds ${nativeAmount(ctx, value)} to your account's EntryPoint deposit, for its gas`, false);
    case "executeBatch":
      return account("Runs a batch of calls whose lists differ in length: your account will refuse it", false);
    case "upgradeToAndCall":
      return account(`Replaces your account's code with the contract at ${a(0)}: the new code decides who controls the account`);
    default:
      return account(`Calls ${fn} on your account`);
  }
}

/** ERC-20 transfers and approvals, in words (whatever else the target's registered ABI says of them). */
function tokenWords(ctx: DecodeContext, token: Address, data: Hex): Words | null {
  const call = decode(erc20Abi as unknown as unknown[], data);
  if (!call) return null;
  const [first, second, third] = call.args as [Address, Address | bigint, bigint];
  switch (call.functionName) {
    case "transfer": {
      const amount = second as bigint;
      if (!ctx.projectAccounts.has(key(first))) return { kind: "token", summary: `Sends ${tokenAmount(ctx, token, amount)} to ${who(ctx, first)}`, attention: true };
      const charge = ctx.charge !== null && isAddressEqual(ctx.charge.token, token) && ctx.charge.amount === amount;
      return {
        kind: charge ? "token_charge" : "token",
        summary: `Pays ${tokenAmount(ctx, token, amount)} to ${who(ctx, first)}${charge ? " for gas" : ""}`,
        attention: true,
      };
    }
    case "approve": {
      const amount = second as bigint;
      const what = amount === maxUint256 ? `any amount of ${ctx.tokens.get(key(token))?.symbol ?? `the token at ${token}`}` : tokenAmount(ctx, token, amount);
      return { kind: "token", summary: `Allows ${who(ctx, first)} to spend ${what} from your account`, attention: amount > 0n };
    }
    case "transferFrom":
      return { kind: "token", summary: `Moves ${tokenAmount(ctx, token, third)} from ${who(ctx, first)} to ${who(ctx, second as Address)}`, attention: isAddressEqual(first, ctx.account) };
    default:
      return null;
  }
}

/** One call in words, with its registered contract and decoded arguments, and always its raw data. */
export function describeCall(ctx: DecodeContext, call: RawCall): DecodedCall {
  const base = { to: call.to, value: nativeAmount(ctx, call.value), selector: selectorOf(call.data), data: call.data };
  const sends = call.value > 0n ? `, sending ${nativeAmount(ctx, call.value)} with it` : "";

  if (isAddressEqual(call.to, ctx.account)) {
    const contract = { id: null, name: "Your account" };
    if (size(call.data) === 0) {
      return { ...base, kind: "transfer", summary: `Sends ${nativeAmount(ctx, call.value)} to your account itself`, attention: false, contract, functionName: null, args: null };
    }
    const decoded = decode(smartAccountAbi as unknown as unknown[], call.data);
    if (!decoded) {
      return { ...base, kind: "unknown", summary: `Calls an unknown function (selector ${base.selector ?? "none"}) on your account${sends}`, attention: true, contract, functionName: null, args: null };
    }
    const words = accountWords(ctx, decoded.functionName, decoded.args, call.value);
    const summary = decoded.functionName === "addDeposit" ? words.summary : words.summary + sends;
    return { ...base, ...words, summary, contract, functionName: decoded.functionName, args: decodedJson(decoded.args) };
  }

  const registered = ctx.contracts.get(key(call.to)) ?? [];
  let named: { contract: KnownContract; functionName: string; args: readonly unknown[] } | null = null;
  for (const contract of registered) {
    const decoded = decode(contract.abi, call.data);
    if (decoded) {
      named = { contract, ...decoded };
      break;
    }
  }
  const token = size(call.data) > 0 ? tokenWords(ctx, call.to, call.data) : null;
  const contract = named?.contract ?? registered[0];
  const ref = contract ? { id: contract.id, name: contract.name } : null;
  if (token) {
    const erc20 = decode(erc20Abi as unknown as unknown[], call.data)!;
    const fn = named ?? erc20;
    return { ...base, ...token, summary: token.summary + sends, contract: ref, functionName: fn.functionName, args: decodedJson(fn.args) };
  }
  if (named) {
    return { ...base, kind: "contract", summary: `Calls ${named.functionName} on ${named.contract.name}${sends}`, attention: call.value > 0n, contract: ref, functionName: named.functionName, args: decodedJson(named.args) };
  }
  if (size(call.data) === 0) {
    const summary = call.value > 0n ? `Sends ${nativeAmount(ctx, call.value)} to ${who(ctx, call.to)}` : `Calls ${who(ctx, call.to)} with no data and no value`;
    return { ...base, kind: "transfer", summary, attention: call.value > 0n, contract: ref, functionName: null, args: null };
  }
  return {
    ...base,
    kind: "unknown",
    summary: `Calls an unknown function (selector ${base.selector ?? "none"}) on ${who(ctx, call.to)}${sends}`,
    attention: true,
    contract: ref,
    functionName: null,
    args: null,
  };
}

/** The op's initCode in words: our factory deploying the account, or whatever factory it names, raw. */
export function describeDeployment(ctx: DecodeContext, initCode: Hex): DecodedCall | null {
  if (size(initCode) === 0) return null;
  if (size(initCode) < 20) {
    return { kind: "unknown", summary: "Carries malformed deployment code (initCode shorter than an address): the operation will be refused", attention: true, to: ctx.account, value: nativeAmount(ctx, 0n), contract: null, functionName: null, args: null, selector: null, data: initCode };
  }
  const factory = slice(initCode, 0, 20) as Address;
  const data = size(initCode) > 20 ? slice(initCode, 20) : "0x";
  const base = { to: factory, value: nativeAmount(ctx, 0n), selector: selectorOf(data), data };
  const decoded = isAddressEqual(factory, ctx.accountFactory) ? decode(accountFactoryAbi as unknown as unknown[], data) : null;
  if (decoded?.functionName === "createAccount") {
    const [owner] = decoded.args as [Address, Hex];
    return {
      ...base,
      kind: "deployment",
      summary: `Deploys your account (${ctx.account}), owned by ${owner}`,
      attention: false,
      contract: { id: null, name: "Account factory" },
      functionName: decoded.functionName,
      args: decodedJson(decoded.args),
    };
  }
  if (decoded?.functionName === "createAccountWithGuardian") {
    // Not a separate addGuardian call: the factory builds the guardian in, and the owner must see it all the same.
    const [owner, guardian] = decoded.args as [Address, Address, Hex];
    return {
      ...base,
      kind: "deployment",
      summary: `Deploys your account (${ctx.account}), owned by ${owner}, with ${who(ctx, guardian)} as guardian: it can help recover the account if you lose your key`,
      attention: true,
      contract: { id: null, name: "Account factory" },
      functionName: decoded.functionName,
      args: decodedJson(decoded.args),
    };
  }
  const managed = ctx.managedAccountFactory && isAddressEqual(factory, ctx.managedAccountFactory) ? decode(managedAccountFactoryAbi as unknown as unknown[], data) : null;
  if (managed?.functionName === "createAccount" || managed?.functionName === "createAccountWithGuardian") {
    // The owner must know the project, not they, decides what code the account runs.
    const [, owner, guardian] = managed.args as [Hex, Address, Address | Hex];
    const withGuardian = managed.functionName === "createAccountWithGuardian" ? `, with ${who(ctx, guardian as Address)} as guardian: it can help recover the account if you lose your key` : "";
    return {
      ...base,
      kind: "deployment",
      summary: `Deploys your managed account (${ctx.account}), owned by ${owner}${withGuardian}. The project can upgrade the code of its managed accounts`,
      attention: true,
      contract: { id: null, name: "Managed account factory" },
      functionName: managed.functionName,
      args: decodedJson(managed.args),
    };
  }
  const tokenBound = ctx.tokenBoundRegistry && isAddressEqual(factory, ctx.tokenBoundRegistry) ? decode(erc6551RegistryAbi as unknown as unknown[], data) : null;
  if (tokenBound?.functionName === "createAccount") {
    const [, , , tokenContract, tokenId] = tokenBound.args as [Address, Hex, bigint, Address, bigint];
    return {
      ...base,
      kind: "deployment",
      summary: `Deploys your token-bound account (${ctx.account}), controlled by whoever holds token ${tokenId} of ${who(ctx, tokenContract)}`,
      attention: false,
      contract: { id: null, name: "ERC-6551 registry" },
      functionName: tokenBound.functionName,
      args: decodedJson(tokenBound.args),
    };
  }
  return { ...base, kind: "unknown", summary: `Deploys your account through ${factory}, which is not the service's account factory`, attention: true, contract: null, functionName: null, args: null };
}

/** Every step of the op: its deployment (if any), then each call of its callData, in order. */
export function describeOperation(ctx: DecodeContext, op: { initCode: Hex; callData: Hex }): DecodedCall[] {
  const deployment = describeDeployment(ctx, op.initCode);
  return [...(deployment ? [deployment] : []), ...accountCalls(ctx.account, op.callData).map((call) => describeCall(ctx, call))];
}
