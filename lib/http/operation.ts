import type { z } from "zod";
import type { Db } from "@/lib/db/client";
import type { ProjectContext } from "@/lib/projects/service";
import type { KeyKind } from "./auth";

export type HttpMethod = "GET" | "POST" | "PUT" | "DELETE";

export interface OperationContext<Input> {
  db: Db;
  project: ProjectContext;
  input: Input;
  params: Record<string, string>;
  /** The request path, used as the `url` of list envelopes. */
  path: string;
  /** The origin the request came to (scheme, host, port), for links back to this service. */
  origin?: string;
  /** The request's headers (absent when the dashboard runs an operation), for the few parameters sent as headers. */
  headers?: Headers;
}

/**
 * One endpoint, declared once: the route handler, request validation, response checking in
 * tests and the OpenAPI document are all derived from this.
 */
export interface Operation<InputSchema extends z.ZodType = z.ZodType, Result = unknown> {
  operationId: string;
  method: HttpMethod;
  /** OpenAPI-style path, e.g. `/v1/players/{id}`. */
  path: string;
  summary: string;
  tag: string;
  /** Which key the endpoint accepts; secret by default. */
  auth?: KeyKind;
  /** Query parameters for GET and DELETE, the body (merged over the query) otherwise. */
  input: InputSchema;
  response: z.ZodType;
  run: (ctx: OperationContext<z.output<InputSchema>>) => Promise<Result>;
}

export function defineOperation<InputSchema extends z.ZodType, Result>(op: Operation<InputSchema, Result>) {
  return op;
}
