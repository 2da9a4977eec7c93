import { and, eq, isNull } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { getDb } from "@/lib/db/client";
import { apiKeys } from "@/lib/db/schema";
import { encrypt } from "@/lib/keys/encryption";
import { LEGACY_SECRET_KEY_MARK, resealLegacySecretKeys } from "@/lib/projects/sealed-keys";
import { createSecretKey, currentSecretKey } from "@/lib/projects/service";
import { newProject } from "./helpers/api";

/** Issue 29.14: a secret key's ciphertext opens only in its own row (project, mode, key id). */

describe("secret-key ciphertexts are bound to their mode and key id", () => {
  const secretRows = async (projectId: string, livemode: boolean) =>
    (await getDb()).select().from(apiKeys).where(and(eq(apiKeys.projectId, projectId), eq(apiKeys.livemode, livemode), eq(apiKeys.kind, "secret"), isNull(apiKeys.revokedAt)));

  it("a ciphertext moved to another key's row, or to the other mode, does not decrypt", async () => {
    const db = await getDb();
    const project = await newProject();
    const test = { projectId: project.id, livemode: false };
    const live = { projectId: project.id, livemode: true };
    expect(await currentSecretKey(db, test)).toBe(project.keys.test.secret);
    const [testRow] = await secretRows(project.id, false);
    const [liveRow] = await secretRows(project.id, true);
    // The test key's ciphertext in the live key's row: live webhooks would be signed with the test key.
    await db.update(apiKeys).set({ encryptedSecret: testRow!.encryptedSecret }).where(eq(apiKeys.id, liveRow!.id));
    await expect(currentSecretKey(db, live)).rejects.toThrow(/does not authenticate/);
    // Another key of the same mode: the newest key's row given the first key's ciphertext.
    const second = await createSecretKey(db, test);
    expect(await currentSecretKey(db, test)).toBe(second);
    const newest = (await secretRows(project.id, false)).find((r) => r.id !== testRow!.id)!;
    await db.update(apiKeys).set({ encryptedSecret: testRow!.encryptedSecret }).where(eq(apiKeys.id, newest.id));
    await expect(currentSecretKey(db, test)).rejects.toThrow(/does not authenticate/);
  });

  it("keys sealed before the binding (marked by the migration) still decrypt, and are resealed bound", async () => {
    const db = await getDb();
    const project = await newProject();
    const test = { projectId: project.id, livemode: false };
    const [row] = await secretRows(project.id, false);
    // What a running install holds after upgrading: sealed with the project id alone, marked by the migration.
    await db.update(apiKeys).set({ encryptedSecret: `${LEGACY_SECRET_KEY_MARK}${encrypt(project.keys.test.secret, project.id)}` }).where(eq(apiKeys.id, row!.id));
    expect(await currentSecretKey(db, test)).toBe(project.keys.test.secret);
    expect(await resealLegacySecretKeys(db)).toBeGreaterThanOrEqual(1);
    const [after] = await secretRows(project.id, false);
    expect(after!.encryptedSecret).toMatch(/^v2\./);
    expect(await currentSecretKey(db, test)).toBe(project.keys.test.secret);
    expect(await resealLegacySecretKeys(db)).toBe(0);
    // A master-key rotation reseals marked ones bound too: test/key-rotation.test.ts (it rewrites every row, so it has a database of its own).
    // An unmarked ciphertext sealed the old way is not accepted: the mark is what the migration gave existing rows.
    await db.update(apiKeys).set({ encryptedSecret: encrypt(project.keys.test.secret, project.id) }).where(eq(apiKeys.id, row!.id));
    await expect(currentSecretKey(db, test)).rejects.toThrow(/does not authenticate/);
  });
});
