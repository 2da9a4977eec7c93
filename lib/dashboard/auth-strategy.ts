import { challenges, missing, unauthorized } from "@/lib/errors";
import type { AuthStrategy } from "@/lib/http/principals";
import { developerProjectScope, sessionDeveloper } from "./context";

/** The dashboard's session cookie; the project and mode come from the path, and another organization's project is a 404. */
export const dashboardSession: AuthStrategy<{ kind: "developer"; developerId: string }> = {
  security: [],
  apiRequest: false,
  async authenticate(_db, { params }) {
    const developer = await sessionDeveloper();
    if (!developer) throw unauthorized("Sign in to the dashboard first.", undefined, challenges.dashboard);
    const scope = await developerProjectScope(developer.id, params.projectId ?? "", params.mode ?? "");
    if (!scope) throw missing(`No such project: '${params.projectId}' (${params.mode})`);
    return { principal: { kind: "developer", developerId: developer.id }, project: scope.ctx };
  },
};
