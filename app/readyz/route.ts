// Readiness, for orchestrators and load balancers: 200 when this process should get traffic, 503 with the failing checks when not.
import { readiness } from "@/lib/health";

export const dynamic = "force-dynamic";

export async function GET() {
  const result = await readiness();
  return Response.json(result, { status: result.status === "ready" ? 200 : 503, headers: { "cache-control": "no-store" } });
}
