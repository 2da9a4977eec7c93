import * as knownChains from "viem/chains";
import { supportedChains } from "@/lib/chain/registry";
import { badRequest } from "@/lib/errors";

/**
 * The account types `accountType` accepts at creation, what each supports and how responses name it (type and
 * EntryPoint version, as the hosted service shows `Upgradeable_v06`). The stored value is the key.
 */
export const ACCOUNT_TYPES = {
  UpgradeableV5: {
    response: "Upgradeable_v06",
    /** What the dashboard calls it. */
    label: "Upgradeable v0.6 (its own proxy)",
    /** registerSessionKey / revokeSessionKey (sessions API). */
    sessions: true,
    /** Owner-driven ownership transfer and guardian recovery. */
    ownership: true,
    /** defaultGuardian at creation. */
    guardian: true,
    /** The EntryPoint version its operations go through. */
    entryPoint: "0.6",
    /** The account is an EOA delegating to our code (EIP-7702), not a contract of its own. */
    delegated: false,
  },
  /** SmartAccount behind a BeaconProxy to its project's beacon: the project upgrades all its managed accounts at once. */
  ManagedV5: { response: "Managed_v06", label: "Managed (upgraded with the project)", sessions: true, ownership: true, guardian: true, entryPoint: "0.6", delegated: false },
  /** Token-bound (EIP-6551): whoever holds tokenContract/tokenId controls it, so no owner of its own to move or recover. */
  ERC6551V1: { response: "ERC6551_v06", label: "Token-bound (ERC-6551)", sessions: false, ownership: false, guardian: false, entryPoint: "0.6", delegated: false },
  /** SmartAccountV8 proxy from AccountFactoryV8 on EntryPoint v0.8: what UpgradeableV5 is, on the newer EntryPoint. */
  UpgradeableV8: { response: "Upgradeable_v08", label: "Upgradeable on EntryPoint v0.8", sessions: true, ownership: true, guardian: true, entryPoint: "0.8", delegated: false },
  /**
   * The owner's EOA itself, delegating (EIP-7702) to DelegatedAccountV8 on EntryPoint v0.8: its key always rules, so no
   * ownership transfer or guardians.
   */
  DelegatedV8: { response: "Delegated_v08", label: "Delegated EOA (EIP-7702, v0.8)", sessions: true, ownership: false, guardian: false, entryPoint: "0.8", delegated: true },
} as const satisfies Record<
  string,
  { response: string; label: string; sessions: boolean; ownership: boolean; guardian: boolean; entryPoint: "0.6" | "0.8"; delegated: boolean }
>;

export type AccountType = keyof typeof ACCOUNT_TYPES;

/** Other spellings accepted for a type (the response names, for clients that echo them back). */
const ALIASES: Record<string, AccountType> = Object.fromEntries(Object.entries(ACCOUNT_TYPES).map(([type, t]) => [t.response, type as AccountType]));

export const ACCEPTED_ACCOUNT_TYPES = Object.keys(ACCOUNT_TYPES) as AccountType[];

/** The stored type for an `accountType` parameter (default UpgradeableV5), or a 400 listing the accepted ones. */
export function parseAccountType(value: string | undefined): AccountType {
  if (value === undefined) return "UpgradeableV5";
  if (value in ACCOUNT_TYPES) return value as AccountType;
  const alias = ALIASES[value];
  if (alias) return alias;
  const accepted = ACCEPTED_ACCOUNT_TYPES.join(", ");
  if (/^zksync/i.test(value)) refuseZkSync(value, accepted);
  throw badRequest(`accountType ${value} is not an account type. Accepted: ${accepted} (UpgradeableV5 is the default).`, {
    accountType: { value, message: `accepted: ${accepted}` },
  });
}

/** zkSync chains as viem knows them (their transactions carry zkSync's EIP-712 domain). */
const isZkSync = (chainId: number) =>
  Object.values(knownChains).some((c) => (c as { id?: number }).id === chainId && Boolean((c as { custom?: { getEip712Domain?: unknown } }).custom?.getEip712Domain));

/**
 * The hosted service's zkSync accounts use zkSync's native account abstraction, not ERC-4337: a 400 that says what
 * they would need and which chains this service has, rather than "not an account type".
 */
function refuseZkSync(value: string, accepted: string): never {
  const chains = supportedChains();
  const listed = chains.length ? `chains ${chains.map((c) => `${c.chainId} (${c.name})`).join(", ")}` : "no chains configured";
  const zk = chains.filter((c) => isZkSync(c.chainId)).map((c) => c.chainId);
  const which = zk.length === 0 ? `${listed}, none of them zkSync` : `${listed}; ${zk.join(", ")} ${zk.length === 1 ? "is" : "are"} zkSync, but this service deploys ERC-4337 accounts only`;
  throw badRequest(`accountType ${value} needs a zkSync chain; this service has ${which}. Accepted: ${accepted}.`, {
    accountType: { value, message: `needs a zkSync chain; accepted: ${accepted}` },
  });
}

/** How responses name a stored type. */
export const responseAccountType = (stored: string): string => ACCOUNT_TYPES[stored as AccountType]?.response ?? stored;

export const accountTypeInfo = (stored: string) => ACCOUNT_TYPES[stored as AccountType];

/** The EntryPoint version a stored type's operations use (0.6 for types this table does not know). */
export const entryPointVersionOf = (stored: string): "0.6" | "0.8" => ACCOUNT_TYPES[stored as AccountType]?.entryPoint ?? "0.6";

/** Whether a stored type is an EIP-7702 delegated EOA. */
export const isDelegatedType = (stored: string): boolean => ACCOUNT_TYPES[stored as AccountType]?.delegated ?? false;
