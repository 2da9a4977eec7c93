import crypto from "node:crypto";

export const ID_PREFIXES = {
  player: "pla",
  account: "acc",
  developerAccount: "dac",
  contract: "con",
  policy: "pol",
  policyRule: "afu",
  session: "ses",
  transactionIntent: "tin",
  event: "eve",
  subscription: "sub",
  trigger: "tri",
  project: "pro",
  apiKey: "key",
  request: "req",
  ownerKey: "own",
  webhookDelivery: "whd",
  /** A published event, as the webhook-id header names it (Standard Webhooks calls them messages). */
  message: "msg",
  developer: "dev",
  /** A player's sign-in method (linked account). */
  identity: "lnk",
  /** A signed-in player's session (not a session key: those are ses_). */
  playerSession: "pss",
  playerTokenKey: "ptk",
  oauthConfig: "oac",
  oauthSignin: "osi",
  organization: "org",
  paymaster: "pay",
  /** An operation our paymaster signed over ERC-7677 for a client that built it. */
  sponsoredOperation: "spo",
  /** A hold on a project's sponsorship balance, and an entry of its journal. */
  sponsorshipHold: "hld",
  sponsorshipEntry: "sle",
  sponsorshipDecline: "sdc",
  forwarderContract: "fwd",
  /** A signature of our paymaster, an op it paid as seen on chain, a reconciliation of a chain with the ledger. */
  paymasterSignature: "psg",
  chainLanding: "lnd",
  sponsorshipReconciliation: "rec",
} as const;

export type IdKind = keyof typeof ID_PREFIXES;

/** `pla_` + a random UUID, as the hosted service formats its ids. */
export function newId(kind: IdKind): string {
  return `${ID_PREFIXES[kind]}_${crypto.randomUUID()}`;
}
