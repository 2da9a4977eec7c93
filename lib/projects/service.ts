import crypto from "node:crypto";
import { and, asc, count, desc, eq, isNull } from "drizzle-orm";
import type { Queryable, Tx } from "@/lib/db/client";
import { InvalidatedCache } from "@/lib/db/invalidation";
import { apiKeys, projects } from "@/lib/db/schema";
import { inScope } from "@/lib/db/scope";
import { badRequest } from "@/lib/errors";
import { newId } from "@/lib/ids";
import { sha256 } from "@/lib/keys/encryption";
import { openSecretKey, sealSecretKey } from "./sealed-keys";
import { modeOf, type Mode, type ProjectContext } from "@/lib/tenant";

export interface ModeKeys {
  publishable: string;
  secret: string;
}
export interface ProjectWithKeys {
  id: string;
  name: string;
  keys: Record<Mode, ModeKeys>;
}

const randomKey = (prefix: string) => `${prefix}${crypto.randomUUID()}`;
const hintOf = (key: string) => `${key.slice(0, 8)}…${key.slice(-4)}`;

/** Active secret keys a mode may have at once: enough to rotate servers one at a time, not a pile of forgotten credentials. */
export const MAX_SECRET_KEYS_PER_MODE = 10;

/** Another secret key for the mode, beside the current ones (to rotate a server at a time); shown only here. */
export async function createSecretKey(db: Queryable, ctx: ProjectContext): Promise<string> {
  return db.transaction(async (tx) => {
    // The project row's lock serializes concurrent creations, so the cap holds.
    await tx.select({ id: projects.id }).from(projects).where(eq(projects.id, ctx.projectId)).for("update");
    const [{ active }] = (await tx
      .select({ active: count() })
      .from(apiKeys)
      .where(inScope(apiKeys, ctx, eq(apiKeys.kind, "secret"), isNull(apiKeys.revokedAt)))) as [{ active: number }];
    if (Number(active) >= MAX_SECRET_KEYS_PER_MODE) {
      throw badRequest(`This mode already has ${MAX_SECRET_KEYS_PER_MODE} active secret keys, the most it may have: revoke one you no longer use first.`);
    }
    const secret = randomKey(`sk_${modeOf(ctx.livemode)}_`);
    const id = newId("apiKey");
    await tx.insert(apiKeys).values({
      id,
      projectId: ctx.projectId,
      livemode: ctx.livemode,
      kind: "secret",
      hash: sha256(secret),
      hint: hintOf(secret),
      encryptedSecret: sealSecretKey(secret, { id, ...ctx }),
    });
    return secret;
  });
}

/** Revokes one secret key of the mode, unless it is the last one (webhooks are signed with it). */
export async function revokeSecretKey(db: Queryable, ctx: ProjectContext, keyId: string): Promise<boolean> {
  // This process forgets its cached keys as soon as the change commits; the others on its notification.
  return forgettingKeys(db, async (tx) => {
    const live = inScope(apiKeys, ctx, eq(apiKeys.kind, "secret"), isNull(apiKeys.revokedAt));
    const active = await tx.select({ id: apiKeys.id }).from(apiKeys).where(live).for("update");
    if (active.length < 2 || !active.some((k) => k.id === keyId)) return false;
    await tx.update(apiKeys).set({ revokedAt: new Date() }).where(and(live, eq(apiKeys.id, keyId)));
    return true;
  });
}

async function issueKeys(db: Queryable, projectId: string, mode: Mode): Promise<ModeKeys> {
  const livemode = mode === "live";
  const publishable = randomKey(`pk_${mode}_`);
  const secret = randomKey(`sk_${mode}_`);
  const secretId = newId("apiKey");
  await db.insert(apiKeys).values([
    {
      id: newId("apiKey"),
      projectId,
      livemode,
      kind: "publishable",
      hash: sha256(publishable),
      hint: hintOf(publishable),
      publishableKey: publishable,
    },
    {
      id: secretId,
      projectId,
      livemode,
      kind: "secret",
      hash: sha256(secret),
      hint: hintOf(secret),
      encryptedSecret: sealSecretKey(secret, { id: secretId, projectId, livemode }),
    },
  ]);
  return { publishable, secret };
}

export async function createProject(db: Queryable, name: string, organizationId: string | null = null): Promise<ProjectWithKeys> {
  return db.transaction(async (tx) => {
    const id = newId("project");
    await tx.insert(projects).values({ id, name, organizationId });
    return { id, name, keys: { test: await issueKeys(tx, id, "test"), live: await issueKeys(tx, id, "live") } };
  });
}

export async function listProjects(db: Queryable) {
  const rows = await db.select().from(projects).orderBy(asc(projects.createdAt));
  const keys = await db
    .select({ projectId: apiKeys.projectId, livemode: apiKeys.livemode, kind: apiKeys.kind, hint: apiKeys.hint, publishableKey: apiKeys.publishableKey })
    .from(apiKeys)
    .where(isNull(apiKeys.revokedAt));
  return rows.map((p) => ({
    id: p.id,
    name: p.name,
    createdAt: p.createdAt,
    keys: keys
      .filter((k) => k.projectId === p.id)
      .map((k) => ({ mode: modeOf(k.livemode), kind: k.kind, key: k.publishableKey ?? k.hint })),
  }));
}

/** Revokes the mode's current keys at once and issues new ones; the new secret is shown only here. */
export async function rollKeys(db: Queryable, projectId: string, mode: Mode): Promise<ModeKeys | null> {
  return forgettingKeys(db, async (tx) => {
    const [project] = await tx.select({ id: projects.id }).from(projects).where(eq(projects.id, projectId)).for("update");
    if (!project) return null;
    await tx
      .update(apiKeys)
      .set({ revokedAt: new Date() })
      .where(inScope(apiKeys, { projectId, livemode: mode === "live" }, isNull(apiKeys.revokedAt)));
    return issueKeys(tx, projectId, mode);
  });
}

export interface AuthenticatedKey extends ProjectContext {
  keyId: string;
  kind: "publishable" | "secret";
}

/** Current keys by hash, for every request's authentication; a roll or revocation drops them in every instance. */
const currentKeys = new InvalidatedCache<AuthenticatedKey>("api_keys", 30_000);

async function forgettingKeys<T>(db: Queryable, change: (tx: Tx) => Promise<T>): Promise<T> {
  try {
    return await db.transaction(change);
  } finally {
    currentKeys.clear();
  }
}

export async function findKey(db: Queryable, rawKey: string): Promise<AuthenticatedKey | null> {
  const hash = sha256(rawKey);
  return currentKeys.get(hash, async () => {
    const [row] = await db
      .select({ keyId: apiKeys.id, projectId: apiKeys.projectId, livemode: apiKeys.livemode, kind: apiKeys.kind })
      .from(apiKeys)
      .where(and(eq(apiKeys.hash, hash), isNull(apiKeys.revokedAt)))
      .limit(1);
    return row ?? null;
  });
}

/** A current publishable key (a secret key given where a publishable one is named is not one). */
export async function findPublishableKey(db: Queryable, publishableKey: string): Promise<AuthenticatedKey | null> {
  const key = await findKey(db, publishableKey);
  return key?.kind === "publishable" ? key : null;
}

/** The mode's current secret key in clear, for signing webhooks with it (never returned by the API). */
export async function currentSecretKey(db: Queryable, ctx: { projectId: string; livemode: boolean }): Promise<string | null> {
  const [row] = await db
    .select({ id: apiKeys.id, encryptedSecret: apiKeys.encryptedSecret })
    .from(apiKeys)
    .where(inScope(apiKeys, ctx, eq(apiKeys.kind, "secret"), isNull(apiKeys.revokedAt)))
    .orderBy(desc(apiKeys.createdAt))
    .limit(1);
  return row?.encryptedSecret ? openSecretKey(row.encryptedSecret, { id: row.id, projectId: ctx.projectId, livemode: ctx.livemode }) : null;
}

/** The mode's active keys as the dashboard shows them: publishable in full, secret only by its hint. */
export async function activeKeys(db: Queryable, ctx: ProjectContext) {
  return db
    .select({ id: apiKeys.id, kind: apiKeys.kind, hint: apiKeys.hint, publishableKey: apiKeys.publishableKey, createdAt: apiKeys.createdAt })
    .from(apiKeys)
    .where(inScope(apiKeys, ctx, isNull(apiKeys.revokedAt)))
    .orderBy(asc(apiKeys.kind), desc(apiKeys.createdAt));
}
