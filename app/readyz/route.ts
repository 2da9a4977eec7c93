// Readiness, for orchestrators and load balancers: 200 when this process should get traffic (ready, or degraded: an
// operator must act, see lib/health.ts), 503 with the failing checks when not.
import { readiness } from "@/lib/health";

export const dynamic = "force-dynamic";

export async function GET() {
  const result = await readiness();
  return Response.json(result, { status: result.status === "not_ready" ? 503 : 200, headers: { "cache-control": "no-store" } });
}
