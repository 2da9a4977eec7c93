import { and, eq, type SQL } from "drizzle-orm";
import type { Queryable } from "@/lib/db/client";
import { sessions } from "@/lib/db/schema";
import { notFound } from "@/lib/http/errors";
import type { ProjectContext } from "@/lib/projects/service";

export type SessionRow = typeof sessions.$inferSelect;

export const scopedSessions = (ctx: ProjectContext, ...conditions: (SQL | undefined)[]) =>
  and(eq(sessions.projectId, ctx.projectId), eq(sessions.livemode, ctx.livemode), ...conditions);

export async function getSession(db: Queryable, ctx: ProjectContext, id: string): Promise<SessionRow> {
  const [row] = await db.select().from(sessions).where(scopedSessions(ctx, eq(sessions.id, id)));
  if (!row) throw notFound("session", id);
  return row;
}
