// Each test worker relays from executor keys of its own, so workers sharing the test chains
// never race for one executor's nonces (a server started by a test takes another range).
process.env.RELAY_EXECUTOR_OFFSET ??= String(100 + Number(process.env.VITEST_POOL_ID ?? 0) * 10);

// Every test process logs to a file of the run's (see test/helpers/global-setup.ts: grepped for secrets at the end).
if (process.env.TEST_LOG_DIR) process.env.LOG_FILE ??= `${process.env.TEST_LOG_DIR}/worker-${process.pid}.log`;

// Tests sign developers up freely; the closed default (issue 29.14) has its own tests, which unset this.
process.env.SIGNUP ??= "open";

// The route handlers run in-process as a server listening on loopback alone (npm start's default), whatever the
// shell exports: test keys may then reach the tests' receivers on 127.0.0.1 (lib/outbound). Tests of a server
// reachable from elsewhere stub HOST and OUTBOUND_ALLOW_PRIVATE themselves.
process.env.HOST = "127.0.0.1";
delete process.env.OUTBOUND_ALLOW_PRIVATE;

// The install's per-op cap for policies without their own (10^16 wei) declines a deploying op once the shared test
// chains' base fee climbs under the whole suite's load (seen: 1.4·10^16 on 31337 in CI). Tests of the cap set it themselves.
process.env.SPONSOR_MAX_COST_WEI ??= "1000000000000000000";

// In-process requests have no client address: every sign-in and sign-up of the suite shares one per-address budget
// (RATE_LIMIT_AUTH_PER_MINUTE, 10 a minute), across workers on PostgreSQL, and a faster suite spent it (seen: a
// sign-up refused, so a later verify_email 400). Off here; the tests of the limit set it themselves.
process.env.RATE_LIMIT_AUTH_PER_MINUTE ??= "0";

// The shared test chains carry operations our paymaster's key signed outside any record (the relayer's and userop's
// own tests sign directly): every reconciliation of them is rightly unbalanced, which would make /readyz degraded in
// tests of other things. The background reconciliation is off here; its tests run it themselves on chains of their own.
process.env.SPONSORSHIP_RECONCILE ??= "false";
