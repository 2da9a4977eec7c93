import { and, asc, eq, sql } from "drizzle-orm";
import type { Queryable } from "@/lib/db/client";
import { developerIdentities, developers, organizationMembers, organizations, projects } from "@/lib/db/schema";
import { badRequest, conflict, forbidden } from "@/lib/errors";
import { newId } from "@/lib/ids";
import { claimProjectInto } from "@/lib/projects/claims";
import { createProject } from "@/lib/projects/service";
import { acceptInviteIn, openInvite } from "./invites";
import { decoyHash, hashPassword, verifyPassword } from "@/lib/keys/password";
import type { SignUpInput } from "./schema";
import { envText } from "@/lib/config";
import { lockout } from "@/lib/lockout";

export type DeveloperRow = typeof developers.$inferSelect;

/** Guessing developers' passwords: 10 wrong ones within 15 minutes lock an email for 15 minutes (on every instance). */
export const signInLockout = lockout("dashboard-sign-in");

// Serializes sign-ups, so two at once with one email get a clear 409 rather than a unique-index error.
const SIGN_UP_LOCK = 7_253_101;

/**
 * Sign-up is closed unless `SIGNUP=open` (issue 29.14: a shared install must not let anyone in by
 * default): then only an invitation, or the claim link of the first start's project, signs someone
 * up, so `npm start` and that link still make the first developer. Any other value keeps it closed.
 */
export const signUpClosed = () => envText("SIGNUP")?.toLowerCase() !== "open";

/** How a developer came to sign up: through an invitation into an organization, or a project's claim link. */
export interface SignUpVia {
  invite?: string;
  claim?: string;
}

/**
 * Creates the developer with their organization and its first project, or, through an invitation,
 * as a member of the inviting organization. Signing up claims no project by itself: the one made
 * at first start goes to whoever opens its claim link (printed only to whoever started the server).
 */
async function createDeveloper(db: Queryable, input: { email: string; name?: string | null; passwordHash: string | null; organization?: string }, via: SignUpVia = {}) {
  return db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(${SIGN_UP_LOCK})`);
    const invite = via.invite ? await openInvite(tx, via.invite) : null;
    if (invite && invite.email !== input.email) throw badRequest(`This invitation is for ${invite.email}: sign up with that email.`);
    if (!invite && !via.claim && signUpClosed()) {
      throw forbidden("Sign-up on this server is by invitation only: ask an organization owner for an invitation link.");
    }
    const [taken] = await tx.select({ id: developers.id }).from(developers).where(eq(developers.email, input.email));
    if (taken) throw conflict("A developer with this email already exists. Sign in instead.");
    const developer = { id: newId("developer"), email: input.email, name: input.name || null, passwordHash: input.passwordHash };
    await tx.insert(developers).values(developer);
    if (invite) {
      await acceptInviteIn(tx, invite, developer.id);
      return developer;
    }
    const organizationId = newId("organization");
    await tx.insert(organizations).values({ id: organizationId, name: input.organization || `${input.name || input.email}'s organization` });
    await tx.insert(organizationMembers).values({ organizationId, developerId: developer.id, role: "owner" });
    if (via.claim) await claimProjectInto(tx, via.claim, organizationId);
    else await createProject(tx, "My first project", organizationId);
    return developer;
  });
}

export async function signUp(db: Queryable, input: SignUpInput, via: SignUpVia = {}) {
  return createDeveloper(db, { ...input, passwordHash: await hashPassword(input.password) }, via);
}

/** The developer whose password this is, or null; unknown emails cost as much time as wrong passwords. */
export async function checkCredentials(db: Queryable, email: string, password: string): Promise<DeveloperRow | null> {
  const [developer] = await db.select().from(developers).where(eq(developers.email, email));
  const ok = await verifyPassword(password, developer?.passwordHash ?? (await decoyHash()));
  return developer?.passwordHash && ok ? developer : null;
}

/**
 * The developer signed in through an OAuth provider: found by the provider's account id, or
 * created on first sign-in. An email that already belongs to another developer is not linked
 * silently (that would hand their dashboard to whoever controls the provider account).
 */
export async function oauthDeveloper(db: Queryable, identity: { provider: string; providerAccountId: string; email: string; name?: string | null }) {
  const [linked] = await db
    .select({ developer: developers })
    .from(developerIdentities)
    .innerJoin(developers, eq(developers.id, developerIdentities.developerId))
    .where(and(eq(developerIdentities.provider, identity.provider), eq(developerIdentities.providerAccountId, identity.providerAccountId)));
  if (linked) return linked.developer;
  const developer = await createDeveloper(db, { email: identity.email.toLowerCase(), name: identity.name, passwordHash: null });
  await db.insert(developerIdentities).values({ provider: identity.provider, providerAccountId: identity.providerAccountId, developerId: developer.id });
  return developer;
}

export async function getDeveloper(db: Queryable, id: string): Promise<DeveloperRow | null> {
  const [row] = await db.select().from(developers).where(eq(developers.id, id));
  return row ?? null;
}

export type DeveloperProject = { id: string; name: string; organizationId: string; organizationName: string };

/** The projects of every organization the developer belongs to: all the dashboard may show them. */
export async function projectsOf(db: Queryable, developerId: string): Promise<DeveloperProject[]> {
  return db
    .select({ id: projects.id, name: projects.name, organizationId: organizations.id, organizationName: organizations.name })
    .from(projects)
    .innerJoin(organizations, eq(organizations.id, projects.organizationId))
    .innerJoin(organizationMembers, and(eq(organizationMembers.organizationId, organizations.id), eq(organizationMembers.developerId, developerId)))
    .orderBy(asc(projects.createdAt));
}
