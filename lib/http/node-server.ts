import http from "node:http";
import { forgetUntrustedForwarding } from "./client-address";
import { refuseUnroutable } from "./unroutable";

const installed = Symbol.for("smart-wallet-service.request-hooks");

/**
 * What happens to every request before Next.js sees it, in one wrap of node's HTTP server `emit`
 * (`next start` offers no other hook; no route handler or proxy can, as Next.js fails while
 * building their Request): a client's own X-Forwarded-For is dropped (see client-address.ts), and
 * a request Next.js cannot route gets the API's JSON error (see unroutable.ts).
 */
export function installRequestHooks() {
  const proto = http.Server.prototype as http.Server & { [installed]?: true };
  if (proto[installed]) return;
  proto[installed] = true;
  const emit = proto.emit;
  proto.emit = function (this: http.Server, event: string | symbol, ...args: unknown[]) {
    if (event === "request") {
      const [req, res] = args as [http.IncomingMessage, http.ServerResponse];
      forgetUntrustedForwarding(req);
      if (refuseUnroutable(req, res)) return true;
    }
    return emit.apply(this, [event, ...args] as Parameters<typeof emit>);
  } as typeof emit;
}
