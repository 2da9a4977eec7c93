import { and, eq, isNull, sql } from "drizzle-orm";
import type { Queryable } from "@/lib/db/client";
import { playerSessions } from "@/lib/db/schema";

// Here rather than in lib/iam/sessions.ts, which issues and refreshes them: deleting a player ends its sessions,
// and the players domain sits below the identity API.

/** Ends every session of a player (deletion, a password reset). */
export async function revokePlayerSessions(db: Queryable, playerId: string, reason: string): Promise<void> {
  await db.update(playerSessions).set({ revokedAt: sql`now()`, revokedReason: reason }).where(and(eq(playerSessions.playerId, playerId), isNull(playerSessions.revokedAt)));
}
