"use server";

import { revalidatePath } from "next/cache";
import { headers } from "next/headers";
import { eq } from "drizzle-orm";
import { getDb } from "@/lib/db/client";
import { projects } from "@/lib/db/schema";
import { acceptInvite, createInvite, invitePath, revokeInvite } from "@/lib/developers/invites";
import { signUpInput } from "@/lib/developers/schema";
import { ApiError, tooManyRequests } from "@/lib/errors";
import { requestOrigin } from "@/lib/http/origin";
import { claimProject } from "@/lib/projects/claims";
import { currentDeveloper, projectScope } from "./context";
import { linkAttempt } from "./link-attempts";
import type { FormState } from "./form-state";

const answer = async (run: () => Promise<FormState>): Promise<FormState> => {
  try {
    return await run();
  } catch (err) {
    if (err instanceof ApiError) return { error: { message: err.message, details: err.details } };
    throw err;
  }
};

const limitLinks = async () => {
  const attempt = await linkAttempt(await getDb());
  if (!attempt.allowed) throw tooManyRequests("Too many attempts from your address", attempt.retryAfter);
};

/** The signed-in developer takes the claim link's project into the organization they own. */
export async function claimProjectAction(token: string): Promise<FormState> {
  const developer = await currentDeveloper();
  return answer(async () => {
    await limitLinks();
    const project = await claimProject(await getDb(), String(token), developer.id);
    revalidatePath("/", "layout");
    return { ok: true, data: { projectId: project.id } };
  });
}

/** The signed-in developer joins the organization of an invitation made out to their email. */
export async function acceptInviteAction(token: string): Promise<FormState> {
  const developer = await currentDeveloper();
  return answer(async () => {
    await limitLinks();
    await acceptInvite(await getDb(), String(token), developer.id);
    revalidatePath("/", "layout");
    return { ok: true };
  });
}

const organizationOf = async (projectId: string) => {
  const [row] = await (await getDb()).select({ organizationId: projects.organizationId }).from(projects).where(eq(projects.id, projectId));
  return row!.organizationId!; // the scope check found the project in one of the developer's organizations
};

/** The owner invites an email into the project's organization; the link is answered (and shown) only now. */
export async function inviteAction(projectId: string, mode: string, form: FormData): Promise<FormState> {
  const scope = await projectScope(projectId, mode);
  return answer(async () => {
    const parsed = signUpInput.shape.email.safeParse(form.get("email") ?? "");
    if (!parsed.success) return { error: { message: "Enter a valid email address.", details: { email: { message: "Enter a valid email address." } } } };
    const { invite, token } = await createInvite(await getDb(), await organizationOf(scope.project.id), scope.developerId, parsed.data);
    const origin = requestOrigin(await headers()) ?? "";
    revalidatePath(`${scope.base}/team`);
    return { ok: true, data: { email: invite.email, link: `${origin}${invitePath(token)}` } };
  });
}

export async function revokeInviteAction(projectId: string, mode: string, inviteId: string): Promise<FormState> {
  const scope = await projectScope(projectId, mode);
  return answer(async () => {
    const revoked = await revokeInvite(await getDb(), await organizationOf(scope.project.id), scope.developerId, String(inviteId));
    revalidatePath(`${scope.base}/team`);
    return revoked ? { ok: true } : { error: { message: "No such open invitation." } };
  });
}
