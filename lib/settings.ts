// Every environment setting the service reads, declared once: name, type, default, what it does and which files read
// it. The service reads settings only through the readers of lib/config.ts, whose names are typed by this list;
// docs/configuration.md and .env.example are generated from it (`npm run docs:config`), and lib/settings.test.ts fails
// when they are stale, when code reads a variable not declared here, or when a declared one is read elsewhere than
// its `readBy` says. Data only: no imports, so the generator and any module can load it.

export type SettingType = "number" | "integer" | "flag" | "text" | "url" | "address" | "key" | "list" | "json" | "duration" | "wei";

export interface Setting {
  /** The variable, or a family of them: `<id>` stands for a chain id (`CHAIN_<id>_RPC_URL`). */
  readonly name: string;
  readonly type: SettingType;
  /** The default as an operator reads it (the code's real default; "unset" when none applies). */
  readonly default: string;
  /** What it does (Markdown). */
  readonly description: string;
  /** The files that read it (the test checks each names it). */
  readonly readBy: readonly string[];
  /** A secret: `.env.example` shows no value. */
  readonly secret?: boolean;
}

export interface SettingGroup {
  readonly title: string;
  /** One paragraph introducing the group (Markdown). */
  readonly intro?: string;
  readonly settings: readonly Setting[];
}

export const SETTING_GROUPS = [
  {
    title: "Server",
    settings: [
      {
        name: "HOST",
        type: "text",
        default: "`127.0.0.1`",
        description:
          "where `npm start` listens; while `HOST` is a loopback address (any 127/8, `::1`) or `localhost` the server counts as reachable from this machine only: test keys may then call private addresses (see `OUTBOUND_ALLOW_PRIVATE`) and production accepts plain HTTP. Running `next start` by hand on every interface, set `HOST=0.0.0.0` (or `::`) too",
        readBy: ["lib/config.ts", "scripts/start.mjs", "cli/index.ts"],
      },
      {
        name: "PORT",
        type: "integer",
        default: "`3000`",
        description: "the port `npm start` listens on (also the port of the printed URLs and, in production without `PUBLIC_URL`, of Google's callback)",
        readBy: ["scripts/start.mjs", "lib/boot.ts", "lib/http/public-url.ts", "cli/index.ts"],
      },
      {
        name: "PUBLIC_URL",
        type: "url",
        default: "unset: the origin each request came to (`Host`; a forwarded host only with `TRUST_PROXY`); for Google's callback in production `http://$HOST:$PORT`",
        description:
          "the service's public URL (e.g. `https://wallet.example.com`), which signing links and Google's callback URL (`<PUBLIC_URL>/iam/v1/oauth/google/callback`) use; in test mode its host is also an allowed SIWE domain. Set it behind a proxy that rewrites the host, and in production when listening on every interface (Google sign-in answers 503 without it)",
        readBy: ["lib/http/public-url.ts", "lib/intents/signing-link.ts", "lib/iam/siwe-settings.ts"],
      },
      {
        name: "TRUST_PROXY",
        type: "text",
        default: "unset: no proxy",
        description:
          "the client address is the socket's, and a client's own `X-Forwarded-For`/`-Host`/`-Proto`/`-Port` are dropped on arrival (links use `Host` or `PUBLIC_URL`). Behind N proxies that append to `X-Forwarded-For`, set `TRUST_PROXY=N` (`true` = 1): the address is the Nth entry from the right, and `X-Forwarded-Host`/`-Proto` are believed; set it only if the proxy overwrites `X-Forwarded-Host`, else set `PUBLIC_URL`",
        readBy: ["lib/http/client-address.ts"],
      },
      {
        name: "ALLOW_HTTP",
        type: "flag",
        default: "unset",
        description:
          "in production (`NODE_ENV=production`, bound to a non-loopback `HOST`) plain HTTP is refused unless the proxy says `X-Forwarded-Proto: https` (believed only with `TRUST_PROXY`); `true` turns that off",
        readBy: ["lib/http/auth.ts"],
      },
      {
        name: "NODE_OPTIONS",
        type: "text",
        default: "embedded default: `--max-semi-space-size=2`",
        description:
          "Node's options for the server; `npm start` adds 2 MB semi-spaces without `DATABASE_URL` (≈30 MB less idle memory) unless a size is named here",
        readBy: ["scripts/node-options.mjs"],
      },
      {
        name: "SHUTDOWN_GRACE_MS",
        type: "number",
        default: "`10000`",
        description: "on SIGTERM, how long requests in flight may take to finish, and then the background runs",
        readBy: ["lib/shutdown.ts"],
      },
      {
        name: "IDEMPOTENCY_LEASE_SECONDS",
        type: "number",
        default: "`30`",
        description:
          "an unanswered `Idempotency-Key` claim lapses after this long without renewal (the request holding it renews it while it runs), so a retry after a crash runs again",
        readBy: ["lib/http/idempotency.ts"],
      },
      {
        name: "SIGNUP",
        type: "text",
        default: "unset: closed",
        description:
          "`open` lets anyone create a dashboard account (with an organization and a first project) on `/signup` and through dashboard OAuth sign-in; otherwise only the claim link and invitations sign developers up",
        readBy: ["lib/developers/service.ts"],
      },
    ],
  },
  {
    title: "Database",
    settings: [
      {
        name: "DATABASE_URL",
        type: "url",
        default: "unset: embedded PGlite in `.data/pglite`",
        description: "PostgreSQL connection URL (postgres.js driver); migrations run on start",
        readBy: ["lib/db/client.ts", "scripts/node-options.mjs"],
        secret: true,
      },
      {
        name: "DATABASE_POOL_SIZE",
        type: "integer",
        default: "`10`",
        description:
          "connections per process to PostgreSQL (plus one that listens for cache invalidations); when all are busy, statements queue on them (pipelined). Each statement is prepared once per connection, so more connections cost PostgreSQL more parsing and memory",
        readBy: ["lib/db/client.ts"],
      },
      {
        name: "DATABASE_PREPARE",
        type: "flag",
        default: "`true`",
        description:
          "statements are prepared once per connection and their plans reused; `false` behind a pooler in transaction mode (PgBouncer), which cannot keep prepared statements",
        readBy: ["lib/db/prepared.ts"],
      },
      {
        name: "DATA_DIR",
        type: "text",
        default: "`.data`",
        description: "where the embedded default keeps its state (database, master key, printed project)",
        readBy: ["lib/config.ts"],
      },
      {
        name: "PGLITE_DATA_DIR",
        type: "text",
        default: "`$DATA_DIR/pglite`",
        description: "PGlite location; `memory://` for a throwaway database",
        readBy: ["lib/db/client.ts"],
      },
      {
        name: "PGLITE_TEMPLATE",
        type: "text",
        default: "unset",
        description: "a dumped, already migrated PGlite data directory an in-memory database starts from (the test setup writes one so each test file skips initdb and the migrations)",
        readBy: ["lib/db/client.ts"],
      },
      {
        name: "TRANSACTION_GUARD",
        type: "text",
        default: "unset",
        description: "`1` records chain and outbound calls made inside a database transaction (a development and test check of that rule, not for production)",
        readBy: ["lib/db/transaction-guard.ts"],
      },
    ],
  },
  {
    title: "Logs and metrics",
    settings: [
      {
        name: "LOG_LEVEL",
        type: "text",
        default: "`info`",
        description: "`debug`, `info`, `warn`, `error` or `silent`",
        readBy: ["lib/log.ts"],
      },
      {
        name: "LOG_FILE",
        type: "text",
        default: "unset: stdout",
        description: "write the JSON log lines to this file instead",
        readBy: ["lib/log.ts"],
      },
      {
        name: "METRICS_TOKEN",
        type: "text",
        default: "unset",
        description: "lets a scraper that is not on this machine read `/metrics` with `Authorization: Bearer <token>`",
        readBy: ["lib/metrics-access.ts"],
        secret: true,
      },
    ],
  },
  {
    title: "Keys",
    intro: "Secrets at rest are sealed under the master key; the service's own keys derive from `KEY_DERIVATION_SEED`. See [Rotating the master key](operating.md#rotating-the-master-key) for a rotation without downtime.",
    settings: [
      {
        name: "KEY_ENCRYPTION_KEY",
        type: "key",
        default: "generated into `.data/master.key`",
        description:
          "32-byte master key (64 hex chars or base64) for secrets at rest. Set it in production, and keep it: secrets encrypted under another key cannot be read",
        readBy: ["lib/keys/master.ts", "cli/keys.ts"],
        secret: true,
      },
      {
        name: "KEY_ENCRYPTION_KEYRING",
        type: "list",
        default: "`.data/master.keyring` (one a line)",
        description: "further master keys, comma-separated, that only open secrets (during a rotation)",
        readBy: ["lib/keys/master.ts"],
        secret: true,
      },
      {
        name: "KEY_DERIVATION_SEED",
        type: "key",
        default: "`.data/derivation.key`, else the master key",
        description:
          "what the service's own keys (paymaster, guardian, executors, signing links, dashboard sessions) derive from; required once a keyring is set: the first `KEY_ENCRYPTION_KEY`",
        readBy: ["lib/keys/master.ts"],
        secret: true,
      },
      {
        name: "KEY_ENCRYPTION_KEY_NEW",
        type: "key",
        default: "unset: generated",
        description: "`npm run cli -- keys rotate-master` on the embedded default: the new master key to rotate to",
        readBy: ["cli/keys.ts"],
        secret: true,
      },
    ],
  },
  {
    title: "Dashboard",
    settings: [
      {
        name: "NEXTAUTH_URL",
        type: "url",
        default: "unset: the request's origin",
        description: "the dashboard's public URL (behind a proxy); also the base of the claim link the first start prints",
        readBy: ["lib/boot.ts", "cli/index.ts"],
      },
      {
        name: "NEXTAUTH_SECRET",
        type: "text",
        default: "derived from the master key",
        description: "the key of the dashboard's session cookies",
        readBy: ["lib/dashboard/auth.ts"],
        secret: true,
      },
      {
        name: "AUTH_TRUST_HOST",
        type: "flag",
        default: "`true` (set by the service when unset)",
        description: "NextAuth trusts the request's host for its URLs",
        readBy: ["lib/dashboard/auth.ts"],
      },
      {
        name: "GITHUB_CLIENT_ID",
        type: "text",
        default: "unset",
        description: "with `GITHUB_CLIENT_SECRET`, GitHub sign-in on the dashboard (callback URL `<base>/api/auth/callback/github`)",
        readBy: ["lib/dashboard/auth.ts"],
      },
      {
        name: "GITHUB_CLIENT_SECRET",
        type: "text",
        default: "unset",
        description: "the GitHub OAuth app's secret",
        readBy: ["lib/dashboard/auth.ts"],
        secret: true,
      },
      {
        name: "GOOGLE_CLIENT_ID",
        type: "text",
        default: "unset",
        description: "with `GOOGLE_CLIENT_SECRET`, Google sign-in on the dashboard (callback URL `<base>/api/auth/callback/google`)",
        readBy: ["lib/dashboard/auth.ts"],
      },
      {
        name: "GOOGLE_CLIENT_SECRET",
        type: "text",
        default: "unset",
        description: "the Google OAuth client's secret",
        readBy: ["lib/dashboard/auth.ts"],
        secret: true,
      },
    ],
  },
  {
    title: "Rate limits",
    intro: "What each budget counts and the 429 it answers: [Rate limits](operating.md#rate-limits).",
    settings: [
      {
        name: "RATE_LIMIT_PER_SECOND",
        type: "number",
        default: "`200`",
        description:
          "secret-key API requests a second per project and mode, whichever of its keys, counted in the database all instances share; beyond it 429 `rate_limit_error` with `Retry-After`; `0` turns the API's limits off, the public budgets and chain shares with them",
        readBy: ["lib/http/rate-limit.ts"],
      },
      {
        name: "RATE_LIMIT_EXPENSIVE_PER_SECOND",
        type: "number",
        default: "`50`",
        description: "chain work a second with the secret key per project and mode, over 10 s windows",
        readBy: ["lib/http/rate-limit.ts"],
      },
      {
        name: "RATE_LIMIT_PUBLIC_API_PER_SECOND",
        type: "number",
        default: "`100`",
        description:
          "requests a second with a project's public credentials (publishable key, player tokens, signing links, paymaster service URL) per project and mode, a budget apart from the secret key's",
        readBy: ["lib/http/rate-limit.ts"],
      },
      {
        name: "RATE_LIMIT_PUBLIC_API_PER_ADDRESS_PER_MINUTE",
        type: "number",
        default: "`600`",
        description: "each client address's (IPv6: /64's) share of a project's public budget, per minute",
        readBy: ["lib/http/rate-limit.ts"],
      },
      {
        name: "RATE_LIMIT_PUBLIC_API_EXPENSIVE_PER_SECOND",
        type: "number",
        default: "`20`",
        description: "chain work a second with public credentials per project and mode (SIWE authenticate/link, ERC-7677 service, signing-page signatures), over 10 s windows",
        readBy: ["lib/http/rate-limit.ts"],
      },
      {
        name: "RATE_LIMIT_AUTH_PER_MINUTE",
        type: "number",
        default: "`10`",
        description: "players' sign-up (SIWE sign-ups of new wallets included), login, reset and link attempts per client address (also the dashboard's sign-in)",
        readBy: ["lib/http/rate-limit.ts"],
      },
      {
        name: "RATE_LIMIT_PUBLIC_PER_MINUTE",
        type: "number",
        default: "`300`",
        description:
          "before authentication: the signing page's endpoints, the JWKS and paymaster-service URLs, the Google callback, claim/invitation links, and requests with a missing or invalid key, per client address",
        readBy: ["lib/http/rate-limit.ts"],
      },
      {
        name: "CHAIN_CONCURRENCY_PER_PROJECT",
        type: "integer",
        default: "`32`",
        description: "chain-work requests of one project running at once on an instance (public callers in a lane of their own)",
        readBy: ["lib/http/concurrency.ts"],
      },
      {
        name: "CHAIN_QUEUE_PER_PROJECT",
        type: "integer",
        default: "`1000`",
        description: "chain-work requests of one project waiting in order on an instance beyond those running; past that a 429",
        readBy: ["lib/http/concurrency.ts"],
      },
    ],
  },
  {
    title: "Chains",
    settings: [
      {
        name: "LOCAL_CHAINS",
        type: "list",
        default: "`31337,31338`",
        description: "local anvil chains the service starts; `31338:live` makes one serve live keys (to try live mode locally); `none` starts none",
        readBy: ["lib/chain/registry.ts"],
      },
      {
        name: "ANVIL_PORT",
        type: "integer",
        default: "`8545`",
        description: "port of the first local chain; the next ones follow (8546, …); `0`: any free ports",
        readBy: ["lib/chain/registry.ts"],
      },
      {
        name: "ANVIL_BIN",
        type: "text",
        default: "the `@foundry-rs/anvil` binary",
        description: "another anvil executable",
        readBy: ["lib/chain/anvil.ts"],
      },
      {
        name: "CHAINS",
        type: "json",
        default: "unset",
        description:
          'JSON array of further chains: `[{"chainId":8453,"rpcUrl":"https://…","livemode":true,"bundlerUrl":"…","deployerPrivateKey":"0x…"}]` (`name`, `nativeCurrency`, `usdPrice`, `usdAggregator`, `router`, `weth`, `entryPoints` optional; known chains get viem\'s name and currency)',
        readBy: ["lib/chain/registry.ts", "lib/redact.ts"],
        secret: true,
      },
      {
        name: "CHAIN_<id>_RPC_URL",
        type: "url",
        default: "unset",
        description: "adds chain `<id>` (or points a local chain at a node you run)",
        readBy: ["lib/chain/registry.ts", "lib/redact.ts"],
        secret: true,
      },
      {
        name: "CHAIN_<id>_LIVE",
        type: "flag",
        default: "live unless viem knows the chain as a testnet",
        description: "`true`/`false`: whether chain `<id>` (added by `CHAIN_<id>_RPC_URL`) serves live keys",
        readBy: ["lib/chain/registry.ts"],
      },
      {
        name: "CHAIN_<id>_NAME",
        type: "text",
        default: "viem's name, else `Chain <id>`",
        description: "the chain's name",
        readBy: ["lib/chain/registry.ts"],
      },
      {
        name: "CHAIN_<id>_BUNDLER_URL",
        type: "url",
        default: "unset: our relay",
        description: "an ERC-4337 bundler for chain `<id>`",
        readBy: ["lib/chain/registry.ts", "lib/redact.ts"],
        secret: true,
      },
      {
        name: "CHAIN_<id>_DEPLOYER_PRIVATE_KEY",
        type: "key",
        default: "`DEPLOYER_PRIVATE_KEY`",
        description: "the key that deploys our contracts on chain `<id>`",
        readBy: ["lib/chain/registry.ts"],
        secret: true,
      },
      {
        name: "DEPLOYER_PRIVATE_KEY",
        type: "key",
        default: "unset",
        description: "funded key that deploys our contracts on configured chains (`npm run cli -- chain deploy`)",
        readBy: ["lib/chain/registry.ts"],
        secret: true,
      },
      {
        name: "CHAIN_<id>_ENTRY_POINTS",
        type: "list",
        default: "every version (`0.6,0.8`)",
        description: "the EntryPoint versions chain `<id>` offers, comma-separated (`0.6,0.8`)",
        readBy: ["lib/chain/registry.ts"],
      },
      {
        name: "CHAIN_<id>_USD_PRICE",
        type: "number",
        default: "unset",
        description:
          "the chain's native coin in USD, fixed: the sponsorship ledger's USD values and USD budgets (before any price feed), and the USD amounts of gas reports (also `usdPrice` in `CHAINS`)",
        readBy: ["lib/chain/registry.ts"],
      },
      {
        name: "CHAIN_<id>_USD_AGGREGATOR",
        type: "address",
        default: "unset (local chains: the service's `TestPriceFeed`, 2000 USD)",
        description:
          "a Chainlink-style price feed of the chain's coin in USD on that chain, when no `CHAIN_<id>_USD_PRICE` is set (also `usdAggregator` in `CHAINS`; see [USD prices](sponsorship.md#usd-prices))",
        readBy: ["lib/chain/registry.ts"],
      },
      {
        name: "USD_PRICE_MAX_AGE_SECONDS",
        type: "number",
        default: "`3600`",
        description: "a price feed whose latest round is older than this by the chain's clock gives no price",
        readBy: ["lib/sponsorship/prices.ts"],
      },
      {
        name: "CHAIN_<id>_USD_PRICE_MAX_AGE_SECONDS",
        type: "number",
        default: "`USD_PRICE_MAX_AGE_SECONDS`",
        description: "the same, for chain `<id>`",
        readBy: ["lib/sponsorship/prices.ts"],
      },
      {
        name: "USD_PRICE_CACHE_SECONDS",
        type: "number",
        default: "`5`",
        description: "how long one read of a chain's price feed serves every caller",
        readBy: ["lib/sponsorship/prices.ts"],
      },
      {
        name: "CHAIN_<id>_ROUTER",
        type: "address",
        default: "unset (local chains: the local Uniswap v2)",
        description: "the chain's Uniswap-v2-compatible router for swaps (also `router` in `CHAINS`)",
        readBy: ["lib/chain/registry.ts"],
      },
      {
        name: "CHAIN_<id>_WETH",
        type: "address",
        default: "read from the router",
        description: "the chain's WETH (also `weth` in `CHAINS`)",
        readBy: ["lib/chain/registry.ts"],
      },
      {
        name: "RPC_BATCH",
        type: "flag",
        default: "`true`",
        description: "chain requests made in the same tick go as one JSON-RPC batch; `false` for a node that refuses batches",
        readBy: ["lib/chain/clients.ts"],
      },
    ],
  },
  {
    title: "Relay",
    intro: "Our own bundler: executor keys send the bundles of the intents on each chain without a `CHAIN_<id>_BUNDLER_URL`.",
    settings: [
      {
        name: "RELAY_EXECUTORS",
        type: "integer",
        default: "`3`",
        description: "executor keys (derived from the master key) that send bundles on each chain; on real chains fund their addresses (`npm run cli -- chain list`)",
        readBy: ["lib/chain/relayer/config.ts"],
      },
      {
        name: "RELAY_EXECUTOR_OFFSET",
        type: "integer",
        default: "`0`",
        description: "first executor index: instances sharing a master key and chain must use disjoint ranges",
        readBy: ["lib/chain/relayer/config.ts"],
      },
      {
        name: "RELAY_BATCH_WINDOW_MS",
        type: "number",
        default: "`20`",
        description: "how long the relayer gathers operations queued separately into one `handleOps` bundle",
        readBy: ["lib/chain/relayer/config.ts"],
      },
      {
        name: "RELAY_MAX_BUNDLE",
        type: "integer",
        default: "`50`",
        description:
          "at most how many operations one bundle holds; a full queue is sent at once. Pending intents reach the relayer in batches of up to 50 (one durable run per batch), whose ops are queued together",
        readBy: ["lib/chain/relayer/config.ts"],
      },
      {
        name: "RELAY_MAX_BUNDLE_GAS",
        type: "integer",
        default: "`10000000`",
        description: "a bundle above this gas is split in two",
        readBy: ["lib/chain/relayer/config.ts"],
      },
      {
        name: "RELAY_BUMP_AFTER_MS",
        type: "number",
        default: "local chains `3000`, others `30000`",
        description: "a bundle not mined within this is sent again with fees 12.5% higher",
        readBy: ["lib/chain/relayer/config.ts"],
      },
      {
        name: "RELAY_MINE_TIMEOUT_MS",
        type: "number",
        default: "`120000`",
        description:
          "how long the relayer waits for a bundle to be mined before its ops go to another bundle (a bundle the node lost, or one stuck behind a lost nonce, is found and sent again within a few blocks)",
        readBy: ["lib/chain/relayer/config.ts"],
      },
      {
        name: "RELAY_POLL_MS",
        type: "number",
        default: "local chains `20`, others `1000`",
        description: "how often the relayer polls for a bundle's receipt",
        readBy: ["lib/chain/relayer/config.ts"],
      },
      {
        name: "RELAY_RECEIPT_LOOKBACK_BLOCKS",
        type: "integer",
        default: "`10000`",
        description: "how far back a user operation's receipt is looked for when the caller names no block",
        readBy: ["lib/chain/relayer/config.ts"],
      },
    ],
  },
  {
    title: "Background functions",
    settings: [
      {
        name: "INNGEST_EVENT_KEY",
        type: "text",
        default: "unset: embedded runner",
        description:
          "with any of `INNGEST_EVENT_KEY`, `INNGEST_SIGNING_KEY`, `INNGEST_BASE_URL`, `INNGEST_DEV` set, background functions (relay, webhooks) are served to that Inngest at `/api/inngest` and events go there; without, the same function definitions run in-process, their step results stored in the database so a restart resumes them, cron-triggered ones once per slot across instances",
        readBy: ["inngest/client.ts"],
        secret: true,
      },
      {
        name: "INNGEST_SIGNING_KEY",
        type: "text",
        default: "unset",
        description: "Inngest's signing key; in production `/api/inngest` answers 403 without it",
        readBy: ["inngest/client.ts", "app/api/inngest/route.ts"],
        secret: true,
      },
      {
        name: "INNGEST_BASE_URL",
        type: "url",
        default: "unset",
        description: "the Inngest server's URL (a self-hosted one)",
        readBy: ["inngest/client.ts"],
      },
      {
        name: "INNGEST_DEV",
        type: "text",
        default: "unset",
        description: "use the Inngest dev server (`1`, or its URL)",
        readBy: ["inngest/client.ts"],
      },
      {
        name: "RUNNER_CONCURRENCY",
        type: "integer",
        default: "`64`",
        description: "embedded runner: function runs executing at once in this process (a relay run mostly waits on the chain)",
        readBy: ["inngest/jobs.ts"],
      },
      {
        name: "RUNNER_LEASE_MS",
        type: "number",
        default: "`60000`",
        description:
          "embedded runner: a run being executed is leased to its process, the lease renewed while it runs; runs of a process that died are taken over (by another instance, or by itself restarted) once their lease runs out; the renewal costs one write per running run every third of it",
        readBy: ["inngest/jobs.ts"],
      },
      {
        name: "RUNNER_PROJECT_SHARE",
        type: "integer",
        default: "three quarters of `RUNNER_CONCURRENCY`",
        description: "embedded runner: at most this many runs of one project execute at once, so one project's queued relays do not hold back another's",
        readBy: ["inngest/runner.ts"],
      },
    ],
  },
  {
    title: "Sponsorship and paymasters",
    settings: [
      {
        name: "SPONSOR_MAX_COST_WEI",
        type: "wei",
        default: "`10000000000000000` (0.01 native coin)",
        description: "most an operation sponsored by our paymaster may cost (its prefund) when its policy has no `gas_per_transaction` rule or `budget` of scope `operation`",
        readBy: ["lib/policies/checks.ts"],
      },
      {
        name: "SPONSORSHIP_LOCAL_CREDIT",
        type: "number",
        default: "`1`",
        description:
          "coins a project's test mode is credited once on each local chain, so `npm start` sponsors out of the box (live mode and configured chains start at zero; see [funding](sponsorship.md#funding))",
        readBy: ["lib/sponsorship/ledger.ts"],
      },
      {
        name: "SPONSORSHIP_LEDGER",
        type: "flag",
        default: "`true`",
        description: "`false` stops refusing sponsorship holds a project's balance cannot cover (they are still recorded): an escape hatch, not for production",
        readBy: ["lib/sponsorship/ledger.ts"],
      },
      {
        name: "SPONSORSHIP_CONFIRMATIONS",
        type: "integer",
        default: "`12` (local chains `1`)",
        description:
          "blocks a deposit to the paymaster, or the landing of an operation our paymaster paid, needs (its own included) before the sponsorship ledger credits or settles it",
        readBy: ["lib/sponsorship/depth.ts"],
      },
      {
        name: "SPONSORSHIP_WATCH_BLOCK_RANGE",
        type: "integer",
        default: "`2000` (local chains `100000`)",
        description: "blocks per `eth_getLogs` of the chain follower",
        readBy: ["lib/sponsorship/depth.ts"],
      },
      {
        name: "SPONSORSHIP_WATCH_LOOKBACK_BLOCKS",
        type: "integer",
        default: "`10000`",
        description: "where the chain follower starts on a configured chain, back from the head (local chains: block 0)",
        readBy: ["lib/sponsorship/depth.ts"],
      },
      {
        name: "SPONSORSHIP_REORG_DEPTH",
        type: "integer",
        default: "`64`",
        description:
          "blocks the chain follower reads again when the last block it read left the chain: the deepest reorg whose deposits, settlements and landed intents it follows (see [reorgs](sponsorship.md#reorgs))",
        readBy: ["lib/sponsorship/depth.ts"],
      },
      {
        name: "SPONSORSHIP_RECONCILE",
        type: "flag",
        default: "`true`",
        description: "`false` turns the background reconciliation off (the CLI's `sponsorship reconcile` still works; `/readyz` then has nothing to report)",
        readBy: ["lib/follower/reconcile.ts"],
      },
      {
        name: "SPONSORSHIP_RECONCILE_BLOCKS",
        type: "integer",
        default: "`10000`",
        description:
          "blocks back from the confirmed head the background reconciliation compares with the ledger every five minutes (`npm run cli -- sponsorship reconcile` takes any range; see [reconciliation](sponsorship.md#reconciliation))",
        readBy: ["lib/follower/reconcile.ts"],
      },
      {
        name: "SPONSORSHIP_DEPOSIT_CACHE_SECONDS",
        type: "number",
        default: "`30`",
        description: "how long one read of a chain's paymaster deposit serves `/metrics` and `/readyz`",
        readBy: ["lib/sponsorship/coverage.ts"],
      },
      {
        name: "PAYMASTER_GAS_BOUND_PERCENT",
        type: "number",
        default: "`50`",
        description: "how far above its own estimate the ERC-7677 service signs a client's gas limits",
        readBy: ["lib/paymasters/bounds.ts"],
      },
      {
        name: "PAYMASTER_GAS_BOUND_EXTRA",
        type: "number",
        default: "`100000`",
        description: "gas the ERC-7677 service allows on top of that for `callGasLimit` and `verificationGasLimit`",
        readBy: ["lib/paymasters/bounds.ts"],
      },
      {
        name: "PAYMASTER_FEE_BOUND_FACTOR",
        type: "number",
        default: "`2`",
        description: "how many times the chain's current fees the ERC-7677 service signs a client's `maxFeePerGas` / `maxPriorityFeePerGas`",
        readBy: ["lib/paymasters/bounds.ts"],
      },
      {
        name: "PAYMASTER_TIMEOUT_MS",
        type: "number",
        default: "`10000`",
        description: "how long a registered ERC-7677 paymaster has to answer one call, body included (answers read up to 64 KiB)",
        readBy: ["lib/paymasters/client.ts"],
      },
    ],
  },
  {
    title: "Inventories",
    settings: [
      {
        name: "INVENTORY_REORG_DEPTH",
        type: "integer",
        default: "`12`",
        description: "blocks of NFT transfers dropped and read again when the index's cursor block was reorged",
        readBy: ["lib/inventory/indexer.ts"],
      },
      {
        name: "INVENTORY_LOG_RANGE",
        type: "integer",
        default: "`2000`",
        description: "blocks per `eth_getLogs` of the NFT index on configured chains (local chains: up to a million)",
        readBy: ["lib/inventory/indexer.ts"],
      },
      {
        name: "INVENTORY_LOOKBACK_BLOCKS",
        type: "integer",
        default: "`100000`",
        description: "where the NFT index of a newly registered contract starts on configured chains: this many blocks before the head (local chains: block 0)",
        readBy: ["lib/inventory/indexer.ts"],
      },
      {
        name: "INVENTORY_CATCH_UP_MS",
        type: "number",
        default: "`5000`",
        description: "how long an NFT inventory request lets the index catch up with the chain before answering",
        readBy: ["lib/inventory/service.ts"],
      },
      {
        name: "INVENTORY_ERC20_LOOKBACK_BLOCKS",
        type: "number",
        default: "`10000`",
        description: "how far back an ERC-20's last transfer is looked for on configured chains (`lastTransferredAt`)",
        readBy: ["lib/inventory/service.ts"],
      },
    ],
  },
  {
    title: "Webhooks, subscriptions and outbound calls",
    settings: [
      {
        name: "OUTBOUND_ALLOW_PRIVATE",
        type: "flag",
        default: "unset: allowed only while `HOST` is loopback",
        description:
          "whether test keys' URLs (webhook, triggers, test sends, identity providers, paymasters) may reach loopback and private addresses; `true` allows them on any server, `false` refuses them everywhere; live keys never",
        readBy: ["lib/outbound/index.ts"],
      },
      {
        name: "SUBSCRIPTIONS_PER_PROJECT",
        type: "integer",
        default: "`100`",
        description: "subscriptions (not deleted) a project may have in each mode; beyond it `POST /v1/subscriptions` is a 400",
        readBy: ["lib/subscriptions/schema.ts"],
      },
      {
        name: "SUBSCRIPTION_TEST_MAX_TRIGGERS",
        type: "integer",
        default: "`10`",
        description: "`POST /v1/subscriptions/test` with no body goes to at most this many enabled `test` triggers, the oldest first",
        readBy: ["lib/subscriptions/schema.ts"],
      },
      {
        name: "SUBSCRIPTION_TEST_CONCURRENCY",
        type: "integer",
        default: "`5`",
        description: "how many of a test send's deliveries run at once",
        readBy: ["lib/subscriptions/schema.ts"],
      },
      {
        name: "WEBHOOK_RETRY_SCHEDULE",
        type: "list",
        default: "`5s,1m,5m,30m,2h,5h,10h,12h,12h,12h,12h,12h`",
        description: "waits between a failed delivery attempt and the next (durations: `ms`, `s`, `m`, `h`, `d`)",
        readBy: ["lib/deliveries/schedule.ts"],
      },
      {
        name: "TRIGGER_DISABLE_AFTER",
        type: "duration",
        default: "`3d`",
        description: "a trigger whose every scheduled attempt failed for this long is disabled",
        readBy: ["lib/deliveries/schedule.ts"],
      },
    ],
  },
  {
    title: "Identity (players)",
    settings: [
      {
        name: "PLAYER_TOKEN_TTL_SECONDS",
        type: "number",
        default: "`3600`",
        description: "lifetime of a player token (and how long a retired signing key stays in the JWKS); read at start",
        readBy: ["lib/iam/tokens.ts"],
      },
      {
        name: "PLAYER_REFRESH_TTL_SECONDS",
        type: "number",
        default: "`2592000` (30 days)",
        description: "a refresh token expires this long after its last use; read at start",
        readBy: ["lib/iam/sessions.ts"],
      },
      {
        name: "PLAYER_TOKEN_ISSUER",
        type: "text",
        default: "`smart-wallet-service`",
        description: "the player tokens' `iss` (and `issuer` of `/iam/v1/verify`)",
        readBy: ["lib/iam/tokens.ts"],
      },
      {
        name: "PLAYER_PASSWORD_RESET_TTL_SECONDS",
        type: "number",
        default: "`3600`",
        description: "lifetime of a password-reset token",
        readBy: ["lib/iam/credentials/credential-tokens.ts"],
      },
      {
        name: "PLAYER_EMAIL_VERIFICATION_TTL_SECONDS",
        type: "number",
        default: "`86400`",
        description: "lifetime of an email-verification token",
        readBy: ["lib/iam/credentials/credential-tokens.ts"],
      },
      {
        name: "PLAYER_REAUTH_WINDOW_SECONDS",
        type: "number",
        default: "`600`",
        description: 'how recent a player\'s sign-in must be to link or unlink a way to sign in (a refresh does not renew it); older: 403 "Reauthentication required"',
        readBy: ["lib/iam/auth.ts"],
      },
      {
        name: "PROVIDER_TIMEOUT_MS",
        type: "number",
        default: "`10000`",
        description: "how long the service waits for an identity provider (keys, discovery, verification endpoints); read at start",
        readBy: ["lib/iam/providers/http.ts"],
      },
    ],
  },
  {
    title: "Retention",
    intro: "The hourly retention sweep deletes old rows; `0` days keeps nothing past its use.",
    settings: [
      { name: "REQUEST_LOG_RETENTION_DAYS", type: "number", default: "`30`", description: "request log rows are deleted this many days after the request", readBy: ["lib/retention.ts"] },
      { name: "OAUTH_SIGNIN_RETENTION_DAYS", type: "number", default: "`1`", description: "browser sign-ins are deleted this many days after they expired", readBy: ["lib/retention.ts"] },
      {
        name: "CREDENTIAL_TOKEN_RETENTION_DAYS",
        type: "number",
        default: "`7`",
        description: "password-reset and email-verification tokens are deleted this many days after their use or expiry",
        readBy: ["lib/retention.ts"],
      },
      {
        name: "PLAYER_SESSION_RETENTION_DAYS",
        type: "number",
        default: "`30`",
        description: "player sessions are deleted this many days after they expired or were revoked",
        readBy: ["lib/retention.ts"],
      },
      {
        name: "DELIVERY_LOG_RETENTION_DAYS",
        type: "number",
        default: "`30`",
        description:
          "webhook and trigger delivery attempts, and published events once fanned out, are deleted this many days after they were made (the delivery log and Redeliver reach back this far)",
        readBy: ["lib/retention.ts"],
      },
      {
        name: "FUNCTION_RUN_RETENTION_DAYS",
        type: "number",
        default: "`14`",
        description: "finished background runs (completed or failed, with their step results) are deleted this many days after their last scheduling; queued or running ones never",
        readBy: ["lib/retention.ts"],
      },
      {
        name: "SPONSORED_OPERATION_RETENTION_DAYS",
        type: "number",
        default: "`400`",
        description: "records of operations our paymaster signed over ERC-7677 are deleted this many days after the signature (interval rules count them for windows up to this long)",
        readBy: ["lib/retention.ts"],
      },
      {
        name: "SPONSORSHIP_HOLD_RETENTION_DAYS",
        type: "number",
        default: "`400`",
        description:
          "settled or released sponsorship holds and their ledger entries are deleted this many days after the hold (budgets count holds up to this far back); credits, corrections and live holds never",
        readBy: ["lib/retention.ts"],
      },
      {
        name: "SPONSORSHIP_RECONCILIATION_RETENTION_DAYS",
        type: "number",
        default: "`30`",
        description: "days the background reconciliations of the ledger with the chains are kept",
        readBy: ["lib/retention.ts"],
      },
      {
        name: "SPONSORSHIP_DECLINES_RETENTION_DAYS",
        type: "number",
        default: "`90`",
        description: "recorded refusals to sponsor (the dashboard's declines by reason) are deleted this many days after the refusal",
        readBy: ["lib/retention.ts"],
      },
      { name: "RETENTION_BATCH_SIZE", type: "integer", default: "`5000`", description: "rows the retention sweep deletes per statement", readBy: ["lib/retention.ts"] },
      { name: "RETENTION_MAX_BATCHES", type: "integer", default: "`100`", description: "at most this many batches per table per run of the sweep", readBy: ["lib/retention.ts"] },
    ],
  },
] as const satisfies readonly SettingGroup[];

/** Every declared setting, in the order of the reference. */
export const SETTINGS: readonly Setting[] = SETTING_GROUPS.flatMap((group): readonly Setting[] => group.settings);

type Declared = (typeof SETTING_GROUPS)[number]["settings"][number]["name"];
type Expand<S extends string> = S extends `${infer Head}<id>${infer Tail}` ? `${Head}${number}${Tail}` : S;

/** A declared variable's name (a family's with the chain id filled in: `CHAIN_8453_RPC_URL`). */
export type SettingName = Expand<Declared>;

/** Variables the service reads that are not its settings: Node's, Next.js's and the test runner's own. */
export const FOREIGN_VARIABLES: readonly RegExp[] = [/^NODE_ENV$/, /^NEXT_[A-Z0-9_]+$/, /^VITEST(_[A-Z0-9_]+)?$/, /^USER$/, /^LOGNAME$/];

/** The declared setting `name` belongs to (a family matches any chain id), or undefined. */
export function settingOf(name: string): Setting | undefined {
  return SETTINGS.find((setting) => setting.name === name || (setting.name.includes("<id>") && patternOf(setting.name).test(name)));
}

/** The variables a family declaration stands for: `CHAIN_<id>_RPC_URL` → /^CHAIN_\d+_RPC_URL$/. */
export const patternOf = (name: string) => new RegExp(`^${name.replace("<id>", "\\d+")}$`);
