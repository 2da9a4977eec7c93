import http from "node:http";
import type { AddressInfo } from "node:net";
import { call } from "./api";

/**
 * A plain HTTP server that hands each request to the real route handlers as test/helpers/api.ts does, so the official SDK
 * (which speaks HTTP through node-fetch) runs unchanged against them without a production build.
 */
export async function routeServer(): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const headers = Object.fromEntries(Object.entries(req.headers).filter(([, v]) => typeof v === "string")) as Record<string, string>;
    const body = Buffer.concat(chunks).toString("utf8");
    const answer = await call(req.method ?? "GET", `${url.pathname}${url.search}`, {
      headers,
      ...(body ? { raw: { body, contentType: headers["content-type"] ?? "application/json" } } : {}),
    });
    res.writeHead(answer.status, { "content-type": "application/json" });
    res.end(JSON.stringify(answer.body));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
