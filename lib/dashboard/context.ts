import { getServerSession } from "next-auth";
import { notFound, redirect } from "next/navigation";
import { cache } from "react";
import { getDb } from "@/lib/db/client";
import { getDeveloper, projectsOf } from "@/lib/developers/service";
import type { Mode, ProjectContext } from "@/lib/tenant";
import { authOptions } from "./auth";

/** The developer the session cookie names, or null when signed out (or since removed). */
export async function sessionDeveloper() {
  const session = (await getServerSession(authOptions())) as { developerId?: string } | null;
  return session?.developerId ? await getDeveloper(await getDb(), session.developerId) : null;
}

/** The signed-in developer, or a redirect to the sign-in page. */
export const currentDeveloper = cache(async () => {
  const developer = await sessionDeveloper();
  if (!developer) redirect("/login");
  return developer;
});

export interface ProjectScope {
  developerId: string;
  project: { id: string; name: string; organizationName: string };
  projects: { id: string; name: string }[];
  mode: Mode;
  ctx: ProjectContext;
  /** The URL prefix of this project and mode's pages. */
  base: string;
}

/**
 * What every project page and action starts with: the developer must belong to the project's
 * organization. Anything else (another developer's id typed into the URL) is a plain 404, so
 * the page does not even confirm that the project exists.
 */
export const projectScope = cache(async (projectId: string, mode: string): Promise<ProjectScope> => {
  if (mode !== "test" && mode !== "live") notFound();
  const developer = await currentDeveloper();
  return (await developerProjectScope(developer.id, projectId, mode)) ?? notFound();
});

/**
 * The scope check itself, for callers that answer other than with a page (route handlers
 * answer JSON): null when the mode is neither test nor live or the project is not the developer's.
 */
export async function developerProjectScope(developerId: string, projectId: string, mode: string): Promise<ProjectScope | null> {
  if (mode !== "test" && mode !== "live") return null;
  const projects = await projectsOf(await getDb(), developerId);
  const project = projects.find((p) => p.id === projectId);
  if (!project) return null;
  return {
    developerId,
    project: { id: project.id, name: project.name, organizationName: project.organizationName },
    projects: projects.map((p) => ({ id: p.id, name: p.name })),
    mode,
    ctx: { projectId: project.id, livemode: mode === "live" },
    base: `/projects/${project.id}/${mode}`,
  };
}

export type ScopeParams = Promise<{ projectId: string; mode: string }>;
export const scopeOf = async (params: ScopeParams) => {
  const { projectId, mode } = await params;
  return projectScope(projectId, mode);
};
