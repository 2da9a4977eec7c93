import { execFile } from "node:child_process";
import { runIdempotent } from "@/lib/http/idempotency";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { PGlite } from "@electric-sql/pglite";
import { and, eq } from "drizzle-orm";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import { migrate as migratePglite } from "drizzle-orm/pglite/migrator";
import { drizzle as drizzlePostgres } from "drizzle-orm/postgres-js";
import { migrate as migratePostgres } from "drizzle-orm/postgres-js/migrator";
import postgres from "postgres";
import { bytesToHex, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serviceDeployment } from "@/lib/chain/contracts";
import type { Db } from "@/lib/db/client";
import * as schema from "@/lib/db/schema";
import { apiKeys, developerAccounts, ownerKeys } from "@/lib/db/schema";
import { createContract } from "@/lib/contracts/service";
import { createContractInput } from "@/lib/contracts/schema";
import { createDeveloperAccount, developerSigner } from "@/lib/developer-accounts/service";
import { createDeveloperAccountInput } from "@/lib/developer-accounts/schema";
import { landIntent } from "@/lib/intents/land-intent";
import { createIntentInput } from "@/lib/intents/schema";
import { createIntent } from "@/lib/intents/service";
import { ownerKeyAad, ownerKeyFor, ownerSigner } from "@/lib/keys/custodial";
import { decrypt, encrypt, MasterKeyError } from "@/lib/keys/encryption";
import { keyring, loadKeyring, reloadKeyring } from "@/lib/keys/master";
import { reencryptAll } from "@/lib/key-rotation";
import { LEGACY_SECRET_KEY_MARK, openSecretKey } from "@/lib/projects/sealed-keys";
import { serviceAccount } from "@/lib/keys/service-keys";
import { openSigningSecret, webhookSecretOwner } from "@/lib/deliveries/signing";
import { signinAad } from "@/lib/iam/google-signin";
import { loadProviderConfig, upsertConfig } from "@/lib/iam/provider-config";
import { openSession, refreshSession } from "@/lib/iam/sessions";
import { issuePlayerToken, verifyPlayerToken } from "@/lib/iam/tokens";
import { createSubscription } from "@/lib/subscriptions/service";
import { setWebhook } from "@/lib/webhooks/service";
import { createPlayer } from "@/lib/players/service";
import { createPolicyRule, getPolicyRule, openRuleSecret } from "@/lib/policies/rules";
import { createPolicyInput, createPolicyRuleInput } from "@/lib/policies/schema";
import { createPolicy } from "@/lib/policies/service";
import { createProject, currentSecretKey } from "@/lib/projects/service";
import type { ProjectContext } from "@/lib/tenant";
import { createFreshDatabase } from "./helpers/fresh-database";

/** The v1 format, as secrets were sealed before keys had ids: AES-256-GCM under the master key itself. */
function legacySeal(raw: Buffer, plaintext: string, aad: string) {
  const iv = crypto.randomBytes(12);
  const cipher = crypto.createCipheriv("aes-256-gcm", raw, iv);
  cipher.setAAD(Buffer.from(aad));
  const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
  return ["v1", iv, cipher.getAuthTag(), body].map((p) => (typeof p === "string" ? p : p.toString("base64url"))).join(".");
}

const derivedAddress = (root: Buffer, purpose: string) =>
  privateKeyToAccount(bytesToHex(new Uint8Array(crypto.hkdfSync("sha256", root, "smart-wallet-service", `service-key:${purpose}`, 32)))).address;

const randomKey = () => crypto.randomBytes(32).toString("hex");

describe("secrets at rest", () => {
  it("are sealed under a key derived from the master key, named by its kid, and bound to their AAD", () => {
    const ring = keyring();
    const sealed = encrypt("a secret", "row-1");
    expect(sealed.startsWith(`v2.${ring.current.kid}.`)).toBe(true);
    expect(ring.current.encryptionKey.equals(ring.current.raw)).toBe(false);
    expect(decrypt(sealed, "row-1")).toBe("a secret");
    expect(() => decrypt(sealed, "row-2")).toThrow(MasterKeyError);
    expect(() => decrypt(sealed, "row-2")).toThrow(/does not authenticate under master key/);
  });

  it("still opens legacy ciphertexts sealed with the raw master key", () => {
    const sealed = legacySeal(keyring().current.raw, "old secret", "row-legacy");
    expect(decrypt(sealed, "row-legacy")).toBe("old secret");
  });

  it("says which master key is missing when the configured one is wrong", () => {
    const sealed = encrypt("a secret", "row");
    const wrong = loadKeyring({ KEY_ENCRYPTION_KEY: randomKey() });
    expect(() => decrypt(sealed, "row", wrong)).toThrow(new RegExp(`sealed under master key ${keyring().current.kid}, which is not configured \\(configured: ${wrong.current.kid}\\)`));
    expect(() => decrypt(legacySeal(keyring().current.raw, "x", "row"), "row", wrong)).toThrow(/none of the configured master keys/);
  });

  it("keeps the service's keys derived from the master key, and refuses a keyring without a pinned derivation seed", () => {
    const root = keyring().derivationRoot;
    expect(root.equals(keyring().current.raw)).toBe(true);
    expect(serviceAccount("paymaster-signer").address).toBe(derivedAddress(root, "paymaster-signer"));
    expect(() => loadKeyring({ KEY_ENCRYPTION_KEY: randomKey(), KEY_ENCRYPTION_KEYRING: randomKey() })).toThrow(/KEY_DERIVATION_SEED/);
    const seed = randomKey();
    expect(loadKeyring({ KEY_ENCRYPTION_KEY: randomKey(), KEY_ENCRYPTION_KEYRING: randomKey(), KEY_DERIVATION_SEED: seed }).derivationRoot.toString("hex")).toBe(seed);
  });
});

/** A database of this test's own: the rotation rewrites every row, which other test files share on PostgreSQL. */
async function ownDatabase(): Promise<{ db: Db; close: () => Promise<void> }> {
  const migrationsFolder = path.join(process.cwd(), "lib/db/migrations");
  if (process.env.DATABASE_URL) {
    const fresh = await createFreshDatabase(process.env.DATABASE_URL, "rotation");
    const sql = postgres(fresh.url, { max: 4, onnotice: () => {} });
    const db = drizzlePostgres(sql, { schema, casing: "snake_case" });
    await migratePostgres(db, { migrationsFolder });
    return { db: db as unknown as Db, close: async () => (await sql.end(), await fresh.drop()) };
  }
  const client = await PGlite.create();
  const db = drizzlePglite(client, { schema, casing: "snake_case" });
  await migratePglite(db, { migrationsFolder });
  return { db: db as unknown as Db, close: () => client.close() };
}

describe("rotating the master key", () => {
  const saved = { ...process.env };
  let own: Awaited<ReturnType<typeof ownDatabase>>;
  afterAll(async () => {
    for (const name of ["KEY_ENCRYPTION_KEY", "KEY_ENCRYPTION_KEYRING", "KEY_DERIVATION_SEED"]) {
      if (saved[name] === undefined) delete process.env[name];
      else process.env[name] = saved[name];
    }
    reloadKeyring();
    await own?.close();
  });
  beforeAll(async () => {
    own = await ownDatabase();
  });

  it("re-encrypts every secret under the new key while both are known; custodial accounts still sign afterwards", async () => {
    const { db } = own;
    const old = keyring();
    const paymasterSigner = serviceAccount("paymaster-signer").address;
    const project = await createProject(db, "rotation");
    const ctx: ProjectContext = { projectId: project.id, livemode: false };
    const fresh = await createPlayer(db, ctx, {});
    await ownerKeyFor(db, ctx, fresh.id);
    const developer = await createDeveloperAccount(db, ctx, createDeveloperAccountInput.parse({ name: "treasury" }));
    // Signing secrets (the webhook's, a trigger's), a provider's secrets, a player-token key, a browser sign-in.
    const webhook = await setWebhook(db, ctx, "http://127.0.0.1:9/hook");
    const subscription = await createSubscription(db, ctx, { topic: "test", triggers: [{ target: "http://127.0.0.1:9/trigger", type: "webhook" }] });
    const approvalPolicy = await createPolicy(db, ctx, createPolicyInput.parse({ name: "approval", chainId: 31337, strategy: { sponsorSchema: "pay_for_user" } }));
    const approval = await createPolicyRule(db, ctx, createPolicyRuleInput.parse({ policy: approvalPolicy.id, type: "approval_webhook", url: "http://127.0.0.1:9/approve" }));
    await upsertConfig(db, ctx, { provider: "telegramMiniApp", botToken: "123456:rotation-bot-token" });
    const playerToken = await issuePlayerToken(db, ctx, fresh.id, "pss_rotation");
    const session = await openSession(db, ctx, fresh.id, "wallet");
    const signinId = `osi_${crypto.randomUUID()}`;
    await db.insert(schema.oauthSignins).values({
      id: signinId, ...ctx, provider: "google", stateHash: crypto.randomUUID(), keyHash: crypto.randomUUID(), nonce: "n",
      encryptedVerifier: encrypt("verifier", signinAad(signinId)), encryptedResult: encrypt("{}", signinAad(signinId)), expiresAt: new Date(Date.now() + 60_000),
    });
    // An idempotent request's stored answer (it may carry tokens).
    const remembered = () => runIdempotent(db, { project: ctx, credential: "key:rotation" }, "k-rotation", "hash", async () => ({ status: 200, body: { token: "tok_rotation" } }));
    expect((await remembered()).replayed).toBe(false);
    // A player whose key was sealed before keys had ids.
    const legacy = await createPlayer(db, ctx, {});
    const legacyKey = `0x${crypto.randomBytes(32).toString("hex")}` as Hex;
    const legacyAddress = privateKeyToAccount(legacyKey).address;
    await db.insert(ownerKeys).values({
      id: `own_${crypto.randomUUID()}`,
      ...ctx,
      playerId: legacy.id,
      address: legacyAddress,
      encryptedPrivateKey: legacySeal(old.current.raw, legacyKey, ownerKeyAad({ projectId: ctx.projectId, address: legacyAddress })),
    });

    // A secret key sealed before keys were bound to their row, as migration 0028 marked existing ones.
    const [legacySecret] = await db.select().from(apiKeys).where(and(eq(apiKeys.projectId, project.id), eq(apiKeys.livemode, false), eq(apiKeys.kind, "secret")));
    await db.update(apiKeys).set({ encryptedSecret: `${LEGACY_SECRET_KEY_MARK}${encrypt(project.keys.test.secret, project.id)}` }).where(eq(apiKeys.id, legacySecret!.id));

    // Step 1: the servers know both keys, the new one current.
    const next = randomKey();
    process.env.KEY_ENCRYPTION_KEY = next;
    process.env.KEY_ENCRYPTION_KEYRING = old.current.raw.toString("hex");
    process.env.KEY_DERIVATION_SEED = old.derivationRoot.toString("base64");
    reloadKeyring();
    const both = keyring();
    expect(both.current.kid).not.toBe(old.current.kid);
    expect(ownerSigner((await db.select().from(ownerKeys).where(eq(ownerKeys.playerId, legacy.id)))[0]!).address).toBe(legacyAddress);

    // Step 2: re-encrypt.
    const report = await reencryptAll(db, both, 2);
    const counts = Object.fromEntries(report.map((r) => [r.column, r.reencrypted]));
    expect(counts).toEqual({
      "owner_keys.encrypted_private_key": 2,
      "developer_accounts.encrypted_private_key": 1,
      "api_keys.encrypted_secret": 2,
      "webhook_settings.encrypted_secret": 1,
      "triggers.encrypted_secret": 1,
      "policy_rules.encrypted_secret": 1,
      "oauth_configs.encrypted_secret": 1,
      "player_token_keys.encrypted_private_jwk": 1,
      "player_sessions.encrypted_secret": 1,
      "oauth_signins.encrypted_verifier": 1,
      "oauth_signins.encrypted_result": 1,
      "idempotency_keys.sealed_response": 1,
    });
    const sealed = [
      ...(await db.select({ s: ownerKeys.encryptedPrivateKey }).from(ownerKeys)),
      ...(await db.select({ s: developerAccounts.encryptedPrivateKey }).from(developerAccounts)),
      ...(await db.select({ s: apiKeys.encryptedSecret }).from(apiKeys)),
    ].flatMap((r) => (r.s ? [r.s] : []));
    expect(sealed).toHaveLength(5);
    for (const s of sealed) expect(s.startsWith(`v2.${both.current.kid}.`)).toBe(true);
    expect((await reencryptAll(db, both)).every((r) => r.reencrypted === 0)).toBe(true);
    // The marked secret key was resealed bound to its row, and opens.
    expect(await currentSecretKey(db, ctx)).toBe(project.keys.test.secret);

    // Step 3: the old key is dropped; everything opens under the new one alone.
    delete process.env.KEY_ENCRYPTION_KEYRING;
    reloadKeyring();
    expect(keyring().all.map((k) => k.kid)).toEqual([both.current.kid]);
    expect(derivedAddress(keyring().derivationRoot, "paymaster-signer")).toBe(paymasterSigner);
    expect(developerSigner((await db.select().from(developerAccounts).where(eq(developerAccounts.id, developer.id)))[0]!).address).toBe(developer.ownerAddress);
    const [webhookRow] = await db.select().from(schema.webhookSettings).where(eq(schema.webhookSettings.projectId, ctx.projectId));
    expect(openSigningSecret(webhookRow!.encryptedSecret!, webhookSecretOwner(ctx))).toBe(webhook.secret);
    const [triggerRow] = await db.select().from(schema.triggers).where(eq(schema.triggers.id, subscription.triggers[0]!.id));
    expect(openSigningSecret(triggerRow!.encryptedSecret, triggerRow!.id)).toBe(subscription.triggers[0]!.secret);
    expect(openRuleSecret(await getPolicyRule(db, ctx, approval.id))).toBe(approval.secret);
    expect((await loadProviderConfig(db, ctx, "telegramMiniApp"))!.secrets.botToken).toBe("123456:rotation-bot-token");
    expect((await verifyPlayerToken(db, await issuePlayerToken(db, ctx, fresh.id, "pss_rotation"))).playerId).toBe(fresh.id);
    expect((await verifyPlayerToken(db, playerToken)).playerId).toBe(fresh.id);
    expect((await refreshSession(db, ctx, session.refreshToken)).sessionId).toBe(session.sessionId);
    const [signinRow] = await db.select().from(schema.oauthSignins).where(eq(schema.oauthSignins.id, signinId));
    expect(decrypt(signinRow!.encryptedVerifier, signinAad(signinId))).toBe("verifier");
    expect(await remembered()).toEqual({ status: 200, body: { token: "tok_rotation" }, replayed: true });

    const contract = await createContract(db, ctx, createContractInput.parse({ name: "EntryPoint", chainId: 31337, address: serviceDeployment().entryPoint, abi: [{ type: "function", name: "depositTo", stateMutability: "payable", inputs: [{ name: "account", type: "address" }], outputs: [] }] }));
    const policy = await createPolicy(db, ctx, createPolicyInput.parse({ name: "rotation", chainId: 31337, strategy: { sponsorSchema: "pay_for_user" } }));
    await createPolicyRule(db, ctx, createPolicyRuleInput.parse({ policy: policy.id, type: "contract_functions", contract: contract.id, functionName: "depositTo" }));
    const { intent } = await createIntent(db, ctx, createIntentInput.parse({
      chainId: 31337,
      player: legacy.id,
      policy: policy.id,
      interactions: [{ contract: contract.id, functionName: "depositTo", functionArgs: [serviceDeployment().paymaster] }],
    }));
    expect(intent.status).toBe("pending"); // signed by the custodial key, re-encrypted
    expect(await landIntent(db, intent.id)).toBe("landed");
    expect((await db.select().from(schema.transactionIntents).where(eq(schema.transactionIntents.id, intent.id)))[0]!.status).toBe("successful");

    // A server given only the old key cannot open them, and says which key it lacks.
    process.env.KEY_ENCRYPTION_KEY = old.current.raw.toString("hex");
    reloadKeyring();
    const row = (await db.select().from(ownerKeys).where(eq(ownerKeys.playerId, fresh.id)))[0]!;
    expect(() => ownerSigner(row)).toThrow(new RegExp(`master key ${both.current.kid}, which is not configured`));
  });
});

describe("npm run cli -- keys rotate-master (embedded database)", () => {
  it("rotates .data's master key, re-encrypts the stored secrets and keeps the service keys", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "rotate-master-"));
    const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dir };
    for (const name of ["DATABASE_URL", "PGLITE_DATA_DIR", "KEY_ENCRYPTION_KEY", "KEY_ENCRYPTION_KEYRING", "KEY_DERIVATION_SEED"]) delete env[name];
    const cli = async (...args: string[]) => (await promisify(execFile)(process.execPath, ["--import", "tsx", "cli/index.ts", ...args], { env, cwd: process.cwd() })).stdout;
    const openEmbedded = async () => {
      const client = await PGlite.create(path.join(dir, "pglite"));
      return { client, db: drizzlePglite(client, { schema, casing: "snake_case" }) };
    };
    try {
      // The embedded database as a server left it: its secrets sealed under .data/master.key.
      fs.writeFileSync(path.join(dir, "master.key"), keyring().current.raw.toString("base64"));
      const seeded = await openEmbedded();
      await migratePglite(seeded.db, { migrationsFolder: path.join(process.cwd(), "lib/db/migrations") });
      const project = await createProject(seeded.db as unknown as Db, "rotated");
      await seeded.client.close();

      const before = loadKeyring({}, dir);
      const result = JSON.parse(await cli("keys", "rotate-master", "--json"));
      const after = loadKeyring({}, dir);
      expect(after.current.kid).not.toBe(before.current.kid);
      expect(result).toMatchObject({ kid: after.current.kid, previous: [before.current.kid] });
      expect(result.columns).toContainEqual({ column: "api_keys.encrypted_secret", reencrypted: 2 });
      expect(fs.existsSync(path.join(dir, "master.keyring"))).toBe(false);
      expect(after.derivationRoot.equals(before.current.raw)).toBe(true);

      const { client, db } = await openEmbedded();
      try {
        const rows = await db.select().from(apiKeys).where(eq(apiKeys.projectId, project.id));
        const secrets = rows.flatMap((r) => (r.encryptedSecret ? [openSecretKey(r.encryptedSecret, r, after)] : []));
        expect(secrets.sort()).toEqual([project.keys.live.secret, project.keys.test.secret].sort());
      } finally {
        await client.close();
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
