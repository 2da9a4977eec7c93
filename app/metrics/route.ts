// Prometheus metrics, for loopback scrapers or with METRICS_TOKEN (see lib/metrics-access.ts).
import { metricsAccess } from "@/lib/metrics-access";
import { scrapeMetrics } from "@/lib/metrics-scrape";

export const dynamic = "force-dynamic";

export async function GET(request: Request) {
  const refused = metricsAccess(request);
  if (refused) return refused;
  const { body, contentType } = await scrapeMetrics();
  return new Response(body, { headers: { "content-type": contentType, "cache-control": "no-store" } });
}
