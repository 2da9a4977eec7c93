import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as openApiRoute from "@/app/v1/openapi.json/route";
import { installRequestHooks } from "@/lib/http/node-server";
import { rawRequest } from "./helpers/raw-http";

/**
 * Hostile request targets, as a client sends them on the wire (a raw socket: `*` is no URL
 * fetch can send), through the hooks every request meets before Next.js. The stand-in for
 * Next.js answers a plain-text 500, as Next.js did for each of these.
 */
let port: number;
let server: http.Server;
beforeAll(async () => {
  installRequestHooks();
  server = http.createServer((_req, res) => res.writeHead(500, { "content-type": "text/plain" }).end("Internal Server Error"));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** One request written byte for byte; the answer's status, headers and body. */
const raw = (method: string, target: string) => rawRequest("127.0.0.1", port, method, target);

describe("the request target *", () => {
  it("OPTIONS * answers what the server allows, with no body", async () => {
    const res = await raw("OPTIONS", "*");
    expect(res.status).toBe(204);
    expect(res.headers.allow).toContain("GET");
    expect(res.body).toBe("");
  });

  it("any other method with * gets the API's JSON 400", async () => {
    for (const method of ["GET", "POST", "DELETE"]) {
      const res = await raw(method, "*");
      expect(res.status, method).toBe(400);
      expect(res.headers["content-type"]).toContain("application/json");
      expect(JSON.parse(res.body).error).toMatchObject({ type: "invalid_request_error", message: expect.stringContaining("*") });
    }
  });
});

describe("pages with a path segment that does not percent-decode", () => {
  it("answer a 400 page, not a 500", async () => {
    for (const path of ["/invite/%ZZ", "/claim/%ZZ", "/projects/%ZZ/test", "/projects/x/test/players/%ZZ", "/login/%C0%AF"]) {
      const res = await raw("GET", path);
      expect(res.status, path).toBe(400);
      expect(res.headers["content-type"], path).toContain("text/html");
      expect(res.body, path).toMatch(/not a valid address/i);
      expect(res.body, path).not.toContain("%ZZ<"); // shown escaped, never as markup
    }
  });
});

describe("methods /v1/openapi.json does not serve", () => {
  it("answer the JSON 405 naming GET", async () => {
    const route = openApiRoute as unknown as Record<string, (request: Request) => Promise<Response> | Response>;
    for (const method of ["POST", "PUT", "PATCH", "DELETE"]) {
      expect(typeof route[method], method).toBe("function");
      const res = await route[method]!(new Request("http://127.0.0.1:3000/v1/openapi.json", { method }));
      expect(res.status, method).toBe(405);
      expect(res.headers.get("allow")).toBe("GET");
      expect((await res.json()).error).toMatchObject({ type: "invalid_request_error", message: expect.stringContaining(method) });
    }
  });
});

describe("API paths with a path segment that does not percent-decode", () => {
  it("answer the API's JSON 400, the bundler RPC's /rpc/ included", async () => {
    for (const path of ["/v1/players/%ZZ", "/rpc/%ZZ", "/rpc/%C0%AF?apiKey=pk_x"]) {
      const res = await raw("POST", path);
      expect(res.status, path).toBe(400);
      expect(res.headers["content-type"], path).toContain("application/json");
      expect(JSON.parse(res.body).error, path).toMatchObject({ type: "invalid_request_error" });
    }
  });
});
