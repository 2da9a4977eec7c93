import { headers } from "next/headers";
import type { IntentRow } from "@/lib/intents/service";
import { signingUrl } from "@/lib/signing/token";

/** The origin the developer's browser reached the dashboard on (PUBLIC_URL wins when set). */
async function requestOrigin(): Promise<string | undefined> {
  const h = await headers();
  const host = h.get("x-forwarded-host") ?? h.get("host");
  if (!host) return undefined;
  const proto = h.get("x-forwarded-proto")?.split(",")[0]?.trim() ?? "http";
  return `${proto}://${host}`;
}

/** The signing page's link for an intent awaiting its owner's signature, to hand to the owner. */
export async function signingLink(row: IntentRow): Promise<string | null> {
  if (row.status !== "awaiting_signature") return null;
  return (await signingUrl(row, await requestOrigin())) ?? null;
}
