import { eq } from "drizzle-orm";
import type { Address, Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import type { Queryable } from "@/lib/db/client";
import { ownerKeys } from "@/lib/db/schema";
import { newId } from "@/lib/ids";
import type { ProjectContext } from "@/lib/tenant";
import { decrypt, encrypt } from "./encryption";
import { keyAccount, type KeyAccount } from "./key-account";

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

/**
 * Decrypts the key only for the signer handed back; callers use it to sign and drop it. The decryption authenticates
 * the row's address (ownerKeyAad), so the key is not derived again (keyAccount).
 */
export function ownerSigner(row: OwnerKeyRow): KeyAccount {
  return keyAccount(decrypt(row.encryptedPrivateKey, ownerKeyAad(row)) as Hex, row.address as Address);
}
