import crypto from "node:crypto";
import { and, asc, eq, gt, isNull } from "drizzle-orm";
import type { Queryable } from "@/lib/db/client";
import { developers, organizationInvites, organizationMembers, organizations } from "@/lib/db/schema";
import { badRequest, forbidden } from "@/lib/errors";
import { sha256 } from "@/lib/keys/encryption";
import { newToken } from "@/lib/projects/claims";

export const INVITE_TTL_MS = 7 * 24 * 3600_000;

type InviteRow = typeof organizationInvites.$inferSelect;

const invalidInvite = () => badRequest("This invitation is not valid: it was used already, revoked, or has expired.");

/** The link's path: the dashboard page that accepts the invitation. */
export const invitePath = (token: string) => `/invite/${token}`;

/** The developer's role in the organization, or null when not a member. */
export async function roleIn(db: Queryable, organizationId: string, developerId: string) {
  const [row] = await db
    .select({ role: organizationMembers.role })
    .from(organizationMembers)
    .where(and(eq(organizationMembers.organizationId, organizationId), eq(organizationMembers.developerId, developerId)));
  return row?.role ?? null;
}

/**
 * An invitation for one email into the organization, made by its owner: a one-time link (only
 * its hash kept) that expires after 7 days. Inviting the same email again replaces the earlier link.
 */
export async function createInvite(db: Queryable, organizationId: string, invitedBy: string, email: string, now = new Date()) {
  return db.transaction(async (tx) => {
    if ((await roleIn(tx, organizationId, invitedBy)) !== "owner") throw forbidden("Only the organization's owner can invite developers.");
    const [member] = await tx
      .select({ id: developers.id })
      .from(organizationMembers)
      .innerJoin(developers, eq(developers.id, organizationMembers.developerId))
      .where(and(eq(organizationMembers.organizationId, organizationId), eq(developers.email, email)));
    if (member) throw badRequest(`${email} is already a member of this organization.`);
    await tx
      .delete(organizationInvites)
      .where(and(eq(organizationInvites.organizationId, organizationId), eq(organizationInvites.email, email), isNull(organizationInvites.acceptedAt)));
    const token = newToken();
    const [invite] = await tx
      .insert(organizationInvites)
      .values({ id: `inv_${crypto.randomUUID()}`, organizationId, email, tokenHash: sha256(token), invitedBy, expiresAt: new Date(now.getTime() + INVITE_TTL_MS) })
      .returning();
    return { invite: invite!, token };
  });
}

/** The invitation behind a link, if it can still be accepted (locked until the caller's transaction ends). */
export async function openInvite(db: Queryable, token: string, now = new Date()): Promise<InviteRow> {
  const [invite] = await db
    .select()
    .from(organizationInvites)
    .where(and(eq(organizationInvites.tokenHash, sha256(token)), isNull(organizationInvites.acceptedAt), gt(organizationInvites.expiresAt, now)))
    .for("update");
  if (!invite) throw invalidInvite();
  return invite;
}

/** Makes the developer a member and burns the invitation. */
export async function acceptInviteIn(db: Queryable, invite: InviteRow, developerId: string) {
  await db.insert(organizationMembers).values({ organizationId: invite.organizationId, developerId, role: "member" }).onConflictDoNothing();
  await db.update(organizationInvites).set({ acceptedAt: new Date() }).where(eq(organizationInvites.id, invite.id));
}

/** A signed-in developer accepts an invitation made out to their email. */
export async function acceptInvite(db: Queryable, token: string, developerId: string) {
  return db.transaction(async (tx) => {
    const invite = await openInvite(tx, token);
    const [developer] = await tx.select({ email: developers.email }).from(developers).where(eq(developers.id, developerId));
    if (developer?.email !== invite.email) throw badRequest(`This invitation is for ${invite.email}: sign in with that email to accept it.`);
    await acceptInviteIn(tx, invite, developerId);
    return { organizationId: invite.organizationId };
  });
}

/** What the invitation page shows before accepting: null when the link is no good. */
export async function describeInvite(db: Queryable, token: string, now = new Date()) {
  const [row] = await db
    .select({ email: organizationInvites.email, organizationName: organizations.name, expiresAt: organizationInvites.expiresAt })
    .from(organizationInvites)
    .innerJoin(organizations, eq(organizations.id, organizationInvites.organizationId))
    .where(and(eq(organizationInvites.tokenHash, sha256(token)), isNull(organizationInvites.acceptedAt), gt(organizationInvites.expiresAt, now)));
  return row ?? null;
}

/** The organization's members and its invitations still open, for the team page. */
export async function team(db: Queryable, organizationId: string, now = new Date()) {
  const members = await db
    .select({ id: developers.id, email: developers.email, name: developers.name, role: organizationMembers.role })
    .from(organizationMembers)
    .innerJoin(developers, eq(developers.id, organizationMembers.developerId))
    .where(eq(organizationMembers.organizationId, organizationId))
    .orderBy(asc(organizationMembers.createdAt));
  const invites = await db
    .select({ id: organizationInvites.id, email: organizationInvites.email, expiresAt: organizationInvites.expiresAt, createdAt: organizationInvites.createdAt })
    .from(organizationInvites)
    .where(and(eq(organizationInvites.organizationId, organizationId), isNull(organizationInvites.acceptedAt), gt(organizationInvites.expiresAt, now)))
    .orderBy(asc(organizationInvites.createdAt));
  return { members, invites };
}

/** The owner withdraws an open invitation; its link stops working. */
export async function revokeInvite(db: Queryable, organizationId: string, developerId: string, inviteId: string) {
  if ((await roleIn(db, organizationId, developerId)) !== "owner") throw forbidden("Only the organization's owner can revoke invitations.");
  const deleted = await db
    .delete(organizationInvites)
    .where(and(eq(organizationInvites.id, inviteId), eq(organizationInvites.organizationId, organizationId), isNull(organizationInvites.acceptedAt)))
    .returning({ id: organizationInvites.id });
  return deleted.length > 0;
}
