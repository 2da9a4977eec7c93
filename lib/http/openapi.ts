import { z } from "zod";
import { documentedAs } from "./fields";
import type { Operation } from "./operation";
import { secretKey } from "./principals";

type JsonSchema = Record<string, unknown>;

const errorSchema: JsonSchema = {
  type: "object",
  required: ["error"],
  properties: {
    error: {
      type: "object",
      required: ["type", "message"],
      properties: {
        type: { type: "string", enum: ["invalid_request_error", "authentication_error", "permission_error", "idempotency_error", "rate_limit_error", "api_error"] },
        message: { type: "string" },
        details: { type: "object", additionalProperties: { type: "object", properties: { value: {}, message: { type: "string" } } } },
      },
    },
  },
};

/** Converts a zod schema, moving its `$defs` into the document's components and fixing the refs. */
function toSchema(schema: z.ZodType, io: "input" | "output", name: string, components: Record<string, JsonSchema>): JsonSchema {
  const json = z.toJSONSchema(schema, {
    io,
    unrepresentable: "any",
    cycles: "ref",
    override: (ctx) => {
      const documented = documentedAs.get(ctx.zodSchema as unknown as z.ZodType);
      if (!documented) return;
      for (const key of Object.keys(ctx.jsonSchema)) delete (ctx.jsonSchema as JsonSchema)[key];
      Object.assign(ctx.jsonSchema, documented);
    },
  }) as JsonSchema;
  delete json.$schema;
  const defs = (json.$defs ?? {}) as Record<string, JsonSchema>;
  delete json.$defs;
  const rewrite = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(rewrite);
    if (node && typeof node === "object") {
      return Object.fromEntries(
        Object.entries(node).map(([k, v]) =>
          k === "$ref" && typeof v === "string" ? [k, v.replace("#/$defs/", `#/components/schemas/${name}_`)] : [k, rewrite(v)],
        ),
      );
    }
    return node;
  };
  for (const [key, def] of Object.entries(defs)) components[`${name}_${key}`] = rewrite(def) as JsonSchema;
  return rewrite(json) as JsonSchema;
}

export function buildOpenApi(operations: Operation[], serverUrl: string) {
  const paths: Record<string, Record<string, unknown>> = {};
  const components: Record<string, JsonSchema> = { Error: errorSchema };
  for (const op of operations) {
    const pathParams = [...op.path.matchAll(/\{(\w+)\}/g)].map((m) => ({
      name: m[1],
      in: "path",
      required: true,
      schema: { type: "string" },
    }));
    const input = toSchema(op.input, "input", `${op.operationId}Input`, components);
    const inQuery = op.method === "GET" || op.method === "DELETE";
    const required = new Set((input.required as string[] | undefined) ?? []);
    const queryParams = inQuery
      ? Object.entries((input.properties ?? {}) as Record<string, JsonSchema>).map(([name, schema]) => ({
          name,
          in: "query",
          required: required.has(name),
          ...(schema.type === "array" || schema.type === "object" ? { style: "deepObject", explode: true } : {}),
          schema,
        }))
      : [];
    paths[op.path] ??= {};
    paths[op.path]![op.method.toLowerCase()] = {
      operationId: op.operationId,
      summary: op.summary,
      tags: [op.tag],
      security: (op.auth ?? secretKey).security,
      parameters: [...pathParams, ...queryParams],
      ...(inQuery
        ? {}
        : {
            requestBody: {
              required: required.size > 0,
              content: {
                "application/x-www-form-urlencoded": { schema: input },
                "application/json": { schema: input },
              },
            },
          }),
      responses: {
        "200": {
          description: "OK",
          content: { "application/json": { schema: toSchema(op.response, "output", `${op.operationId}Response`, components) } },
        },
        default: { description: "Error", content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } } },
      },
    };
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Smart-account wallet and gas-sponsorship API",
      version: "1.0.0",
      description: "Openfort-compatible. Request bodies may be form-encoded (bracket notation) or JSON.",
    },
    servers: [{ url: serverUrl }],
    paths,
    components: {
      schemas: components,
      securitySchemes: {
        bearerAuth: { type: "http", scheme: "bearer", description: "A secret key: sk_test_... or sk_live_..." },
        basicAuth: { type: "http", scheme: "basic", description: "The key as user name, empty password." },
        publishableKey: { type: "http", scheme: "basic", description: "A publishable key (pk_...) as user name; a secret key works too." },
        playerToken: { type: "http", scheme: "bearer", bearerFormat: "JWT", description: "A player's token from sign-up, login, refresh or a provider sign-in (ES256; keys at /iam/v1/{publishable_key}/jwks.json)." },
      },
    },
  };
}

const serialized = new WeakMap<Operation[], { before: string; after: string }>();
const SERVER_PLACEHOLDER = "https://server.invalid/openapi-server-url";

/**
 * The document as JSON text for `serverUrl`: built and serialized once per operations list (it is
 * derived from code, not data), then only the server URL is spliced in per request.
 */
export function openApiJson(operations: Operation[], serverUrl: string): string {
  let parts = serialized.get(operations);
  if (!parts) {
    const text = JSON.stringify(buildOpenApi(operations, SERVER_PLACEHOLDER));
    const marker = JSON.stringify(SERVER_PLACEHOLDER);
    const at = text.indexOf(marker);
    parts = { before: text.slice(0, at), after: text.slice(at + marker.length) };
    serialized.set(operations, parts);
  }
  return parts.before + JSON.stringify(serverUrl) + parts.after;
}
