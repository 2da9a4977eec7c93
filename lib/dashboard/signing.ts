import { headers } from "next/headers";
import { requestOrigin } from "@/lib/http/origin";
import type { IntentRow } from "@/lib/intents/service";
import { signingUrl } from "@/lib/intents/signing-link";

/** The signing page's link for an intent awaiting its owner's signature, to hand to the owner. */
export async function signingLink(row: IntentRow): Promise<string | null> {
  if (row.status !== "awaiting_signature") return null;
  // The origin the developer's browser reached the dashboard on (PUBLIC_URL wins when set).
  return (await signingUrl(row, requestOrigin(await headers()))) ?? null;
}
