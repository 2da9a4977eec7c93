import { sql } from "drizzle-orm";
import {
  bigint,
  boolean,
  index,
  integer,
  jsonb,
  numeric,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
} from "drizzle-orm/pg-core";

const createdAt = () => timestamp({ withTimezone: true, precision: 6 }).notNull().defaultNow();

/** A team of developers; its members see its projects in the dashboard. */
export const organizations = pgTable("organizations", {
  id: text().primaryKey(),
  name: text().notNull(),
  createdAt: createdAt(),
});

/** Projects made from the command line or at first start have no organization until one claims them. */
export const projects = pgTable(
  "projects",
  {
    id: text().primaryKey(),
    name: text().notNull(),
    organizationId: text().references(() => organizations.id, { onDelete: "set null" }),
    createdAt: createdAt(),
  },
  (t) => [index().on(t.organizationId)],
);

/** A dashboard user. The password hash is scrypt's (memory-hard); OAuth-only developers have none. */
export const developers = pgTable("developers", {
  id: text().primaryKey(),
  email: text().notNull().unique(),
  name: text(),
  passwordHash: text(),
  createdAt: createdAt(),
});

/** A developer's sign-in with an OAuth provider (GitHub, Google), by the provider's own account id. */
export const developerIdentities = pgTable(
  "developer_identities",
  {
    provider: text().notNull(),
    providerAccountId: text().notNull(),
    developerId: text()
      .notNull()
      .references(() => developers.id, { onDelete: "cascade" }),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.provider, t.providerAccountId] })],
);

export const organizationMembers = pgTable(
  "organization_members",
  {
    organizationId: text()
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    developerId: text()
      .notNull()
      .references(() => developers.id, { onDelete: "cascade" }),
    role: text({ enum: ["owner", "member"] }).notNull(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.organizationId, t.developerId] }), index().on(t.developerId)],
);

/** Every tenant-owned row: its project and its mode (test or live). */
const tenant = () => ({
  projectId: text()
    .notNull()
    .references(() => projects.id, { onDelete: "cascade" }),
  livemode: boolean().notNull(),
});

/**
 * Publishable keys are public by design and kept in clear. Secret keys are found by their
 * SHA-256 (they are long random strings, so a fast hash is enough) and kept encrypted only
 * because webhook signing needs the raw key later.
 */
export const apiKeys = pgTable(
  "api_keys",
  {
    id: text().primaryKey(),
    ...tenant(),
    kind: text({ enum: ["publishable", "secret"] }).notNull(),
    hash: text().notNull().unique(),
    hint: text().notNull(),
    publishableKey: text(),
    encryptedSecret: text(),
    createdAt: createdAt(),
    revokedAt: timestamp({ withTimezone: true }),
  },
  (t) => [index().on(t.projectId, t.livemode, t.kind)],
);

export const players = pgTable(
  "players",
  {
    id: text().primaryKey(),
    ...tenant(),
    name: text(),
    email: text(),
    description: text(),
    metadata: jsonb().$type<Record<string, string | number | boolean>>(),
    createdAt: createdAt(),
    updatedAt: createdAt(),
    deletedAt: timestamp({ withTimezone: true }),
  },
  (t) => [index().on(t.projectId, t.livemode, t.createdAt, t.id)],
);

export const contracts = pgTable(
  "contracts",
  {
    id: text().primaryKey(),
    ...tenant(),
    name: text(),
    chainId: integer().notNull(),
    address: text().notNull(),
    abi: jsonb().$type<unknown[]>().notNull(),
    publicVerification: boolean().notNull().default(false),
    deleted: boolean().notNull().default(false),
    createdAt: createdAt(),
    updatedAt: createdAt(),
  },
  (t) => [
    index().on(t.projectId, t.livemode, t.createdAt, t.id),
    // Not unique: one address may be registered under several names or ABIs (a setup script run twice).
    index("contracts_address_idx").on(t.projectId, t.livemode, t.chainId, t.address),
  ],
);

export const idempotencyKeys = pgTable(
  "idempotency_keys",
  {
    ...tenant(),
    /** Who sent it (an API key's id, a player, ...): one caller cannot claim or replay another's key. */
    credential: text().notNull(),
    key: text().notNull(),
    requestHash: text().notNull(),
    responseStatus: integer(),
    /** The answer as JSON, sealed (it may carry tokens): lib/http/idempotency.ts. */
    sealedResponse: text(),
    /** The request that holds the claim: what a retry finds of its work should it have died before answering. */
    requestId: text(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.livemode, t.credential, t.key] }), index().on(t.createdAt)],
);

export const requestLogs = pgTable(
  "request_logs",
  {
    id: text().primaryKey(),
    projectId: text().references(() => projects.id, { onDelete: "cascade" }),
    livemode: boolean(),
    method: text().notNull(),
    path: text().notNull(),
    status: integer().notNull(),
    durationMs: integer().notNull(),
    createdAt: createdAt(),
  },
  // createdAt alone: the retention sweep deletes by age across projects (lib/retention.ts).
  (t) => [index().on(t.projectId, t.livemode, t.createdAt, t.id), index().on(t.createdAt)],
);

/**
 * A player's custodial owner key: one per player, so all its custodial accounts share one owner
 * and hence one address on every chain. Encrypted under the master key, bound to its address.
 */
export const ownerKeys = pgTable("owner_keys", {
  id: text().primaryKey(),
  ...tenant(),
  playerId: text()
    .notNull()
    .unique()
    .references(() => players.id, { onDelete: "cascade" }),
  address: text().notNull(),
  encryptedPrivateKey: text().notNull(),
  createdAt: createdAt(),
});

export const accounts = pgTable(
  "accounts",
  {
    id: text().primaryKey(),
    ...tenant(),
    playerId: text()
      .notNull()
      .references(() => players.id, { onDelete: "cascade" }),
    chainId: integer().notNull(),
    address: text().notNull(),
    ownerAddress: text().notNull(),
    pendingOwnerAddress: text(),
    /** The service holds the owner key (see owner_keys). */
    custodial: boolean().notNull(),
    embeddedSigner: boolean().notNull().default(false),
    accountType: text().notNull(),
    /** CREATE2 salt given to the factory (derived from the player). */
    salt: text().notNull(),
    defaultGuardian: boolean().notNull().default(false),
    /** ERC6551V1: the ERC-721 contract and token id whose holder controls the account. */
    tokenContract: text(),
    tokenId: text(),
    /**
     * DelegatedV8: whom the EOA's code delegates to (EIP-7702) as last read from the chain; null before any delegation.
     * Another address than our DelegatedAccountV8 means it was changed outside the service (reported, never undone).
     */
    delegatedTo: text(),
    deployed: boolean().notNull().default(false),
    createdAt: createdAt(),
    updatedAt: createdAt(),
  },
  (t) => [
    // At most one account per player and chain; also what makes concurrent creates safe.
    uniqueIndex("accounts_player_chain_unique").on(t.playerId, t.chainId),
    index().on(t.projectId, t.livemode, t.createdAt, t.id),
    index().on(t.projectId, t.livemode, t.chainId, t.address),
  ],
);

/**
 * A project's own wallet (`dac_`). Custodial: a smart account of ours owned by a key the service
 * holds (encrypted like players' keys), the same address on every chain; it collects the tokens
 * fixed_rate and charge_custom_tokens policies charge. External: an address whose owner proved
 * control by signing, which can receive withdrawals.
 */
export const developerAccounts = pgTable(
  "developer_accounts",
  {
    id: text().primaryKey(),
    ...tenant(),
    name: text(),
    address: text().notNull(),
    custodial: boolean().notNull(),
    /** Custodial only: the smart account's owner, its encrypted key and the factory salt. */
    ownerAddress: text(),
    encryptedPrivateKey: text(),
    salt: text(),
    deleted: boolean().notNull().default(false),
    createdAt: createdAt(),
    updatedAt: createdAt(),
  },
  (t) => [index().on(t.projectId, t.livemode, t.createdAt, t.id)],
);

export const policies = pgTable(
  "policies",
  {
    id: text().primaryKey(),
    ...tenant(),
    name: text().notNull(),
    chainId: integer().notNull(),
    sponsorSchema: text({ enum: ["pay_for_user", "fixed_rate", "charge_custom_tokens"] }).notNull(),
    /** fixed_rate / charge_custom_tokens: the registered token contract (con_) and amount (base units). */
    tokenContractId: text().references(() => contracts.id),
    tokenContractAmount: text(),
    /** The registered ERC-7677 paymaster (pay_) that sponsors this policy's intents instead of ours. */
    paymasterId: text().references(() => paymasters.id),
    /**
     * The ERC-7677 service may sponsor senders the project does not know (accounts of other services or projects).
     * Off by default: it then signs only for the project's own accounts on the chain.
     */
    sponsorOutsideAccounts: boolean().notNull().default(false),
    enabled: boolean().notNull().default(true),
    deleted: boolean().notNull().default(false),
    createdAt: createdAt(),
    updatedAt: createdAt(),
  },
  (t) => [index().on(t.projectId, t.livemode, t.createdAt, t.id)],
);

/**
 * A user operation our paymaster signed over ERC-7677 (pm_getPaymasterData) for a client that built it: the policy
 * and subject its interval rules count it for, and the most it may cost. One row per sender and nonce, since only
 * one operation of a nonce can land: asking again for the same nonce replaces the row instead of counting twice.
 */
export const sponsoredOperations = pgTable(
  "sponsored_operations",
  {
    id: text().primaryKey(),
    ...tenant(),
    policyId: text()
      .notNull()
      .references(() => policies.id),
    chainId: integer().notNull(),
    /** The project's player owning the sender, if any (interval rules count per player). */
    playerId: text().references(() => players.id, { onDelete: "set null" }),
    /** The project's account (acc_ or dac_), null for an outside sender (policies with sponsorOutsideAccounts). */
    accountId: text(),
    sender: text().notNull(),
    nonce: text().notNull(),
    /** requiredPrefund of the signed op, in wei: what it may cost the paymaster at most. */
    maxCost: text().notNull(),
    userOperationHash: text().notNull(),
    createdAt: createdAt(),
    updatedAt: createdAt(),
  },
  (t) => [
    uniqueIndex("sponsored_operations_op_unique").on(t.projectId, t.livemode, t.chainId, t.sender, t.nonce),
    index().on(t.policyId, t.playerId, t.createdAt),
    index().on(t.policyId, t.sender, t.createdAt),
    // The retention sweep deletes by age (lib/retention.ts).
    index().on(t.createdAt),
  ],
);

export const policyRules = pgTable(
  "policy_rules",
  {
    id: text().primaryKey(),
    ...tenant(),
    policyId: text()
      .notNull()
      .references(() => policies.id, { onDelete: "cascade" }),
    type: text({ enum: ["contract_functions", "account_functions", "rate_limit", "budget", "time_window", "gas_price", "approval_webhook"] }).notNull(),
    contractId: text().references(() => contracts.id),
    /** contract_functions: an ABI function name or "All functions"; rate_limit: its kind. */
    functionName: text(),
    wildcard: boolean().notNull().default(false),
    gasLimit: text(),
    countLimit: integer(),
    timeIntervalType: text({ enum: ["minute", "hour", "day", "week", "month"] }),
    timeIntervalValue: integer(),
    /** budget: the limit, wei (native) or a decimal of dollars (usd), per scope and period. */
    amount: text(),
    currency: text({ enum: ["native", "usd"] }),
    scope: text({ enum: ["policy", "player", "account", "operation"] }),
    period: text({ enum: ["day", "week", "month", "total"] }),
    /** time_window: sponsorship only from / until these instants. */
    startsAt: timestamp({ withTimezone: true }),
    endsAt: timestamp({ withTimezone: true }),
    /** gas_price: the highest maxFeePerGas sponsored (wei), and how long an intent the service builds may wait for it. */
    maxFeePerGas: text(),
    waitSeconds: integer(),
    /** approval_webhook: where to ask, how long to wait, what a failed call means; its signing secret, encrypted. */
    url: text(),
    timeoutMs: integer(),
    onError: text({ enum: ["sponsor", "decline"] }),
    encryptedSecret: text(),
    createdAt: createdAt(),
    updatedAt: createdAt(),
  },
  (t) => [index().on(t.policyId, t.createdAt)],
);

/**
 * Background function runs of the embedded runner (the same Inngest function definitions an
 * Inngest server would run): the triggering event, memoized step results, and scheduling.
 * Every step's result is stored before the run moves on, so a crash resumes where it stopped.
 */
export const functionRuns = pgTable(
  "function_runs",
  {
    id: text().primaryKey(),
    functionId: text().notNull(),
    eventId: text().notNull(),
    event: jsonb().$type<{ name: string; data: Record<string, unknown>; id: string; ts: number }>().notNull(),
    /** A batch run's events (its function has batchEvents), oldest first; `event` is the first. Null otherwise. */
    events: jsonb().$type<{ name: string; data: Record<string, unknown>; id: string; ts: number }[]>(),
    /**
     * "batched": an event waiting for its function's next batch (not a run: it becomes part of one, and is then
     * "completed" with `output.batch` naming the run).
     */
    status: text({ enum: ["batched", "queued", "running", "completed", "failed"] }).notNull().default("queued"),
    attempt: integer().notNull().default(0),
    steps: jsonb().$type<{ order: string[]; state: Record<string, { id: string; data?: unknown; error?: unknown }> }>().notNull(),
    runAt: timestamp({ withTimezone: true, precision: 6 }).notNull().defaultNow(),
    lockedUntil: timestamp({ withTimezone: true, precision: 6 }),
    output: jsonb(),
    error: text(),
    createdAt: createdAt(),
    updatedAt: createdAt(),
  },
  (t) => [
    // One run per function and event: sending an event twice starts nothing new.
    uniqueIndex("function_runs_function_event_unique").on(t.functionId, t.eventId),
    index("function_runs_due").on(t.status, t.runAt),
    index("function_runs_batched").on(t.functionId, t.createdAt).where(sql`status = 'batched'`),
  ],
);

export const transactionIntents = pgTable(
  "transaction_intents",
  {
    id: text().primaryKey(),
    ...tenant(),
    chainId: integer().notNull(),
    /** Null for a developer account's intents. */
    playerId: text().references(() => players.id, { onDelete: "cascade" }),
    /** A player's account (acc_) or a developer account (dac_). */
    accountId: text().notNull(),
    policyId: text().references(() => policies.id),
    /** awaiting_signature → pending → broadcast → successful | failed; cancelled when never sent. */
    status: text({ enum: ["awaiting_signature", "pending", "broadcast", "successful", "failed", "cancelled"] }).notNull(),
    sponsored: boolean().notNull(),
    /** The session (ses_) the intent registers or revokes, or whose key signs it. */
    sessionId: text(),
    interactions: jsonb().$type<Record<string, unknown>[]>().notNull(),
    userOperation: jsonb().$type<Record<string, string>>().notNull(),
    userOperationHash: text().notNull().unique(),
    /** The most this operation may cost (all gas limits × maxFeePerGas), in wei: what rate limits reserve until it lands. */
    maxCost: text().notNull(),
    optimistic: boolean().notNull().default(false),
    confirmationBlocks: integer().notNull().default(5),
    transactionHash: text(),
    blockNumber: integer(),
    /** The hash of the block that holds transactionHash: confirmation means the receipt is still in it (a reorg sends the intent back). */
    blockHash: text(),
    gasUsed: text(),
    /** Actual cost in wei once landed (EntryPoint actualGasCost). */
    gasCost: text(),
    response: jsonb().$type<Record<string, unknown>>(),
    /** fixed_rate / charge_custom_tokens: the tokens (base units) the account paid for this intent's gas. */
    tokenCharge: text(),
    /** A policy withdrawal: the tokens (base units) sent from the collecting developer account. */
    tokenWithdrawal: text(),
    /** fallback=self_pay: the sponsorship decline the intent fell back from ({code, message, policy, rule}); it pays its own gas. */
    sponsorshipDecline: jsonb(),
    /** When the landed transaction had `confirmationBlocks` blocks on top (the confirmation webhook). */
    confirmedAt: timestamp({ withTimezone: true }),
    error: text(),
    /** Its operation carries the account's initCode: at most one live intent per undeployed account does. */
    deploysAccount: boolean().notNull().default(false),
    /** The API request that created it (req_): its events' log entries carry it as `requestID`. */
    requestId: text(),
    /** How it came: built by the service from its calls ("api"), or a client's complete signed operation sent to the bundler RPC ("rpc"). */
    source: text({ enum: ["api", "rpc"] }).notNull().default("api"),
    createdAt: createdAt(),
    updatedAt: createdAt(),
  },
  (t) => [
    // The deployer claim: concurrent first intents of an account race for it, one wins (the others are built without initCode).
    uniqueIndex("transaction_intents_one_deployer")
      .on(t.chainId, t.accountId)
      .where(sql`${t.deploysAccount} and ${t.status} in ('awaiting_signature', 'pending')`),
    index().on(t.projectId, t.livemode, t.createdAt, t.id),
    // Rate limits count a player's intents under a policy in a time window.
    index().on(t.policyId, t.playerId, t.createdAt),
    index().on(t.accountId, t.createdAt),
    index().on(t.playerId, t.createdAt),
    // A session's latest intents (registration, revocation, signed by its key).
    index().on(t.sessionId, t.createdAt),
    index().on(t.status, t.updatedAt),
  ],
);

/**
 * A session key (`ses_`) registered on a player's account with `registerSessionKey`. The chain is the
 * truth for whether it is active (window, uses, owner changes); this row remembers what was asked and
 * the intents that register and revoke it.
 */
export const sessions = pgTable(
  "sessions",
  {
    id: text().primaryKey(),
    ...tenant(),
    playerId: text()
      .notNull()
      .references(() => players.id, { onDelete: "cascade" }),
    accountId: text()
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    chainId: integer().notNull(),
    /** The session key, checksummed. */
    address: text().notNull(),
    /** Unix seconds (uint48 on chain). */
    validAfter: bigint({ mode: "number" }).notNull(),
    validUntil: bigint({ mode: "number" }).notNull(),
    /** Maximum uses; null: no limit (registered as 2^48-1). */
    limit: bigint({ mode: "number" }),
    /** Checksummed addresses the key may call; empty: any but the account itself. */
    whitelist: jsonb().$type<string[]>().notNull().default([]),
    /** Wei, decimal: the most one op the key signs may make the account pay in fees without a paymaster; "0": paymaster-paid ops only. Null: registered before the cap existed. */
    maxFeePerOp: text(),
    registrationIntentId: text(),
    revocationIntentId: text(),
    /** Set when the revocation landed, the registration was cancelled, or the chain no longer held the key at revoke time. */
    revokedAt: timestamp({ withTimezone: true }),
    createdAt: createdAt(),
    updatedAt: createdAt(),
  },
  (t) => [index().on(t.projectId, t.livemode, t.playerId, t.createdAt), index().on(t.accountId, t.address)],
);

/** The project webhook of each project and mode: transaction-intent state changes are POSTed there. */
export const webhookSettings = pgTable(
  "webhook_settings",
  {
    ...tenant(),
    url: text().notNull(),
    /** The Standard Webhooks signing secret (whsec_…), encrypted; null on rows set before it existed (made at the next set). */
    encryptedSecret: text(),
    createdAt: createdAt(),
    updatedAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.livemode] })],
);

/**
 * Each delivery attempt of an event to the project webhook or a trigger: the subscription log
 * (`GET /v1/subscriptions/logs`, ids `eve_`; rows from before subscriptions have `whd_` ids).
 */
export const webhookDeliveries = pgTable(
  "webhook_deliveries",
  {
    id: text().primaryKey(),
    ...tenant(),
    /** The delivered event (outbound_events); null on rows from before it existed. */
    messageId: text(),
    /** Null for the project webhook. */
    subscriptionId: text(),
    triggerId: text(),
    /** Where it went: "webhook" (the project's), the trigger (tri_), or "url" (a test to an address given with it). */
    target: text().notNull(),
    /** The API request that caused the event (req_), or the monitor run (run_). */
    requestId: text(),
    topic: text().notNull(),
    url: text().notNull(),
    objectId: text(),
    attempt: integer().notNull(),
    /** How the attempt came about: the schedule, a redelivery from the dashboard, or a test. */
    reason: text({ enum: ["scheduled", "redelivery", "test"] }).notNull().default("scheduled"),
    status: text({ enum: ["success", "failed"] }).notNull(),
    responseStatus: integer(),
    /** The start of the receiver's answer (at most 1 KiB), for the dashboard. */
    responseBody: text(),
    error: text(),
    durationMs: integer().notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    index().on(t.projectId, t.livemode, t.createdAt, t.id),
    index().on(t.messageId),
    index().on(t.triggerId, t.createdAt),
    index().on(t.projectId, t.livemode, t.objectId),
    // The retention sweep deletes by age (lib/retention.ts).
    index().on(t.createdAt),
  ],
);

/**
 * An event the service publishes (`msg_`): its body is fixed when it happens, so every attempt and
 * redelivery sends the same bytes under the same `webhook-id`. `dedupeKey` makes publishing the
 * same happening twice (a retried step) one event.
 */
export const outboundEvents = pgTable(
  "outbound_events",
  {
    id: text().primaryKey(),
    ...tenant(),
    topic: text().notNull(),
    objectId: text(),
    requestId: text(),
    /** The JSON body `{type, date, data}` exactly as sent. */
    body: text().notNull(),
    dedupeKey: text().notNull(),
    /** Set once a delivery event was sent for each of its targets. */
    fannedOutAt: timestamp({ withTimezone: true }),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex().on(t.projectId, t.dedupeKey), index("outbound_events_unfanned").on(t.fannedOutAt, t.createdAt)],
);

/** A subscription (`sub_`) ties a topic to triggers. Deleting one keeps its row (the log points at it). */
export const subscriptions = pgTable(
  "subscriptions",
  {
    id: text().primaryKey(),
    ...tenant(),
    topic: text().notNull(),
    deletedAt: timestamp({ withTimezone: true }),
    createdAt: createdAt(),
    updatedAt: createdAt(),
  },
  (t) => [index().on(t.projectId, t.livemode, t.topic), index().on(t.projectId, t.livemode, t.createdAt, t.id)],
);

/**
 * A subscription's target (`tri_`): a webhook URL with its own Standard Webhooks secret,
 * encrypted. `failingSince` is the first failed attempt of the current run of failures;
 * `disabledAt` is set once it has failed for three days in a row.
 */
export const triggers = pgTable(
  "triggers",
  {
    id: text().primaryKey(),
    ...tenant(),
    subscriptionId: text()
      .notNull()
      .references(() => subscriptions.id, { onDelete: "cascade" }),
    type: text({ enum: ["webhook"] }).notNull(),
    target: text().notNull(),
    encryptedSecret: text().notNull(),
    failingSince: timestamp({ withTimezone: true }),
    disabledAt: timestamp({ withTimezone: true }),
    disabledReason: text(),
    deletedAt: timestamp({ withTimezone: true }),
    createdAt: createdAt(),
    updatedAt: createdAt(),
  },
  (t) => [index().on(t.subscriptionId, t.createdAt)],
);

/**
 * An event definition (`eve_`): a balance the service watches, or a named topic. The monitor's
 * state: `belowSinceBlock` is the first block it saw the value below the threshold in the current
 * dip, `firedAt` set once the event went out for that dip (cleared when the value is back above).
 */
/** One chain's reading of a balance.project monitor that watches every chain of its mode. */
export interface MonitorChainState {
  /** The project's available balance there, wei. */
  value: string;
  /** The chain's latest block when read. */
  block: number;
  /** ISO time of the reading. */
  checkedAt: string;
  /** The block it went below the threshold at; null while at or above it. */
  belowSinceBlock: number | null;
  /** ISO time the event of this crossing was sent; null until then. */
  firedAt: string | null;
}

export const eventDefinitions = pgTable(
  "event_definitions",
  {
    id: text().primaryKey(),
    ...tenant(),
    name: text().notNull(),
    topic: text().notNull(),
    chainId: integer(),
    contractId: text(),
    functionName: text(),
    functionArgs: jsonb().$type<string[]>(),
    developerAccountId: text(),
    /** Base units, as a decimal string. */
    threshold: text(),
    numberOfBlocks: integer().notNull().default(0),
    lastValue: text(),
    lastBlock: bigint({ mode: "number" }),
    lastCheckedAt: timestamp({ withTimezone: true }),
    lastError: text(),
    belowSinceBlock: bigint({ mode: "number" }),
    firedAt: timestamp({ withTimezone: true }),
    /**
     * A balance.project monitor without a chain watches every chain of its mode, each crossing on its own: its
     * reading per chain id (the columns above are for monitors of one chain).
     */
    chainStates: jsonb().$type<Record<string, MonitorChainState>>(),
    deleted: boolean().notNull().default(false),
    createdAt: createdAt(),
    updatedAt: createdAt(),
  },
  (t) => [index().on(t.projectId, t.livemode, t.createdAt, t.id), index().on(t.topic, t.deleted)],
);

// --- Access: project claims, organization invites, shared rate limits (helper F) ---

/**
 * The one-time link that hands an unowned project (the one made at first start) to whoever opens
 * it signed in: only its hash is kept; a new link replaces the old one.
 */
export const projectClaims = pgTable("project_claims", {
  projectId: text()
    .primaryKey()
    .references(() => projects.id, { onDelete: "cascade" }),
  tokenHash: text().notNull().unique(),
  createdAt: createdAt(),
});

/** An invitation into an organization: a one-time link (kept hashed) for one email, until it expires. */
export const organizationInvites = pgTable(
  "organization_invites",
  {
    id: text().primaryKey(),
    organizationId: text()
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    email: text().notNull(),
    tokenHash: text().notNull().unique(),
    invitedBy: text().references(() => developers.id, { onDelete: "set null" }),
    expiresAt: timestamp({ withTimezone: true, precision: 6 }).notNull(),
    acceptedAt: timestamp({ withTimezone: true, precision: 6 }),
    createdAt: createdAt(),
  },
  (t) => [index().on(t.organizationId)],
);

/** Fixed-window request counters shared by every instance: one row per bucket and window. */
export const rateLimitCounters = pgTable(
  "rate_limit_counters",
  {
    bucket: text().notNull(),
    /** The window's start, in ms since the epoch. */
    windowStart: bigint({ mode: "number" }).notNull(),
    /** When the row may be deleted (the window's end), in ms since the epoch. */
    expiresAt: bigint({ mode: "number" }).notNull(),
    hits: integer().notNull(),
  },
  (t) => [primaryKey({ columns: [t.bucket, t.windowStart] }), index().on(t.expiresAt)],
);

// Identity (/iam/v1): players' own credentials, their sessions, token signing keys, providers.

/**
 * One way a player signs in (the spec's linkedAccounts): a password (provider "email"), a wallet
 * (SIWE, provider "wallet"), or a third-party identity (google, oidc, firebase, …) by its subject.
 */
export const playerIdentities = pgTable(
  "player_identities",
  {
    id: text().primaryKey(),
    ...tenant(),
    playerId: text()
      .notNull()
      .references(() => players.id, { onDelete: "cascade" }),
    provider: text().notNull(),
    /** The provider's user id (the OIDC subject, the wallet address lower-cased, the email lower-cased for "email"). */
    externalUserId: text().notNull(),
    email: text(),
    /** Provider "email": scrypt hash (lib/developers/password.ts format). */
    passwordHash: text(),
    emailVerifiedAt: timestamp({ withTimezone: true, precision: 6 }),
    disabled: boolean().notNull().default(false),
    createdAt: createdAt(),
    updatedAt: createdAt(),
  },
  (t) => [
    uniqueIndex("player_identities_provider_user_unique").on(t.projectId, t.livemode, t.provider, t.externalUserId),
    index().on(t.playerId),
    index().on(t.projectId, t.livemode, t.email),
  ],
);

/**
 * A signed-in player's session: the refresh token rotates at each use (only its hash is kept, with
 * the generation it belongs to), and presenting an older generation revokes the session.
 */
export const playerSessions = pgTable(
  "player_sessions",
  {
    id: text().primaryKey(),
    ...tenant(),
    playerId: text()
      .notNull()
      .references(() => players.id, { onDelete: "cascade" }),
    /** The identity it was opened with (provider), for the dashboard. */
    provider: text().notNull(),
    refreshHash: text().notNull(),
    /**
     * The session's refresh secret, sealed (lib/iam/sessions.ts sessionSecretAad): each generation's
     * refresh token is an HMAC under it, so a token of a past generation can be authenticated (reuse)
     * rather than guessed from the session id. Null for sessions opened before it existed.
     */
    encryptedSecret: text(),
    generation: integer().notNull().default(0),
    expiresAt: timestamp({ withTimezone: true, precision: 6 }).notNull(),
    revokedAt: timestamp({ withTimezone: true, precision: 6 }),
    revokedReason: text(),
    lastUsedAt: createdAt(),
    createdAt: createdAt(),
  },
  // expiresAt, revokedAt: the retention sweep's ranges (lib/retention.ts).
  (t) => [index().on(t.playerId), index().on(t.projectId, t.livemode, t.createdAt, t.id), index().on(t.expiresAt), index().on(t.revokedAt)],
);

/** ES256 key pairs that sign player tokens, per project and mode; retired keys stay published until their tokens expire. */
export const playerTokenKeys = pgTable(
  "player_token_keys",
  {
    /** The JWT `kid`. */
    id: text().primaryKey(),
    ...tenant(),
    publicJwk: jsonb().$type<Record<string, unknown>>().notNull(),
    /** The private JWK, sealed under the master key and bound to this key's id. */
    encryptedPrivateJwk: text().notNull(),
    createdAt: createdAt(),
    retiredAt: timestamp({ withTimezone: true, precision: 6 }),
  },
  (t) => [index().on(t.projectId, t.livemode, t.createdAt, t.id)],
);

/** A third-party identity provider's configuration, per project and mode (the spec's OAuth configuration). */
export const oauthConfigs = pgTable(
  "oauth_configs",
  {
    id: text().primaryKey(),
    ...tenant(),
    provider: text().notNull(),
    enabled: boolean().notNull().default(true),
    clientId: text(),
    /** Client secret, bot token or provider API key: sealed, bound to this configuration. */
    encryptedSecret: text(),
    /** Where the provider answers: the OIDC issuer, or the opaque-token provider's API base URL. */
    baseUrl: text(),
    /** Provider-specific settings that are not secret (audience, JWKS URL, title id, …). */
    settings: jsonb().$type<Record<string, unknown>>().notNull().default({}),
    createdAt: createdAt(),
    updatedAt: createdAt(),
  },
  (t) => [uniqueIndex("oauth_configs_provider_unique").on(t.projectId, t.livemode, t.provider)],
);

/** One browser sign-in with a provider (authorization code + PKCE): its state, and then its result for the game to collect once. */
export const oauthSignins = pgTable(
  "oauth_signins",
  {
    id: text().primaryKey(),
    ...tenant(),
    provider: text().notNull(),
    stateHash: text().notNull().unique(),
    /** PKCE verifier and nonce, sealed. */
    encryptedVerifier: text().notNull(),
    nonce: text().notNull(),
    redirectTo: text(),
    /** The key the game polls GET /iam/v1/oauth/google/token with (its hash). */
    keyHash: text().notNull().unique(),
    /** The sign-in's result ({player, token, refreshToken}), sealed; cleared when collected. */
    encryptedResult: text(),
    /** The one-time code the callback gave the browser that finished (its hash): collecting needs it with the key. */
    codeHash: text(),
    error: text(),
    expiresAt: timestamp({ withTimezone: true, precision: 6 }).notNull(),
    completedAt: timestamp({ withTimezone: true, precision: 6 }),
    collectedAt: timestamp({ withTimezone: true, precision: 6 }),
    createdAt: createdAt(),
  },
  // The retention sweep deletes by expiry (lib/retention.ts).
  (t) => [index().on(t.expiresAt)],
);

/** A Sign-In with Ethereum nonce handed out for one address: single use, short-lived. */
export const siweNonces = pgTable(
  "siwe_nonces",
  {
    nonce: text().primaryKey(),
    ...tenant(),
    /** Lower-cased. */
    address: text().notNull(),
    expiresAt: timestamp({ withTimezone: true, precision: 6 }).notNull(),
    usedAt: timestamp({ withTimezone: true, precision: 6 }),
    createdAt: createdAt(),
  },
  (t) => [index().on(t.expiresAt)],
);

/** Where a project's Sign-In with Ethereum messages may come from, per mode (lib/iam/siwe-settings.ts); no row: the mode's defaults. */
export const siweSettings = pgTable(
  "siwe_settings",
  {
    ...tenant(),
    /** EIP-4361 domains allowed: `host` (any port), `host:port`, or `*.host` (its subdomains). */
    domains: jsonb().$type<string[]>().notNull().default([]),
    /** URIs allowed (origins or prefixes); empty: an http(s) URI on an allowed domain. */
    uris: jsonb().$type<string[]>().notNull().default([]),
    createdAt: createdAt(),
    updatedAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.livemode] })],
);

/**
 * Single-use tokens for an email identity: a password reset or an email verification. Only their
 * SHA-256 is kept; the game's backend receives the token once and sends it to the player.
 */
export const playerCredentialTokens = pgTable(
  "player_credential_tokens",
  {
    tokenHash: text().primaryKey(),
    ...tenant(),
    identityId: text()
      .notNull()
      .references(() => playerIdentities.id, { onDelete: "cascade" }),
    /** "password_reset" or "verify_email". */
    purpose: text().notNull(),
    expiresAt: timestamp({ withTimezone: true, precision: 6 }).notNull(),
    usedAt: timestamp({ withTimezone: true, precision: 6 }),
    createdAt: createdAt(),
  },
  // expiresAt, usedAt: the retention sweep's ranges (lib/retention.ts).
  (t) => [index().on(t.identityId, t.purpose), index().on(t.expiresAt), index().on(t.usedAt)],
);

// Exchange, inventories, paymasters (issue 17).

/**
 * A paymaster service the project registered (`/v1/paymasters`): the paymaster contract and the
 * ERC-7677 endpoint that signs for it. `context` goes with every pm_ call (e.g. a sponsorship policy id).
 */
export const paymasters = pgTable(
  "paymasters",
  {
    id: text().primaryKey(),
    ...tenant(),
    name: text(),
    address: text().notNull(),
    url: text(),
    context: jsonb().$type<Record<string, unknown>>(),
    deleted: boolean().notNull().default(false),
    createdAt: createdAt(),
    updatedAt: createdAt(),
  },
  (t) => [index().on(t.projectId, t.livemode, t.createdAt, t.id)],
);

/**
 * A forwarder contract the project registered (`/v1/forwarder_contracts`, issue 33): a registry of the project's
 * ERC-2771 forwarders per mode, kept for clients that manage them through the API. Nothing here relays through a
 * forwarder, so no intent reads it (docs/forwarder-contracts.md).
 */
export const forwarderContracts = pgTable(
  "forwarder_contracts",
  {
    id: text().primaryKey(),
    ...tenant(),
    name: text(),
    chainId: integer().notNull(),
    address: text().notNull(),
    createdAt: createdAt(),
    updatedAt: createdAt(),
  },
  (t) => [index().on(t.projectId, t.livemode, t.createdAt, t.id)],
);

/** The service fee of a project's swaps, per mode: basis points of the output taken to `recipient`. */
export const exchangeSettings = pgTable(
  "exchange_settings",
  {
    ...tenant(),
    feeBasisPoints: integer().notNull(),
    feeRecipient: text().notNull(),
    createdAt: createdAt(),
    updatedAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.livemode] })],
);

/**
 * ERC-721 / ERC-1155 transfer logs of registered contracts, per chain, as the indexer read them
 * (holdings are sums over these). Rows of blocks a reorg replaced are deleted and read again.
 */
export const tokenTransfers = pgTable(
  "token_transfers",
  {
    chainId: integer().notNull(),
    /** The token contract, lower-case. */
    contract: text().notNull(),
    blockNumber: bigint({ mode: "number" }).notNull(),
    blockHash: text().notNull(),
    logIndex: integer().notNull(),
    /** Position inside a TransferBatch log (0 for the others). */
    batchIndex: integer().notNull().default(0),
    transactionHash: text().notNull(),
    standard: text({ enum: ["ERC721", "ERC1155"] }).notNull(),
    /** Lower-case addresses. */
    fromAddress: text().notNull(),
    toAddress: text().notNull(),
    tokenId: text().notNull(),
    amount: text().notNull(),
    /** The block's timestamp, in seconds. */
    blockTimestamp: bigint({ mode: "number" }).notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.chainId, t.blockNumber, t.logIndex, t.batchIndex] }),
    index().on(t.chainId, t.toAddress, t.contract),
    index().on(t.chainId, t.fromAddress, t.contract),
  ],
);

/** How far the transfer indexer has read each contract on each chain (lower-case address), with the block's hash to notice reorgs. */
export const tokenIndexCursors = pgTable(
  "token_index_cursors",
  {
    chainId: integer().notNull(),
    contract: text().notNull(),
    /** The last block read (inclusive); null before the first run. */
    blockNumber: bigint({ mode: "number" }),
    blockHash: text(),
    updatedAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.chainId, t.contract] })],
);

/**
 * A project's sponsorship balance on one chain in one mode, in wei of the chain's native coin: available =
 * credited - held - settled. Holds take from it atomically (a conditional UPDATE of this row), so concurrent
 * operations can never together exceed it. The journal (sponsorship_entries) explains every change.
 */
export const sponsorshipBalances = pgTable(
  "sponsorship_balances",
  {
    ...tenant(),
    chainId: integer().notNull(),
    /** Credits (funding, deposits, local grants) less corrections. */
    credited: numeric({ precision: 78, scale: 0 }).notNull().default("0"),
    /** The most the operations still in flight may cost. */
    held: numeric({ precision: 78, scale: 0 }).notNull().default("0"),
    /** What landed operations cost (their UserOperationEvent's actualGasCost). */
    settled: numeric({ precision: 78, scale: 0 }).notNull().default("0"),
    createdAt: createdAt(),
    updatedAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.livemode, t.chainId] }), index().on(t.chainId)],
);

/**
 * One sponsored operation's claim on its project's balance: held at its most cost before it is sponsored, then
 * settled at its actual cost when it lands, or released. Budgets count these (settled at cost, held at most).
 */
export const sponsorshipHolds = pgTable(
  "sponsorship_holds",
  {
    id: text().primaryKey(),
    ...tenant(),
    chainId: integer().notNull(),
    status: text({ enum: ["held", "settled", "released"] }).notNull(),
    /** What was held: the operation's required prefund (gas limits × maxFeePerGas), wei. */
    amount: numeric({ precision: 78, scale: 0 }).notNull(),
    /** What it cost once landed, wei. */
    settledAmount: numeric({ precision: 78, scale: 0 }),
    /** The native coin's USD price when held (null: the chain has none); the hold's USD values follow from it. */
    usdPrice: numeric(),
    cause: text({ enum: ["intent", "session", "swap", "withdrawal", "account_action", "erc7677"] }).notNull(),
    intentId: text(),
    sponsoredOperationId: text(),
    policyId: text(),
    playerId: text(),
    accountId: text(),
    /** ERC-7677 holds: released when the chain has passed this instant without the operation (its sponsorship window). */
    expiresAt: timestamp({ withTimezone: true }),
    /**
     * The operation's chain's clock when held (lib/sponsorship/budgets.ts sponsorshipClock: its latest block, or the
     * wall clock when that is later): budgets' UTC days, weeks and months count holds by it.
     */
    chainTime: timestamp({ withTimezone: true }).notNull().defaultNow(),
    createdAt: createdAt(),
    updatedAt: createdAt(),
  },
  (t) => [
    uniqueIndex("sponsorship_holds_intent_unique").on(t.intentId),
    uniqueIndex("sponsorship_holds_operation_live").on(t.sponsoredOperationId).where(sql`status = 'held'`),
    // A budget's use: the holds of its policy, player or account in its period.
    index().on(t.policyId, t.chainTime),
    index().on(t.projectId, t.livemode, t.playerId, t.chainTime),
    index().on(t.projectId, t.livemode, t.accountId, t.chainTime),
    index().on(t.status, t.chainId),
    index().on(t.createdAt),
  ],
);

/** The journal of every change of a sponsorship balance: what, how much (wei and USD then), and why. */
export const sponsorshipEntries = pgTable(
  "sponsorship_entries",
  {
    id: text().primaryKey(),
    ...tenant(),
    chainId: integer().notNull(),
    /** reversal: undoes the credit or settle entry `reverses` names (its block left the chain), never an edit of it. */
    kind: text({ enum: ["credit", "debit", "hold", "settle", "release", "reversal"] }).notNull(),
    /** Always positive, wei; the kind says which way it moves the balance. */
    amount: numeric({ precision: 78, scale: 0 }).notNull(),
    usd: numeric(),
    cause: text({ enum: ["intent", "session", "swap", "withdrawal", "account_action", "erc7677", "funding", "deposit", "local_grant", "correction"] }).notNull(),
    holdId: text(),
    intentId: text(),
    sponsoredOperationId: text(),
    policyId: text(),
    playerId: text(),
    accountId: text(),
    /** A deposit's `txHash:logIndex`, or who made a CLI credit. */
    reference: text(),
    note: text(),
    /** A settle entry's landing (chain_landings): each landing is settled once. */
    landingId: text(),
    /** A deposit's or a settlement's block on chain: a reorg that removes it reverses the entry. */
    blockNumber: bigint({ mode: "number" }),
    blockHash: text(),
    /** A reversal's entry (the credit or settle it undoes). */
    reverses: text(),
    createdAt: createdAt(),
  },
  (t) => [
    index().on(t.projectId, t.livemode, t.createdAt, t.id),
    // A deposit is credited once per block it is in (a reorg that moves it to another block reverses the first credit).
    uniqueIndex("sponsorship_entries_deposit_unique")
      .on(t.chainId, t.reference, sql`coalesce(${t.blockHash}, '')`)
      .where(sql`cause = 'deposit' and kind = 'credit'`),
    uniqueIndex("sponsorship_entries_landing_settled_once").on(t.landingId).where(sql`kind = 'settle'`),
    uniqueIndex("sponsorship_entries_reversed_once").on(t.reverses),
    // Deposits and settlements of recent blocks, checked against the chain after a reorg.
    index().on(t.chainId, t.blockNumber),
    index().on(t.holdId),
    index().on(t.intentId),
    index().on(t.createdAt),
  ],
);

/** Each refusal to sponsor, by reason, for the dashboard (kept SPONSORSHIP_DECLINES_RETENTION_DAYS). */
export const sponsorshipDeclines = pgTable(
  "sponsorship_declines",
  {
    id: text().primaryKey(),
    ...tenant(),
    chainId: integer(),
    policyId: text(),
    ruleId: text(),
    code: text().notNull(),
    playerId: text(),
    accountId: text(),
    source: text({ enum: ["intent", "erc7677"] }).notNull(),
    createdAt: createdAt(),
  },
  (t) => [index().on(t.projectId, t.livemode, t.createdAt), index().on(t.createdAt)],
);

/** How far a chain watcher (deposits, ERC-7677 landings) has read each chain: its next block. */
export const chainCursors = pgTable(
  "chain_cursors",
  {
    name: text().notNull(),
    chainId: integer().notNull(),
    nextBlock: bigint({ mode: "bigint" }).notNull(),
    /** The hash of block nextBlock - 1 as read (the chain follower's cursor): a different hash there is a reorg. */
    blockHash: text(),
    updatedAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.name, t.chainId] })],
);

/**
 * One signature of our paymaster (`psg_`): every op it signed — an intent's (each rebuild too), an ERC-7677
 * pm_getPaymasterData's (each re-ask too) — with what it may cost and until when it may land. Its hold (one per
 * intent or ERC-7677 operation) holds the most of its live signatures; a signature dies when it can no longer land:
 * a block stamped after validUntil, or its sender's nonce used on chain.
 */
export const paymasterSignatures = pgTable(
  "paymaster_signatures",
  {
    id: text().primaryKey(),
    ...tenant(),
    chainId: integer().notNull(),
    /** The EntryPoint and our paymaster at it (lower-case). */
    entryPoint: text().notNull(),
    paymaster: text().notNull(),
    sender: text().notNull(),
    nonce: numeric({ precision: 78, scale: 0 }).notNull(),
    userOperationHash: text().notNull(),
    /** The op's required prefund, wei: the most it can cost the paymaster. */
    maxCost: numeric({ precision: 78, scale: 0 }).notNull(),
    validUntil: timestamp({ withTimezone: true }).notNull(),
    holdId: text().notNull(),
    intentId: text(),
    sponsoredOperationId: text(),
    /** live: may still land; landed: its op is on chain (a reorg may make it live again); dead: can never land. */
    status: text({ enum: ["live", "landed", "dead"] }).notNull().default("live"),
    createdAt: createdAt(),
    updatedAt: createdAt(),
  },
  (t) => [
    index().on(t.chainId, t.userOperationHash),
    index().on(t.chainId, t.sender, t.nonce),
    index().on(t.holdId),
    index().on(t.createdAt),
  ],
);

/**
 * Each UserOperationEvent one of our paymasters paid (`lnd_`), as read from the chain (or from the relayer's own
 * receipt), whoever sent it: attributed to the signature (and so the project and hold) it carries, or unattributed
 * (projectId null: the operator's). seen → settled at the confirmation depth; removed when its block left the chain
 * (a settlement is reversed then).
 */
export const chainLandings = pgTable(
  "chain_landings",
  {
    id: text().primaryKey(),
    chainId: integer().notNull(),
    entryPoint: text().notNull(),
    paymaster: text().notNull(),
    userOperationHash: text().notNull(),
    sender: text().notNull(),
    nonce: numeric({ precision: 78, scale: 0 }).notNull(),
    success: boolean().notNull(),
    actualGasCost: numeric({ precision: 78, scale: 0 }).notNull(),
    actualGasUsed: numeric({ precision: 78, scale: 0 }).notNull(),
    transactionHash: text().notNull(),
    blockNumber: bigint({ mode: "number" }).notNull(),
    blockHash: text().notNull(),
    logIndex: integer().notNull(),
    projectId: text(),
    livemode: boolean(),
    signatureId: text(),
    holdId: text(),
    intentId: text(),
    status: text({ enum: ["seen", "settled", "removed"] }).notNull().default("seen"),
    createdAt: createdAt(),
    updatedAt: createdAt(),
  },
  (t) => [
    // One live landing per log; a removed one stays beside it (a block that comes back is a new landing, settled anew).
    uniqueIndex("chain_landings_log_unique").on(t.chainId, t.blockHash, t.logIndex).where(sql`status <> 'removed'`),
    index().on(t.chainId, t.status, t.blockNumber),
    index().on(t.chainId, t.userOperationHash),
    index().on(t.holdId),
    index().on(t.createdAt),
  ],
);

/** Each reconciliation of a chain (`npm run cli -- sponsorship reconcile`, and the background one): per paymaster and block range, the chain beside the ledger. */
export const sponsorshipReconciliations = pgTable(
  "sponsorship_reconciliations",
  {
    id: text().primaryKey(),
    chainId: integer().notNull(),
    entryPoint: text().notNull(),
    paymaster: text().notNull(),
    fromBlock: bigint({ mode: "number" }).notNull(),
    toBlock: bigint({ mode: "number" }).notNull(),
    /** Σ actualGasCost of the paymaster's UserOperationEvents in the range, on the canonical chain. */
    chainWei: numeric({ precision: 78, scale: 0 }).notNull(),
    /** Σ settlements (less reversals) of those landings on the ledger. */
    settledWei: numeric({ precision: 78, scale: 0 }).notNull(),
    /** Σ actualGasCost of the range's events no signature of ours answers for (the operator's). */
    unattributedWei: numeric({ precision: 78, scale: 0 }).notNull(),
    unattributedEvents: integer().notNull(),
    /** chainWei - settledWei - unattributedWei: what the ledger misses (or counts twice, negative). */
    mismatchWei: numeric({ precision: 78, scale: 0 }).notNull(),
    /** Holds of the chain still held although no signature of theirs can land any more. */
    staleHolds: integer().notNull(),
    staleHeldWei: numeric({ precision: 78, scale: 0 }).notNull(),
    createdAt: createdAt(),
  },
  (t) => [index().on(t.chainId, t.createdAt), index().on(t.createdAt)],
);
