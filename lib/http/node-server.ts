import http from "node:http";
import { isDraining, requestStarted } from "@/lib/shutdown";
import { forgetUntrustedForwarding } from "./client-address";
import { refuseUnroutable } from "./unroutable";

const installed = Symbol.for("smart-wallet-service.request-hooks");

/**
 * What happens to every request before Next.js sees it, in one wrap of node's HTTP server `emit`
 * (`next start` offers no other hook; no route handler or proxy can, as Next.js fails while
 * building their Request): a client's own X-Forwarded-* headers are dropped (see client-address.ts), a
 * request Next.js cannot route gets the API's JSON error (see unroutable.ts), and requests are
 * counted for a clean shutdown (see lib/shutdown.ts).
 */
export function installRequestHooks() {
  const proto = http.Server.prototype as http.Server & { [installed]?: true };
  if (proto[installed]) return;
  proto[installed] = true;
  const emit = proto.emit;
  proto.emit = function (this: http.Server, event: string | symbol, ...args: unknown[]) {
    if (event === "request") {
      const [req, res] = args as [http.IncomingMessage, http.ServerResponse];
      if (isDraining()) {
        // Arrived on a kept-alive connection after SIGTERM: the client retries elsewhere (or here, restarted).
        res.writeHead(503, { "content-type": "application/json; charset=utf-8", connection: "close", "retry-after": "1" });
        res.end(JSON.stringify({ error: { type: "api_error", message: "The service is shutting down; retry the request." } }));
        return true;
      }
      requestStarted(this, res);
      forgetUntrustedForwarding(req);
      if (refuseUnroutable(req, res)) return true;
    }
    return emit.apply(this, [event, ...args] as Parameters<typeof emit>);
  } as typeof emit;
}
