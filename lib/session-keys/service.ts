// A session's row, below lib/intents (which checks a session key's signatures against it) and lib/sessions (which
// registers and revokes sessions through intents).
import { eq } from "drizzle-orm";
import type { Queryable } from "@/lib/db/client";
import { sessions } from "@/lib/db/schema";
import { inScope } from "@/lib/db/scope";
import { notFound } from "@/lib/errors";
import type { ProjectContext } from "@/lib/tenant";

export type SessionRow = typeof sessions.$inferSelect;

export async function getSession(db: Queryable, ctx: ProjectContext, id: string): Promise<SessionRow> {
  const [row] = await db.select().from(sessions).where(inScope(sessions, ctx, eq(sessions.id, id)));
  if (!row) throw notFound("session", id);
  return row;
}
