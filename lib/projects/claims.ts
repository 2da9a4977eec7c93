import crypto from "node:crypto";
import { and, asc, eq, isNull } from "drizzle-orm";
import type { Queryable } from "@/lib/db/client";
import { organizationMembers, projectClaims, projects } from "@/lib/db/schema";
import { badRequest, forbidden } from "@/lib/errors";
import { sha256 } from "@/lib/keys/encryption";

const invalidClaim = () => badRequest("This claim link is not valid: it was used already, replaced by a newer one, or its project has an owner.");

/** A base64url token: 256 bits, only its hash kept. */
export const newToken = () => crypto.randomBytes(32).toString("base64url");

/** The dashboard link that claims a project with this token. */
export const claimUrl = (base: string, token: string) => `${base.replace(/\/+$/, "")}/claim/${token}`;

/**
 * A new one-time claim token for a project no organization owns (the one made at first start,
 * or one made with the CLI); it replaces any earlier one. Without a project id: the oldest such project.
 */
export async function issueClaimToken(db: Queryable, projectId?: string): Promise<{ project: { id: string; name: string }; token: string }> {
  return db.transaction(async (tx) => {
    const [project] = await tx
      .select({ id: projects.id, name: projects.name, organizationId: projects.organizationId })
      .from(projects)
      .where(projectId ? eq(projects.id, projectId) : isNull(projects.organizationId))
      .orderBy(asc(projects.createdAt))
      .limit(1)
      .for("update");
    if (!project) throw badRequest(projectId ? `No such project: ${projectId}` : "Every project already belongs to an organization.");
    if (project.organizationId) throw badRequest(`Project ${project.id} already belongs to an organization; its members can invite others from the dashboard.`);
    const token = newToken();
    await tx
      .insert(projectClaims)
      .values({ projectId: project.id, tokenHash: sha256(token) })
      .onConflictDoUpdate({ target: projectClaims.projectId, set: { tokenHash: sha256(token), createdAt: new Date() } });
    return { project: { id: project.id, name: project.name }, token };
  });
}

/** The project a claim token would hand over, for the claim page; null when the link is no good. */
export async function claimableProject(db: Queryable, token: string): Promise<{ id: string; name: string } | null> {
  const [row] = await db
    .select({ id: projects.id, name: projects.name })
    .from(projectClaims)
    .innerJoin(projects, eq(projects.id, projectClaims.projectId))
    .where(and(eq(projectClaims.tokenHash, sha256(token)), isNull(projects.organizationId)));
  return row ?? null;
}

/** Hands the token's project to the organization and burns the token (in the caller's transaction when there is one). */
export async function claimProjectInto(db: Queryable, token: string, organizationId: string): Promise<{ id: string; name: string }> {
  return db.transaction(async (tx) => {
    const [claim] = await tx.delete(projectClaims).where(eq(projectClaims.tokenHash, sha256(token))).returning({ projectId: projectClaims.projectId });
    if (!claim) throw invalidClaim();
    const [project] = await tx
      .update(projects)
      .set({ organizationId })
      .where(and(eq(projects.id, claim.projectId), isNull(projects.organizationId)))
      .returning({ id: projects.id, name: projects.name });
    if (!project) throw invalidClaim();
    return project;
  });
}

/** A signed-in developer claims the project into the organization they own (their first one). */
export async function claimProject(db: Queryable, token: string, developerId: string) {
  const [owned] = await db
    .select({ organizationId: organizationMembers.organizationId })
    .from(organizationMembers)
    .where(and(eq(organizationMembers.developerId, developerId), eq(organizationMembers.role, "owner")))
    .orderBy(asc(organizationMembers.createdAt))
    .limit(1);
  if (!owned) throw forbidden("Only the owner of an organization can claim a project into it.");
  return claimProjectInto(db, token, owned.organizationId);
}
