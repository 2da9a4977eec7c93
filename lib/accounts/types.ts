import { badRequest } from "@/lib/http/errors";

/**
 * The account types `accountType` accepts at creation, what each supports and how responses name it (type and
 * EntryPoint version, as the hosted service shows `Upgradeable_v06`). The stored value is the key.
 */
export const ACCOUNT_TYPES = {
  UpgradeableV5: {
    response: "Upgradeable_v06",
    /** registerSessionKey / revokeSessionKey (sessions API). */
    sessions: true,
    /** Owner-driven ownership transfer and guardian recovery. */
    ownership: true,
    /** defaultGuardian at creation. */
    guardian: true,
  },
} as const satisfies Record<string, { response: string; sessions: boolean; ownership: boolean; guardian: boolean }>;

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
  throw badRequest(`accountType ${value} is not an account type. Accepted: ${accepted} (UpgradeableV5 is the default).`, {
    accountType: { value, message: `accepted: ${accepted}` },
  });
}

/** How responses name a stored type. */
export const responseAccountType = (stored: string): string => ACCOUNT_TYPES[stored as AccountType]?.response ?? stored;

export const accountTypeInfo = (stored: string) => ACCOUNT_TYPES[stored as AccountType];
