import { headers } from "next/headers";
import type { Queryable } from "@/lib/db/client";
import { clientAddress } from "@/lib/http/client-address";
import { hit, limits } from "@/lib/http/rate-limit";

/**
 * One try at a claim or invitation link (opening its page or acting on it), counted per client
 * address: links are guessed no faster than the other unauthenticated routes allow.
 */
export async function linkAttempt(db: Queryable) {
  return hit(db, `links:${clientAddress(await headers())}`, limits.public());
}
