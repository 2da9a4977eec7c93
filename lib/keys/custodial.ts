import { eq } from "drizzle-orm";
import type { Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import type { Queryable } from "@/lib/db/client";
import { ownerKeys } from "@/lib/db/schema";
import { newId } from "@/lib/ids";
import type { ProjectContext } from "@/lib/projects/service";
import { decrypt, encrypt } from "./encryption";

export type OwnerKeyRow = typeof ownerKeys.$inferSelect;

// The ciphertext is bound to its project and address: a row's key cannot be swapped into another row.
export const ownerKeyAad = (row: Pick<OwnerKeyRow, "projectId" | "address">) => `owner-key:${row.projectId}:${row.address}`;

/** The player's custodial owner key, generated on first use (concurrent callers get the same key). */
export async function ownerKeyFor(db: Queryable, ctx: ProjectContext, playerId: string): Promise<OwnerKeyRow> {
  const [existing] = await db.select().from(ownerKeys).where(eq(ownerKeys.playerId, playerId));
  if (existing) return existing;
  const privateKey = generatePrivateKey();
  const address = privateKeyToAccount(privateKey).address;
  await db
    .insert(ownerKeys)
    .values({
      id: newId("ownerKey"),
      ...ctx,
      playerId,
      address,
      encryptedPrivateKey: encrypt(privateKey, ownerKeyAad({ projectId: ctx.projectId, address })),
    })
    .onConflictDoNothing({ target: ownerKeys.playerId });
  const [row] = await db.select().from(ownerKeys).where(eq(ownerKeys.playerId, playerId));
  return row!;
}

export async function findOwnerKey(db: Queryable, playerId: string): Promise<OwnerKeyRow | undefined> {
  const [row] = await db.select().from(ownerKeys).where(eq(ownerKeys.playerId, playerId));
  return row;
}

/** Decrypts the key only for the signer handed back; callers use it to sign and drop it. */
export function ownerSigner(row: OwnerKeyRow): PrivateKeyAccount {
  const account = privateKeyToAccount(decrypt(row.encryptedPrivateKey, ownerKeyAad(row)) as Hex);
  if (account.address !== row.address) throw new Error(`owner key ${row.id} does not match its address`);
  return account;
}
