import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type RunningServer } from "./helpers/server";
import { rawRequest } from "./helpers/raw-http";

/**
 * Hostile request targets against a production server (`next start`), byte for byte over a socket: what
 * Next.js itself answered with a 500 (or an empty 405) before the hooks that run ahead of it took them.
 */
let server: RunningServer;
beforeAll(async () => {
  server = await startServer();
}, 900_000);
afterAll(async () => {
  await server?.stop();
});

function raw(method: string, target: string) {
  const { hostname, port } = new URL(server.url);
  return rawRequest(hostname, Number(port), method, target);
}

describe("a running server, given hostile request targets", () => {
  it("answers OPTIONS * with 204 and Allow, GET * with the JSON 400", async () => {
    const options = await raw("OPTIONS", "*");
    expect(options.status).toBe(204);
    expect(options.headers.allow).toContain("GET");
    const get = await raw("GET", "*");
    expect(get.status).toBe(400);
    expect(JSON.parse(get.body).error.type).toBe("invalid_request_error");
  });

  it("answers pages with a bad percent-escape with a 400 page", async () => {
    for (const path of ["/invite/%ZZ", "/claim/%ZZ", "/projects/%ZZ/test", "/projects/x/test/players/%ZZ"]) {
      const res = await raw("GET", path);
      expect(res.status, path).toBe(400);
      expect(res.headers["content-type"], path).toContain("text/html");
    }
  });

  it("answers PUT, PATCH and DELETE on /v1/openapi.json with the JSON 405", async () => {
    for (const method of ["PUT", "PATCH", "DELETE"]) {
      const res = await fetch(`${server.url}/v1/openapi.json`, { method });
      expect(res.status, method).toBe(405);
      expect(res.headers.get("allow")).toBe("GET");
      expect((await res.json()).error.type).toBe("invalid_request_error");
    }
    expect((await fetch(`${server.url}/v1/openapi.json`)).status).toBe(200);
  });
});
