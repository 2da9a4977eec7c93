import type { Db } from "@/lib/db/client";
import { findPublishableKey, type AuthenticatedKey } from "@/lib/projects/service";
import type { ProjectContext } from "@/lib/tenant";
import { authenticate } from "./auth";
import { notFound } from "@/lib/errors";

/**
 * How an operation's caller proves who it is: a strategy of the one request pipeline, declared
 * per operation (`auth`), yielding a typed principal and, for all but the admin token, the
 * project and mode the request acts in. The API keys' strategies live here; the others beside
 * what they check (player tokens in lib/iam, signing links in lib/signing, the dashboard session
 * in lib/dashboard, the CLI's token in lib/projects), so this layer imports no domain.
 */
export interface AuthStrategy<P = unknown, Project extends ProjectContext | null = ProjectContext> {
  /** How the OpenAPI document describes it (none: no credential, as for a JWKS). */
  security: Record<string, string[]>[];
  /** Written to the project's request log (and counted in one of its rate budgets, see `budget`). */
  apiRequest: boolean;
  /** Limited per client address before anything else (routes with no account behind them). */
  perAddress?: boolean;
  /**
   * The project's rate budget the request spends (lib/http/rate-limit.ts). Unset: the public one
   * (per project and mode, and per client address) for API requests and per-address routes, since
   * only a proven secret key may spend the backend's; none for the others (the dashboard's).
   */
  budget?: Budget;
  authenticate(db: Db, req: AuthRequest): Promise<Authenticated<P, Project>>;
}

export interface Authenticated<P, Project extends ProjectContext | null = ProjectContext> {
  principal: P;
  project: Project;
  /** The body, when the strategy had to read it to find the credential (then within a small limit). */
  body?: Record<string, unknown>;
  /** The budget this credential spends, when it depends on the credential (a secret key sent where a publishable one would do). */
  budget?: Budget;
}

export type Budget = "secret" | "public";

/** Which of the project's rate budgets an authenticated request spends, if any. */
export function budgetOf(strategy: Pick<AuthStrategy, "apiRequest" | "perAddress" | "budget">, caller: { budget?: Budget }): Budget | undefined {
  return caller.budget ?? strategy.budget ?? (strategy.apiRequest || strategy.perAddress ? "public" : undefined);
}

export interface AuthRequest {
  request: Request;
  url: URL;
  /** Path parameters as the router gave them, not yet checked (the pipeline checks them after authentication). */
  params: Record<string, string>;
}

export type KeyPrincipal = { kind: "key"; key: AuthenticatedKey };

const keyStrategy = (accepts: "secret" | "publishable", security: Record<string, string[]>[]): AuthStrategy<KeyPrincipal> => ({
  security,
  apiRequest: true,
  async authenticate(db, { request }) {
    const key = await authenticate(db, request, accepts);
    return { principal: { kind: "key", key }, project: { projectId: key.projectId, livemode: key.livemode }, budget: key.kind === "secret" ? "secret" : "public" };
  },
});

/** A secret key, as Bearer or Basic: the default. */
export const secretKey = keyStrategy("secret", [{ bearerAuth: [] }, { basicAuth: [] }]);
/** A publishable key in Basic auth (a secret key works too): player sign-up, login, browser sign-in. */
export const publishableKey = keyStrategy("publishable", [{ publishableKey: [] }, { bearerAuth: [] }, { basicAuth: [] }]);

/** The project named by a publishable key in the path (a JWKS URL): public data only, nothing proven. */
export const publishableKeyInPath: AuthStrategy<{ kind: "projectInPath"; publishableKey: string }> = {
  security: [],
  apiRequest: false,
  perAddress: true,
  async authenticate(db, { params }) {
    const key = params.publishableKey ?? "";
    const found = key.startsWith("pk_") ? await findPublishableKey(db, key) : null;
    if (!found) throw notFound("publishable key", key);
    return { principal: { kind: "projectInPath", publishableKey: key }, project: { projectId: found.projectId, livemode: found.livemode } };
  },
};
