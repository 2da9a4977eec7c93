import { ApiError } from "@/lib/http/errors";
import type { AuthStrategy } from "@/lib/http/principals";
import { developerProjectScope, sessionDeveloper } from "./context";

/** The dashboard's session cookie; the project and mode come from the path, and another organization's project is a 404. */
export const dashboardSession: AuthStrategy<{ kind: "developer"; developerId: string }> = {
  security: [],
  apiRequest: false,
  async authenticate(_db, { params }) {
    const developer = await sessionDeveloper();
    if (!developer) throw new ApiError(401, "authentication_error", "Sign in to the dashboard first.");
    const scope = await developerProjectScope(developer.id, params.projectId ?? "", params.mode ?? "");
    if (!scope) throw new ApiError(404, "invalid_request_error", `No such project: '${params.projectId}' (${params.mode})`);
    return { principal: { kind: "developer", developerId: developer.id }, project: scope.ctx };
  },
};
