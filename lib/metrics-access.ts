import crypto from "node:crypto";
import { bearerToken } from "@/lib/http/auth";
import { clientIp } from "@/lib/http/client-address";
import { envRaw } from "@/lib/config";
import { challenges, unauthorized } from "@/lib/errors";

const LOOPBACK = new Set(["127.0.0.1", "::1", "::ffff:127.0.0.1"]);

const matches = (given: string, expected: string) => {
  const a = crypto.createHash("sha256").update(given).digest();
  const b = crypto.createHash("sha256").update(expected).digest();
  return crypto.timingSafeEqual(a, b);
};

/**
 * Who may read /metrics: a scraper on this machine (the socket's address, or the client's as a
 * trusted proxy reports it), or anyone sending `Authorization: Bearer $METRICS_TOKEN`. Metrics
 * name operations, functions and volumes: not for the internet. Answers the refusal, or null.
 */
export function metricsAccess(request: Request): Response | null {
  const token = envRaw("METRICS_TOKEN");
  const presented = bearerToken(request);
  if (token && presented && matches(presented, token)) return null;
  // Loopback needs no credential; one sent, and wrong, is refused even there.
  if (!request.headers.has("authorization") && LOOPBACK.has(clientIp(request.headers))) return null;
  const message = token ? "Send the metrics token: Authorization: Bearer <METRICS_TOKEN>." : "Metrics are served to loopback only; set METRICS_TOKEN to scrape from elsewhere.";
  const refused = unauthorized(message, undefined, challenges.metrics);
  return Response.json(refused.toJSON(), { status: refused.status, headers: refused.headers });
}
