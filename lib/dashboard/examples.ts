import { headers } from "next/headers";
import { getDb } from "@/lib/db/client";
import { requestOrigin } from "@/lib/http/origin";
import { currentSecretKey } from "@/lib/projects/service";
import type { ProjectContext } from "@/lib/tenant";

/** The API's base URL as the browser reached this dashboard. */
export async function apiBase(): Promise<string> {
  return requestOrigin(await headers()) ?? "http://127.0.0.1:3000";
}

/**
 * The key to put in example commands: in test mode the project's test secret key itself (as
 * Stripe's documentation does for a signed-in developer), in live mode a placeholder, since
 * live secret keys are shown once only.
 */
export async function exampleKey(ctx: ProjectContext): Promise<string> {
  if (ctx.livemode) return "$LIVE_SECRET_KEY";
  return (await currentSecretKey(await getDb(), ctx)) ?? "$TEST_SECRET_KEY";
}
