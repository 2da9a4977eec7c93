import { asc, eq, sql } from "drizzle-orm";
import { recoverMessageAddress, isAddressEqual, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { keyAccount, type KeyAccount } from "@/lib/keys/key-account";
import { accountSalt, counterfactualAddress } from "@/lib/chain/accounts";
import type { Queryable } from "@/lib/db/client";
import { developerAccounts } from "@/lib/db/schema";
import { inScope } from "@/lib/db/scope";
import { badRequest, notFound } from "@/lib/errors";
import { listPage } from "@/lib/http/list";
import { newId } from "@/lib/ids";
import { decrypt, encrypt } from "@/lib/keys/encryption";
import type { ProjectContext } from "@/lib/tenant";
import type { CreateDeveloperAccountInput, ListDeveloperAccountsInput } from "./schema";

export type DeveloperAccountRow = typeof developerAccounts.$inferSelect;

// The ciphertext is bound to its project and owner address, as players' keys are.
export const developerKeyAad = (projectId: string, ownerAddress: string) => `developer-account:${projectId}:${ownerAddress}`;

/** What the owner of an external address signs (personal_sign) to add it as a developer account. */
export const ownershipMessage = (ctx: ProjectContext, address: Address) =>
  `Add ${address} as a developer account of project ${ctx.projectId} (${ctx.livemode ? "live" : "test"} mode).`;

async function insertCustodial(db: Queryable, ctx: ProjectContext, name: string | null): Promise<DeveloperAccountRow> {
  const id = newId("developerAccount");
  const privateKey = generatePrivateKey();
  const ownerAddress = privateKeyToAccount(privateKey).address;
  // The salt comes from the id, so the account has one address on every chain.
  const salt = accountSalt(id);
  const [row] = await db
    .insert(developerAccounts)
    .values({
      id,
      ...ctx,
      name,
      custodial: true,
      address: counterfactualAddress(ownerAddress, salt),
      ownerAddress,
      salt,
      encryptedPrivateKey: encrypt(privateKey, developerKeyAad(ctx.projectId, ownerAddress)),
    })
    .returning();
  return row!;
}

/**
 * Without an address: a custodial smart account the service signs for. With one: the caller's
 * wallet, added only with a signature of `ownershipMessage` by that address.
 */
export async function createDeveloperAccount(db: Queryable, ctx: ProjectContext, input: CreateDeveloperAccountInput): Promise<DeveloperAccountRow> {
  if (input.address === undefined) {
    if (input.signature !== undefined) {
      throw badRequest("signature proves control of an address; send it with address, or omit both to create a custodial account.", {
        signature: { message: "needs address" },
      });
    }
    return insertCustodial(db, ctx, input.name ?? null);
  }
  if (input.signature === undefined) {
    throw badRequest(
      "Adding an external address needs its owner's signature: sign the message from GET /v1/settings/developer_accounts/message_to_sign?address=... (personal_sign) and send it as signature.",
      { signature: { message: "required with address" } },
    );
  }
  const signer = await recoverMessageAddress({ message: ownershipMessage(ctx, input.address), signature: input.signature as Hex }).catch(() => null);
  if (!signer || !isAddressEqual(signer, input.address)) {
    throw badRequest(`The signature is not ${input.address}'s signature of the ownership message${signer ? ` (it was signed by ${signer})` : ""}.`, {
      signature: { value: input.signature, message: "does not prove control of address" },
    });
  }
  const [row] = await db
    .insert(developerAccounts)
    .values({ id: newId("developerAccount"), ...ctx, name: input.name ?? null, custodial: false, address: input.address })
    .returning();
  return row!;
}

/** Deleted accounts stay readable by id (with `deleted: true`). */
export async function getDeveloperAccount(db: Queryable, ctx: ProjectContext, id: string): Promise<DeveloperAccountRow> {
  const [row] = await db.select().from(developerAccounts).where(inScope(developerAccounts, ctx, eq(developerAccounts.id, id)));
  if (!row) throw notFound("developer account", id);
  return row;
}

export async function listDeveloperAccounts(db: Queryable, ctx: ProjectContext, input: ListDeveloperAccountsInput) {
  return listPage(db, developerAccounts, inScope(developerAccounts, ctx, eq(developerAccounts.deleted, input.deleted ?? false)), input);
}

export async function renameDeveloperAccount(db: Queryable, ctx: ProjectContext, id: string, name: string): Promise<DeveloperAccountRow> {
  const [row] = await db
    .update(developerAccounts)
    .set({ name, updatedAt: sql`now()` })
    .where(inScope(developerAccounts, ctx, eq(developerAccounts.id, id)))
    .returning();
  if (!row) throw notFound("developer account", id);
  return row;
}

export async function deleteDeveloperAccount(db: Queryable, ctx: ProjectContext, id: string) {
  const [row] = await db
    .update(developerAccounts)
    .set({ deleted: true, updatedAt: sql`now()` })
    .where(inScope(developerAccounts, ctx, eq(developerAccounts.id, id)))
    .returning({ id: developerAccounts.id });
  if (!row) throw notFound("developer account", id);
  return { id, object: "developerAccount" as const, deleted: true as const };
}

/**
 * The developer account that collects the tokens fixed_rate and charge_custom_tokens policies
 * charge: the project's oldest custodial one, created (as "Token collector") when there is none.
 * Serialized per project and mode so concurrent callers agree on one.
 */
export async function tokenCollector(db: Queryable, ctx: ProjectContext): Promise<DeveloperAccountRow> {
  return db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`collector:${ctx.projectId}:${ctx.livemode}`}))`);
    const [existing] = await tx
      .select()
      .from(developerAccounts)
      .where(inScope(developerAccounts, ctx, eq(developerAccounts.custodial, true), eq(developerAccounts.deleted, false)))
      .orderBy(asc(developerAccounts.createdAt), asc(developerAccounts.id))
      .limit(1);
    return existing ?? insertCustodial(tx, ctx, "Token collector");
  });
}

/** Decrypts a custodial developer account's owner key only for the signer handed back. */
export function developerSigner(row: DeveloperAccountRow): KeyAccount {
  if (!row.custodial || !row.encryptedPrivateKey || !row.ownerAddress) throw new Error(`developer account ${row.id} is not custodial`);
  // The decryption authenticates the owner address (developerKeyAad): the key is not derived again (keyAccount).
  return keyAccount(decrypt(row.encryptedPrivateKey, developerKeyAad(row.projectId, row.ownerAddress)) as Hex, row.ownerAddress as Address);
}
