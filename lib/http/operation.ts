import type { z } from "zod";
import type { Db } from "@/lib/db/client";
import type { ProjectContext } from "@/lib/tenant";
import type { AuthStrategy, KeyPrincipal } from "./principals";

export type HttpMethod = "GET" | "POST" | "PUT" | "DELETE";

/** The names of a path template's parameters: `"id" | "triggerId"` for `/v1/subscriptions/{id}/triggers/{triggerId}`. */
type PathParamNames<Path extends string> = Path extends `${string}{${infer Name}}${infer Rest}` ? Name | PathParamNames<Rest> : never;

/**
 * An operation's path parameters, typed from its path: each one the router matched is there (so `params.id` is a
 * `string`), and a name not in the path is a type error. Any names for a path not known as a literal.
 */
export type PathParams<Path extends string> = string extends Path ? Record<string, string> : { readonly [Name in PathParamNames<Path>]: string };

export interface OperationContext<Input, P = KeyPrincipal, Project extends ProjectContext | null = ProjectContext, Path extends string = string> {
  db: Db;
  /** The project and mode the request acts in (none for the admin token). */
  project: Project;
  /** Who is calling, as the operation's authentication strategy proved it (absent when the dashboard runs an operation). */
  principal?: P;
  input: Input;
  params: PathParams<Path>;
  /** The request path, used as the `url` of list envelopes. */
  path: string;
  /** The origin the request came to (scheme, host, port), for links back to this service. */
  origin?: string;
  /** The request's headers (absent when the dashboard runs an operation), for the few parameters sent as headers. */
  headers?: Headers;
  /** The client's address, for per-address limits of unauthenticated work (sign-in attempts). */
  clientAddress?: string;
}

/**
 * One endpoint, declared once: the route handler, request validation, response checking in
 * tests and the OpenAPI document are all derived from this.
 */
export interface Operation<
  InputSchema extends z.ZodType = z.ZodType,
  Result = unknown,
  P = unknown,
  Project extends ProjectContext | null = ProjectContext | null,
  Path extends string = string,
> {
  operationId: string;
  method: HttpMethod;
  /** OpenAPI-style path, e.g. `/v1/players/{id}`. */
  path: Path;
  summary: string;
  tag: string;
  /** How the caller authenticates (lib/http/principals.ts and the domains' strategies); a secret key by default. */
  auth?: AuthStrategy<P, Project>;
  /**
   * "chain" for work on the chain (simulation, RPC reads, a relay queued): it also spends the project's smaller
   * chain share of the rate limit and runs in the project's concurrency lane (lib/http/rate-limit.ts,
   * concurrency.ts). Ordinary work by default.
   */
  cost?: "chain";
  /** Left out of the public API's OpenAPI document (the dashboard's, the signing page's and the CLI's own routes). */
  internal?: boolean;
  /** Query parameters for GET and DELETE, the body (merged over the query) otherwise. */
  input: InputSchema;
  /** The answer's shape; a `Response` returned by `run` (a CSV download) is sent as it is. */
  response: z.ZodType;
  // A method, so an operation of any strategy is an `Operation` (parameters are compared bivariantly).
  run(ctx: OperationContext<z.output<InputSchema>, P, Project, Path>): Promise<Result>;
  /**
   * Under an Idempotency-Key whose request (`requestId`) died after its writes committed and before its answer was
   * stored: that request's work as its answer (what `run` would have answered), or null when it did nothing, so the
   * retry runs again. Without it such a retry runs again (lib/http/idempotency.ts).
   */
  recover?(ctx: OperationContext<z.output<InputSchema>, P, Project, Path>, requestId: string): Promise<Result | null>;
}

export function defineOperation<InputSchema extends z.ZodType, Result, P = KeyPrincipal, Project extends ProjectContext | null = ProjectContext, Path extends string = string>(
  op: Operation<InputSchema, Result, P, Project, Path>,
) {
  return op;
}
