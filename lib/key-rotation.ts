import { and, asc, eq, gt, isNotNull, notLike, sql, type SQL } from "drizzle-orm";
import type { AnyPgColumn, PgTable } from "drizzle-orm/pg-core";
import type { Db } from "@/lib/db/client";
import { apiKeys, developerAccounts, idempotencyKeys, oauthConfigs, oauthSignins, ownerKeys, playerSessions, playerTokenKeys, policyRules, triggers, webhookSettings } from "@/lib/db/schema";
import { signingSecretAad, webhookSecretOwner } from "@/lib/deliveries/signing";
import { signinAad } from "@/lib/iam/google-signin";
import { oauthConfigAad } from "@/lib/iam/provider-config";
import { sessionSecretAad } from "@/lib/iam/sessions";
import { tokenKeyAad } from "@/lib/iam/tokens";
import { idempotencyAad } from "@/lib/http/idempotency";
import { developerKeyAad } from "@/lib/developer-accounts/service";
import { ownerKeyAad } from "@/lib/keys/custodial";
import { decrypt, encrypt } from "@/lib/keys/encryption";
import type { Keyring } from "@/lib/keys/master";
import { openSecretKey, secretKeyAad } from "@/lib/projects/sealed-keys";

// A command above the domains (`keys rotate-master` in cli/keys.ts): it names every domain's sealed column and
// how each forms its AAD, so it lives outside lib/keys, which the domains import to seal.

const secretKeyRow = (row: Record<string, string>) => ({ id: row.id!, projectId: row.projectId!, livemode: Boolean(row.livemode) });

/** A column of secrets sealed with `encrypt`, and how each row's AAD is formed where it is sealed. */
interface SealedColumn {
  name: string;
  table: PgTable;
  /** A unique, ordered key of the rows (an expression where the primary key has two columns). */
  id: AnyPgColumn | SQL;
  column: AnyPgColumn;
  /** The column's property name in the drizzle table, for the update. */
  key: string;
  fields: Record<string, AnyPgColumn>;
  aad: (row: Record<string, string>) => string;
  /** How a stored value opens, where it is not always `decrypt` under `aad` (an older format still accepted). */
  open?: (sealed: string, row: Record<string, string>, ring: Keyring) => string;
}

/** Every encrypted column: a new one must be listed here, or a rotation would leave it behind. */
export const sealedColumns: SealedColumn[] = [
  {
    name: "owner_keys.encrypted_private_key",
    table: ownerKeys,
    id: ownerKeys.id,
    column: ownerKeys.encryptedPrivateKey,
    key: "encryptedPrivateKey",
    fields: { projectId: ownerKeys.projectId, address: ownerKeys.address },
    aad: (row) => ownerKeyAad({ projectId: row.projectId!, address: row.address! }),
  },
  {
    name: "developer_accounts.encrypted_private_key",
    table: developerAccounts,
    id: developerAccounts.id,
    column: developerAccounts.encryptedPrivateKey,
    key: "encryptedPrivateKey",
    fields: { projectId: developerAccounts.projectId, ownerAddress: developerAccounts.ownerAddress },
    aad: (row) => developerKeyAad(row.projectId!, row.ownerAddress!),
  },
  {
    name: "api_keys.encrypted_secret",
    table: apiKeys,
    id: apiKeys.id,
    column: apiKeys.encryptedSecret,
    key: "encryptedSecret",
    fields: { projectId: apiKeys.projectId, livemode: apiKeys.livemode },
    // As lib/projects/sealed-keys.ts seals secret keys; those marked as sealed before the binding are resealed bound.
    aad: (row) => secretKeyAad(secretKeyRow(row)),
    open: (sealed, row, ring) => openSecretKey(sealed, secretKeyRow(row), ring),
  },
  {
    name: "webhook_settings.encrypted_secret",
    table: webhookSettings,
    id: sql`(${webhookSettings.projectId} || ':' || ${webhookSettings.livemode}::text)`,
    column: webhookSettings.encryptedSecret,
    key: "encryptedSecret",
    fields: { projectId: webhookSettings.projectId, livemode: webhookSettings.livemode },
    aad: (row) => signingSecretAad(webhookSecretOwner({ projectId: row.projectId!, livemode: Boolean(row.livemode) })),
  },
  {
    name: "triggers.encrypted_secret",
    table: triggers,
    id: triggers.id,
    column: triggers.encryptedSecret,
    key: "encryptedSecret",
    fields: {},
    aad: (row) => signingSecretAad(row.id!),
  },
  {
    name: "policy_rules.encrypted_secret",
    table: policyRules,
    id: policyRules.id,
    column: policyRules.encryptedSecret,
    key: "encryptedSecret",
    fields: {},
    // An approval webhook's signing secret, sealed to its rule as lib/policies/rules.ts seals it.
    aad: (row) => signingSecretAad(row.id!),
  },
  {
    name: "oauth_configs.encrypted_secret",
    table: oauthConfigs,
    id: oauthConfigs.id,
    column: oauthConfigs.encryptedSecret,
    key: "encryptedSecret",
    fields: {},
    aad: (row) => oauthConfigAad(row.id!),
  },
  {
    name: "player_token_keys.encrypted_private_jwk",
    table: playerTokenKeys,
    id: playerTokenKeys.id,
    column: playerTokenKeys.encryptedPrivateJwk,
    key: "encryptedPrivateJwk",
    fields: {},
    aad: (row) => tokenKeyAad(row.id!),
  },
  {
    name: "player_sessions.encrypted_secret",
    table: playerSessions,
    id: playerSessions.id,
    column: playerSessions.encryptedSecret,
    key: "encryptedSecret",
    fields: {},
    aad: (row) => sessionSecretAad(row.id!),
  },
  {
    name: "oauth_signins.encrypted_verifier",
    table: oauthSignins,
    id: oauthSignins.id,
    column: oauthSignins.encryptedVerifier,
    key: "encryptedVerifier",
    fields: {},
    aad: (row) => signinAad(row.id!),
  },
  {
    name: "oauth_signins.encrypted_result",
    table: oauthSignins,
    id: oauthSignins.id,
    column: oauthSignins.encryptedResult,
    key: "encryptedResult",
    fields: {},
    aad: (row) => signinAad(row.id!),
  },
  {
    name: "idempotency_keys.sealed_response",
    table: idempotencyKeys,
    id: sql`(${idempotencyKeys.projectId} || ':' || ${idempotencyKeys.livemode}::text || ':' || ${idempotencyKeys.credential} || ':' || ${idempotencyKeys.key})`,
    column: idempotencyKeys.sealedResponse,
    key: "sealedResponse",
    fields: { projectId: idempotencyKeys.projectId, livemode: idempotencyKeys.livemode, credential: idempotencyKeys.credential, key: idempotencyKeys.key },
    aad: (row) => idempotencyAad({ projectId: row.projectId!, livemode: row.livemode!, credential: row.credential!, key: row.key! }),
  },
];

export interface RotationReport {
  column: string;
  reencrypted: number;
}

/**
 * Re-encrypts every secret not yet under the keyring's current master key, in batches, each
 * batch in its own transaction. Running servers keep working meanwhile: they hold the same
 * keyring, so they read both forms and seal new secrets under the current key; each row is
 * swapped only if it still holds what was read. Stops at the first secret no configured key
 * opens, naming it. Running it again resumes; once done it changes nothing.
 */
export async function reencryptAll(db: Db, ring: Keyring, batchSize = 200): Promise<RotationReport[]> {
  const reports: RotationReport[] = [];
  for (const spec of sealedColumns) {
    let reencrypted = 0;
    let after = "";
    const stale: SQL = notLike(spec.column, `v2.${ring.current.kid}.%`);
    // A column or an expression: drizzle compares and orders both alike.
    const key = spec.id as SQL;
    for (;;) {
      const rows = (await db
        .select({ id: spec.id, sealed: spec.column, ...spec.fields })
        .from(spec.table)
        .where(and(gt(key, after), isNotNull(spec.column), stale))
        .orderBy(asc(key))
        .limit(batchSize)) as Record<string, string>[];
      if (rows.length === 0) break;
      const resealed = rows.map((row) => {
        try {
          const plain = spec.open ? spec.open(row.sealed!, row, ring) : decrypt(row.sealed!, spec.aad(row), ring);
          return { id: row.id!, from: row.sealed!, to: encrypt(plain, spec.aad(row), ring) };
        } catch (err) {
          throw new Error(`${spec.name} of ${row.id}: ${(err as Error).message}`);
        }
      });
      await db.transaction(async (tx) => {
        for (const { id, from, to } of resealed) {
          const done = await tx
            .update(spec.table)
            .set({ [spec.key]: to })
            .where(and(eq(key, id), eq(spec.column, from)))
            .returning({ id: spec.id });
          reencrypted += done.length;
        }
      });
      after = rows[rows.length - 1]!.id!;
    }
    reports.push({ column: spec.name, reencrypted });
  }
  return reports;
}
