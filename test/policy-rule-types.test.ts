// The rule types beyond the spec's three (budget, time_window, gas_price, approval_webhook) through the HTTP API:
// both encodings, every refusal a 400 naming its field, the approval webhook's secret answered once and sealed at
// rest, and usd budgets refused on a chain without a USD price.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GET as openApi } from "@/app/v1/openapi.json/route";
import { ruleFormToApi } from "@/components/rule-editor";
import { runOperation } from "@/lib/dashboard/operations";
import { getDb } from "@/lib/db/client";
import { policyRules } from "@/lib/db/schema";
import { createPolicyRule, updatePolicyRule } from "@/lib/policies/operations";
import { describeRule, purposeOf, RULE_PURPOSES } from "@/lib/policies/purposes";
import { openRuleSecret } from "@/lib/policies/rules";
import { RULE_TYPES } from "@/lib/policies/schema";
import type { ProjectWithKeys } from "@/lib/projects/service";
import { call, expectError, formData, newProject } from "./helpers/api";

let project: ProjectWithKeys;
let key: string;
let policy: { id: string };
/** A policy on chain 31338, made priceless below (its USD feed points at an address without code). */
let pricelessPolicy: { id: string };
let receiver: http.Server;
let receiverUrl: string;
let received = 0;

const PRICED = "CHAIN_31337_USD_PRICE";
const PRICELESS = "CHAIN_31338_USD_AGGREGATOR";
const saved = { [PRICED]: process.env[PRICED], [PRICELESS]: process.env[PRICELESS] };

const create = (body: Record<string, unknown>, encoding: "json" | "form" = "json", k = key) => call("POST", "/v1/policy_rules", { key: k, [encoding]: body });
const update = (id: string, body: Record<string, unknown>, encoding: "json" | "form" = "json") => call("POST", `/v1/policy_rules/${id}`, { key, [encoding]: body });
const get = (id: string) => call("GET", `/v1/policy_rules/${id}`, { key });
const stored = async (id: string) => (await (await getDb()).select().from(policyRules).where(eq(policyRules.id, id)))[0]!;
const ok = (res: { status: number; body: any }) => {
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
};

beforeAll(async () => {
  await getDb();
  process.env[PRICED] = "2000";
  process.env[PRICELESS] = "0x00000000000000000000000000000000000000Ad";
  project = await newProject("rule types");
  key = project.keys.test.secret;
  policy = ok(await call("POST", "/v1/policies", { key, json: { name: "vocabulary", chainId: 31337, strategy: { sponsorSchema: "pay_for_user" } } }));
  pricelessPolicy = ok(await call("POST", "/v1/policies", { key, json: { name: "no price", chainId: 31338, strategy: { sponsorSchema: "pay_for_user" } } }));
  receiver = http.createServer((_req, res) => {
    received++;
    res.writeHead(200, { "content-type": "application/json" }).end('{"sponsor":true}');
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/approve`;
});

afterAll(async () => {
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  await new Promise((resolve) => receiver?.close(resolve));
});

describe("the new rule types", () => {
  it("creates each type in JSON and in form encoding, showing only its own fields, with the defaults filled in", async () => {
    const cases: [Record<string, unknown>, Record<string, unknown>][] = [
      [{ type: "budget", amount: "1000000000000000000", currency: "native", scope: "policy", period: "month" }, { amount: "1000000000000000000", currency: "native", scope: "policy", period: "month" }],
      [{ type: "budget", amount: "2.50", currency: "usd", scope: "player", period: "day" }, { amount: "2.50", currency: "usd", scope: "player", period: "day" }],
      [{ type: "budget", amount: "0.000001", currency: "usd", scope: "account", period: "total" }, { amount: "0.000001", currency: "usd", scope: "account", period: "total" }],
      [{ type: "budget", amount: "50000000000000", currency: "native", scope: "operation" }, { amount: "50000000000000", currency: "native", scope: "operation" }],
      [{ type: "budget", amount: "500", currency: "usd", scope: "policy", period: "week" }, { amount: "500", currency: "usd", scope: "policy", period: "week" }],
      [{ type: "time_window", startsAt: 1_700_000_000, endsAt: 1_800_000_000 }, { startsAt: 1_700_000_000, endsAt: 1_800_000_000 }],
      [{ type: "time_window", startsAt: 1_700_000_000 }, { startsAt: 1_700_000_000 }],
      [{ type: "time_window", endsAt: 1_800_000_000 }, { endsAt: 1_800_000_000 }],
      [{ type: "gas_price", maxFeePerGas: "30000000000" }, { maxFeePerGas: "30000000000", waitSeconds: 0 }],
      [{ type: "gas_price", maxFeePerGas: "30000000000", waitSeconds: 60 }, { maxFeePerGas: "30000000000", waitSeconds: 60 }],
      [{ type: "approval_webhook", url: receiverUrl }, { url: receiverUrl, timeoutMs: 2000, onError: "decline" }],
      [{ type: "approval_webhook", url: receiverUrl, timeoutMs: 100, onError: "sponsor" }, { url: receiverUrl, timeoutMs: 100, onError: "sponsor" }],
    ];
    for (const encoding of ["json", "form"] as const) {
      for (const [body, shown] of cases) {
        // A form carries only text: numbers go as their digits, as a form would send them.
        const sent = encoding === "form" ? Object.fromEntries(Object.entries(body).map(([k, v]) => [k, String(v)])) : body;
        const rule = ok(await create({ policy: policy.id, ...sent }, encoding));
        const { secret, ...rest } = rule;
        expect(rest, `${encoding} ${JSON.stringify(body)}`).toEqual({ id: rule.id, object: "policyRule", createdAt: rule.createdAt, type: body.type, ...shown });
        expect(rule.id).toMatch(/^afu_/);
        if (body.type === "approval_webhook") expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
        else expect(secret).toBeUndefined();
        const { secret: _none, ...read } = rule;
        expect(ok(await get(rule.id))).toEqual(read);
      }
    }
    // Listed, and embedded in the policy, as they are read (never with a secret).
    const list = ok(await call("GET", "/v1/policy_rules", { key, query: { policy: policy.id, limit: 100, order: "asc" } }));
    expect(list.total).toBe(cases.length * 2);
    expect(list.data.map((r: { type: string }) => r.type)).toEqual([...cases, ...cases].map(([b]) => b.type));
    expect(list.data.some((r: Record<string, unknown>) => "secret" in r)).toBe(false);
    const expanded = ok(await call("GET", `/v1/policies/${policy.id}`, { key, query: { expand: ["policyRules"] } }));
    expect(expanded.policyRules).toEqual(list.data);
    // JSON numbers are accepted for amounts as for the spec's gasLimit.
    expect(ok(await create({ policy: policy.id, type: "budget", amount: 2.5, currency: "usd", scope: "policy", period: "day" })).amount).toBe("2.5");
    expect(ok(await create({ policy: policy.id, type: "gas_price", maxFeePerGas: 1000 })).maxFeePerGas).toBe("1000");
    // Validation never calls the webhook.
    expect(received).toBe(0);
  });

  it("refuses every bad input with a 400 naming the field", async () => {
    const refused = async (body: Record<string, unknown>, fields: string[], encoding: "json" | "form" = "json") => {
      const error = expectError(await create({ policy: policy.id, ...body }, encoding), 400, "invalid_request_error");
      for (const field of fields) expect(error.details?.[field], `${JSON.stringify(body)} → ${JSON.stringify(error)}`).toMatchObject({ message: expect.any(String) });
      return error;
    };
    const budget = { type: "budget", amount: "100", currency: "native", scope: "policy", period: "day" };
    // budget
    await refused({ type: "budget" }, ["amount", "currency", "scope", "period"]);
    await refused({ ...budget, amount: undefined }, ["amount"]);
    await refused({ ...budget, currency: undefined }, ["currency"]);
    await refused({ ...budget, scope: undefined }, ["scope"]);
    await refused({ ...budget, period: undefined }, ["period"]);
    await refused({ ...budget, amount: "0" }, ["amount"]);
    await refused({ ...budget, amount: "-5" }, ["amount"]);
    await refused({ ...budget, amount: "1e18" }, ["amount"]);
    await refused({ ...budget, amount: "ten" }, ["amount"]);
    await refused({ ...budget, amount: "1.5" }, ["amount"]); // native is wei: an integer
    await refused({ ...budget, currency: "usd", amount: "2.5000001" }, ["amount"]); // 7 decimals
    await refused({ ...budget, currency: "usd", amount: "0.000000" }, ["amount"]);
    await refused({ ...budget, currency: "eur" }, ["currency"]);
    await refused({ ...budget, scope: "team" }, ["scope"]);
    await refused({ ...budget, period: "year" }, ["period"]);
    await refused({ ...budget, scope: "operation" }, ["period"]); // an operation cap has no period
    await refused({ ...budget, gasLimit: "1" }, ["gasLimit"]);
    await refused({ ...budget, startsAt: 1 }, ["startsAt"]);
    await refused({ ...budget, url: receiverUrl }, ["url"]);
    // time_window
    await refused({ type: "time_window" }, ["startsAt", "endsAt"]);
    await refused({ type: "time_window", startsAt: 2000, endsAt: 1000 }, ["endsAt"]);
    await refused({ type: "time_window", startsAt: 1000, endsAt: 1000 }, ["endsAt"]);
    await refused({ type: "time_window", startsAt: -1 }, ["startsAt"]);
    await refused({ type: "time_window", startsAt: "soon" }, ["startsAt"]);
    await refused({ type: "time_window", endsAt: 1.5 }, ["endsAt"]);
    await refused({ type: "time_window", endsAt: 253_402_300_800 }, ["endsAt"]); // after year 9999
    await refused({ type: "time_window", startsAt: 1, amount: "1" }, ["amount"]);
    await refused({ type: "time_window", startsAt: "2000", endsAt: "1000" }, ["endsAt"], "form");
    // gas_price
    await refused({ type: "gas_price" }, ["maxFeePerGas"]);
    await refused({ type: "gas_price", maxFeePerGas: "0" }, ["maxFeePerGas"]);
    await refused({ type: "gas_price", maxFeePerGas: "1.5" }, ["maxFeePerGas"]);
    await refused({ type: "gas_price", maxFeePerGas: "1", waitSeconds: 61 }, ["waitSeconds"]);
    await refused({ type: "gas_price", maxFeePerGas: "1", waitSeconds: -1 }, ["waitSeconds"]);
    await refused({ type: "gas_price", maxFeePerGas: "1", waitSeconds: "61" }, ["waitSeconds"], "form");
    await refused({ type: "gas_price", maxFeePerGas: "1", timeoutMs: 500 }, ["timeoutMs"]);
    // approval_webhook
    await refused({ type: "approval_webhook" }, ["url"]);
    await refused({ type: "approval_webhook", url: "not a url" }, ["url"]);
    await refused({ type: "approval_webhook", url: "ftp://127.0.0.1/approve" }, ["url"]);
    await refused({ type: "approval_webhook", url: "http://user:pass@127.0.0.1/approve" }, ["url"]);
    await refused({ type: "approval_webhook", url: "http://169.254.169.254/latest" }, ["url"]); // cloud metadata, never
    await refused({ type: "approval_webhook", url: receiverUrl, timeoutMs: 99 }, ["timeoutMs"]);
    await refused({ type: "approval_webhook", url: receiverUrl, timeoutMs: 10_001 }, ["timeoutMs"]);
    await refused({ type: "approval_webhook", url: receiverUrl, onError: "retry" }, ["onError"]);
    await refused({ type: "approval_webhook", url: receiverUrl, maxFeePerGas: "1" }, ["maxFeePerGas"]);
    await refused({ type: "approval_webhook", url: receiverUrl, secret: "whsec_mine" }, ["secret"]); // the service makes it
    await refused({ type: "approval_webhook", url: receiverUrl, rotateSecret: true }, ["rotateSecret"]); // update only
    await refused({ type: "approval_webhook", url: receiverUrl, timeoutMs: "fast" }, ["timeoutMs"], "form");
    // The spec's types refuse the new fields by name.
    await refused({ type: "account_functions", amount: "1" }, ["amount"]);
    await refused({ type: "rate_limit", functionName: "gas_per_transaction", gasLimit: "1", maxFeePerGas: "1" }, ["maxFeePerGas"]);
    // Several at once: every field is named in one answer.
    const error = await refused({ type: "budget", amount: "1.5", currency: "native", scope: "operation", period: "day", url: receiverUrl }, ["amount", "period", "url"]);
    expect(error.message).toBe("Invalid budget rule.");
    expect(received).toBe(0);
  });

  it("shows an approval webhook's secret once, sealed at rest; rotates it on request; drops it when the rule changes type", async () => {
    const made = ok(await create({ policy: policy.id, type: "approval_webhook", url: receiverUrl, timeoutMs: 1500 }));
    const secret: string = made.secret;
    const row = await stored(made.id);
    expect(row.encryptedSecret).toMatch(/^v2\./);
    expect(row.encryptedSecret).not.toContain(secret.slice(6));
    expect(openRuleSecret(row)).toBe(secret);
    // Sealed to its rule: another rule's id does not open it.
    expect(() => openRuleSecret({ id: policy.id, encryptedSecret: row.encryptedSecret })).toThrow();

    // Never again: not read, listed, embedded, nor answered by an update that does not rotate it.
    expect(ok(await get(made.id)).secret).toBeUndefined();
    const changed = ok(await update(made.id, { onError: "sponsor" }, "form"));
    expect(changed).toMatchObject({ url: receiverUrl, timeoutMs: 1500, onError: "sponsor" });
    expect(changed.secret).toBeUndefined();
    expect(openRuleSecret(await stored(made.id))).toBe(secret);
    const listed = ok(await call("GET", "/v1/policy_rules", { key, query: { policy: policy.id, limit: 100 } }));
    expect(JSON.stringify(listed)).not.toContain(secret);
    expect(JSON.stringify(ok(await call("GET", `/v1/policies/${policy.id}`, { key, query: { expand: ["policyRules"] } })))).not.toContain(secret);

    // rotateSecret: a new one, answered once; the old one is gone.
    const rotated = ok(await update(made.id, { rotateSecret: "true" }, "form"));
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(secret);
    expect(openRuleSecret(await stored(made.id))).toBe(rotated.secret);
    expect(ok(await update(made.id, { rotateSecret: false })).secret).toBeUndefined();
    expect(openRuleSecret(await stored(made.id))).toBe(rotated.secret);

    // Another type has no secret; becoming an approval webhook again makes a new one.
    const window = ok(await update(made.id, { type: "time_window", startsAt: 1_700_000_000 }));
    expect(window).toEqual({ id: made.id, object: "policyRule", createdAt: made.createdAt, type: "time_window", startsAt: 1_700_000_000 });
    expect((await stored(made.id)).encryptedSecret).toBeNull();
    expect(expectError(await update(made.id, { rotateSecret: true }), 400).details?.rotateSecret).toBeDefined();
    const again = ok(await update(made.id, { type: "approval_webhook", url: receiverUrl }));
    expect(again).toMatchObject({ type: "approval_webhook", url: receiverUrl, timeoutMs: 2000, onError: "decline" });
    expect(again.secret).toMatch(/^whsec_/);
    expect(openRuleSecret(await stored(made.id))).toBe(again.secret);
    expect(received).toBe(0);
  });

  it("updates keeping unsent fields, unsets a window's start or end, and checks the rule as it would become", async () => {
    const budget = ok(await create({ policy: policy.id, type: "budget", amount: "100", currency: "native", scope: "player", period: "day" }));
    expect(ok(await update(budget.id, { amount: "250" }, "form"))).toMatchObject({ amount: "250", currency: "native", scope: "player", period: "day" });
    // A per-operation cap has no period: the old one goes with the old scope. Back to a periodic scope needs one.
    const perOp = ok(await update(budget.id, { scope: "operation" }));
    expect(perOp).toMatchObject({ scope: "operation", amount: "250" });
    expect(perOp.period).toBeUndefined();
    expect(expectError(await update(budget.id, { scope: "account" }), 400).details?.period).toBeDefined();
    expect(ok(await update(budget.id, { scope: "account", period: "week" }))).toMatchObject({ scope: "account", period: "week" });
    // A native budget is wei, an integer; the same amount in dollars may have decimals.
    expect(expectError(await update(budget.id, { amount: "2.5" }), 400).details?.amount).toBeDefined();
    expect(ok(await update(budget.id, { amount: "2.5", currency: "usd" }))).toMatchObject({ amount: "2.5", currency: "usd" });
    // Fields of another type are refused on update too, and nothing changed.
    expect(expectError(await update(budget.id, { maxFeePerGas: "1" }), 400).details?.maxFeePerGas).toBeDefined();
    expect(ok(await get(budget.id))).toMatchObject({ amount: "2.5", currency: "usd", scope: "account", period: "week" });

    const window = ok(await create({ policy: policy.id, type: "time_window", startsAt: 1_700_000_000, endsAt: 1_800_000_000 }));
    expect(ok(await update(window.id, { endsAt: null }))).toEqual({ ...window, endsAt: undefined });
    expect(ok(await update(window.id, { endsAt: "1900000000" }, "form")).endsAt).toBe(1_900_000_000);
    const open = ok(await update(window.id, { startsAt: "" }, "form"));
    expect(open.startsAt).toBeUndefined();
    expect(open.endsAt).toBe(1_900_000_000);
    expect(expectError(await update(window.id, { endsAt: null }), 400).details?.startsAt).toBeDefined(); // nothing left
    expect(expectError(await update(window.id, { startsAt: 1_950_000_000 }), 400).details?.endsAt).toBeDefined(); // after the kept end
    const stamped = await stored(window.id);
    expect(stamped.startsAt).toBeNull();
    expect(stamped.endsAt?.toISOString()).toBe(new Date(1_900_000_000_000).toISOString());

    const ceiling = ok(await create({ policy: policy.id, type: "gas_price", maxFeePerGas: "20000000000", waitSeconds: 30 }));
    expect(ok(await update(ceiling.id, { maxFeePerGas: "25000000000" }))).toMatchObject({ maxFeePerGas: "25000000000", waitSeconds: 30 });
    // A new type starts from what was sent: the ceiling's fields do not carry over.
    expect(expectError(await update(ceiling.id, { type: "budget" }), 400).details).toMatchObject({ amount: expect.anything(), currency: expect.anything() });
    const retyped = ok(await update(ceiling.id, { type: "account_functions" }));
    expect(retyped).toEqual({ id: ceiling.id, object: "policyRule", createdAt: ceiling.createdAt, type: "account_functions" });
    const row = await stored(ceiling.id);
    expect([row.maxFeePerGas, row.waitSeconds]).toEqual([null, null]);
  });

  it("refuses a usd budget on a chain without a USD price, on create and update, saying why", async () => {
    const usd = { type: "budget", amount: "5", currency: "usd", scope: "player", period: "month" };
    const error = expectError(await create({ policy: pricelessPolicy.id, ...usd }), 400);
    expect(error.details?.currency).toMatchObject({ value: "usd", message: "chain 31338 has no USD price" });
    expect(error.message).toMatch(/usd budget/);
    expect(error.message).toContain("USD price feed of chain 31338");
    expect(error.message).toMatch(/currency native/);
    expectError(await create({ policy: pricelessPolicy.id, ...usd }, "form"), 400);
    // Native budgets there are fine; turning one into dollars is refused the same way.
    const native = ok(await create({ policy: pricelessPolicy.id, ...usd, amount: "5000", currency: "native" }));
    expect(expectError(await update(native.id, { currency: "usd" }), 400).details?.currency).toBeDefined();
    expect((await stored(native.id)).currency).toBe("native");

    // The same rule on a priced chain is made; and once that chain loses its price, updating it is refused too.
    const priced = ok(await create({ policy: policy.id, ...usd }));
    delete process.env[PRICED];
    process.env.CHAIN_31337_USD_AGGREGATOR = process.env[PRICELESS];
    try {
      expect(expectError(await update(priced.id, { amount: "6" }), 400).details?.currency).toBeDefined();
      expect((await stored(priced.id)).amount).toBe("5");
    } finally {
      delete process.env.CHAIN_31337_USD_AGGREGATOR;
      process.env[PRICED] = "2000";
    }
    expect(ok(await update(priced.id, { amount: "6" })).amount).toBe("6");
  });

  it("holds approval webhook URLs to the outbound rule of the key's mode, without connecting", async () => {
    const liveKey = project.keys.live.secret;
    const live = ok(await call("POST", "/v1/policies", { key: liveKey, json: { name: "live", chainId: 31339, strategy: { sponsorSchema: "pay_for_user" } } }));
    const hook = (url: string) => create({ policy: live.id, type: "approval_webhook", url }, "json", liveKey);
    expect(expectError(await hook(receiverUrl), 400).details?.url?.message).toMatch(/https/);
    expect(expectError(await hook("https://127.0.0.1/approve"), 400).details?.url?.message).toMatch(/loopback/);
    expect(expectError(await hook("https://10.0.0.8/approve"), 400).details?.url?.message).toMatch(/private/);
    const made = ok(await hook("https://93.184.215.14/approve"));
    expect(made).toMatchObject({ url: "https://93.184.215.14/approve", timeoutMs: 2000, onError: "decline" });
    expect(made.secret).toMatch(/^whsec_/);
    // Normalised as it will be called.
    expect(ok(await create({ policy: policy.id, type: "approval_webhook", url: "HTTP://127.0.0.1:9" })).url).toBe("http://127.0.0.1:9/");
    expect(received).toBe(0);
  });

  it("is in the OpenAPI document, fields and all", async () => {
    const doc = await openApi(new Request("http://127.0.0.1:3000/v1/openapi.json")).json();
    const body = doc.paths["/v1/policy_rules"].post.requestBody.content["application/json"].schema;
    expect(body.properties.type.enum).toEqual(["contract_functions", "account_functions", "rate_limit", "budget", "time_window", "gas_price", "approval_webhook"]);
    expect(body.properties.currency.enum).toEqual(["native", "usd"]);
    expect(body.properties.scope.enum).toEqual(["policy", "player", "account", "operation"]);
    expect(body.properties.period.enum).toEqual(["day", "week", "month", "total"]);
    expect(body.properties.onError.enum).toEqual(["sponsor", "decline"]);
    expect(body.properties.amount).toMatchObject({ type: "string", description: expect.stringContaining("usd") });
    expect(body.properties.startsAt).toMatchObject({ type: ["integer", "null"], description: expect.stringContaining("Unix seconds") });
    expect(body.properties.waitSeconds).toMatchObject({ type: "integer", minimum: 0, maximum: 60 });
    expect(body.properties.timeoutMs).toMatchObject({ type: "integer", minimum: 100, maximum: 10000 });
    expect(body.properties.secret).toBeUndefined();
    const updateBody = doc.paths["/v1/policy_rules/{id}"].post.requestBody.content["application/json"].schema;
    expect(updateBody.properties.rotateSecret.type).toBe("boolean");
    expect(doc.paths["/v1/policy_rules/{id}"].get.operationId).toBe("getPolicyRule");
    const shown = doc.paths["/v1/policy_rules"].post.responses["200"].content["application/json"].schema;
    const props = shown.properties ?? doc.components.schemas[shown.$ref?.split("/").pop()]?.properties;
    expect(Object.keys(props)).toEqual(expect.arrayContaining(["amount", "currency", "scope", "period", "startsAt", "endsAt", "maxFeePerGas", "waitSeconds", "url", "timeoutMs", "onError", "secret"]));
  });

  it("reads as sentences in the dashboard, whose rule editor makes each type through the same operation", async () => {
    for (const type of RULE_TYPES) expect(RULE_PURPOSES.some((p) => p.type === type), type).toBe(true);
    const ctx = { projectId: project.id, livemode: false };
    // The fields the editor sends for each new purpose, as the browser's FormData (time windows as UTC date-times).
    const sent: [Record<string, string>, string][] = [
      [{ type: "budget", scope: "player", currency: "usd", amount: "2.5", period: "day" }, "Each player gets at most $2.50 of sponsorship per day (UTC), across all of its accounts and chains."],
      [{ type: "budget", scope: "policy", currency: "native", amount: "500000000000000000", period: "month" }, "This policy spends at most 0.5 ETH on sponsorship per calendar month (UTC)."],
      [{ type: "budget", scope: "account", currency: "native", amount: "1000000000000000", period: "total" }, "Each account gets at most 0.001 ETH of sponsorship in total."],
      [{ type: "budget", scope: "operation", currency: "usd", amount: "0.25" }, "Each operation may cost at most $0.25."],
      [{ type: "time_window", startsAt: "2030-01-01T00:00", endsAt: "2030-02-01T12:30" }, "Sponsors only from 2030-01-01 00:00 UTC until 2030-02-01 12:30 UTC."],
      [{ type: "time_window", startsAt: "", endsAt: "2030-02-01T12:30" }, "Sponsors only until 2030-02-01 12:30 UTC."],
      [{ type: "gas_price", maxFeePerGas: "30000000000", waitSeconds: "0" }, "Declines when the fee per gas is above 30 gwei."],
      [{ type: "gas_price", maxFeePerGas: "1500000000", waitSeconds: "20" }, "Declines when the fee per gas is above 1.5 gwei. Transactions this service builds wait up to 20 seconds for it to fall."],
      [{ type: "approval_webhook", url: receiverUrl, timeoutMs: "2000", onError: "decline" }, `Asks ${receiverUrl} before sponsoring; if it fails or does not answer within 2 seconds, declines.`],
      [{ type: "approval_webhook", url: receiverUrl, timeoutMs: "1500", onError: "sponsor" }, `Asks ${receiverUrl} before sponsoring; if it fails or does not answer within 1500 ms, sponsors anyway.`],
    ];
    for (const [fields, words] of sent) {
      const outcome = await runOperation(ctx, createPolicyRule, ruleFormToApi(formData({ policy: policy.id, $purpose: fields.type!, ...fields })));
      if (!outcome.ok) throw new Error(`${JSON.stringify(fields)}: ${JSON.stringify(outcome.error)}`);
      expect(purposeOf(outcome.data)).toBe(fields.type);
      expect(describeRule(outcome.data, "ETH")).toBe(words);
      expect("secret" in outcome.data).toBe(fields.type === "approval_webhook");
    }
    // Editing a window in the dashboard: an emptied end unsets it (an emptied field would otherwise be left out, and kept).
    const window = await runOperation(ctx, createPolicyRule, ruleFormToApi(formData({ policy: policy.id, type: "time_window", startsAt: "2030-01-01T00:00", endsAt: "2030-02-01T00:00" })));
    if (!window.ok) throw new Error(JSON.stringify(window.error));
    expect(window.data).toMatchObject({ startsAt: Date.UTC(2030, 0, 1) / 1000, endsAt: Date.UTC(2030, 1, 1) / 1000 });
    const edited = await runOperation(ctx, updatePolicyRule, ruleFormToApi(formData({ type: "time_window", startsAt: "2030-01-01T00:00", endsAt: "" })), { id: window.data.id });
    if (!edited.ok) throw new Error(JSON.stringify(edited.error));
    expect(edited.data.endsAt).toBeUndefined();
    expect(describeRule(edited.data)).toBe("Sponsors only from 2030-01-01 00:00 UTC on.");
    // Both emptied: the API's refusal names both fields, which the editor shows beside them.
    const empty = await runOperation(ctx, createPolicyRule, ruleFormToApi(formData({ policy: policy.id, type: "time_window", startsAt: "", endsAt: "" })));
    expect(empty.ok).toBe(false);
    if (!empty.ok) expect(Object.keys(empty.error.details ?? {})).toEqual(["startsAt", "endsAt"]);
    // The secret select of an edited webhook: keep it, or rotate it (answered once).
    const hook = await runOperation(ctx, createPolicyRule, formData({ policy: policy.id, type: "approval_webhook", url: receiverUrl }));
    if (!hook.ok) throw new Error(JSON.stringify(hook.error));
    const kept = await runOperation(ctx, updatePolicyRule, formData({ type: "approval_webhook", url: receiverUrl, timeoutMs: "3000", onError: "sponsor", rotateSecret: "false" }), { id: hook.data.id });
    expect(kept.ok && kept.data.secret).toBe(undefined);
    const rotated = await runOperation(ctx, updatePolicyRule, formData({ type: "approval_webhook", url: receiverUrl, rotateSecret: "true" }), { id: hook.data.id });
    expect(rotated.ok && rotated.data.secret).toMatch(/^whsec_/);
    expect(received).toBe(0);
  });
});
