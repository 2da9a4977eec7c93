import { eq, ilike, inArray, isNull, or, type SQL } from "drizzle-orm";
import type { Queryable } from "@/lib/db/client";
import { players } from "@/lib/db/schema";
import { inScope, type TenantScope } from "@/lib/db/scope";
import { notFound } from "@/lib/errors";
import { applyMetadata } from "@/lib/http/fields";
import { listPage, preparedList, type ListPlaceholders } from "@/lib/http/list";
import { newId } from "@/lib/ids";
import type { ProjectContext } from "@/lib/tenant";
import { revokePlayerSessions } from "./player-sessions";
import type { CreatePlayerInput, ListPlayersInput } from "./schema";

export type PlayerRow = typeof players.$inferSelect;

// A deleted player is gone for the API: every lookup but playersByIds skips it.
const scoped = (ctx: TenantScope, ...conditions: (SQL | undefined)[]) => inScope(players, ctx, isNull(players.deletedAt), ...conditions);

export async function createPlayer(db: Queryable, ctx: ProjectContext, input: CreatePlayerInput): Promise<PlayerRow> {
  const [row] = await db
    .insert(players)
    .values({
      id: newId("player"),
      ...ctx,
      name: input.name ?? null,
      email: input.email ?? null,
      description: input.description ?? null,
      metadata: applyMetadata(null, input.metadata),
    })
    .returning();
  return row!;
}

export async function getPlayer(db: Queryable, ctx: ProjectContext, id: string): Promise<PlayerRow> {
  const [row] = await db.select().from(players).where(scoped(ctx, eq(players.id, id)));
  if (!row) throw notFound("player", id);
  return row;
}

/**
 * The players page: a prepared statement per filter shape (see preparedList). `refs` adds columns computed per
 * player in the same statement (the ids a player embeds), built over the statement's placeholders.
 */
export function playersPage<X extends Record<string, SQL> = Record<never, SQL>>(refs?: (scope: ListPlaceholders<PlayerFilters>) => X) {
  const page = preparedList(players, (p: ListPlaceholders<PlayerFilters>) => ({
    where: scoped(p, p.filters.name && eq(players.name, p.filters.name), p.filters.email && eq(players.email, p.filters.email)),
    extra: refs?.(p),
  }));
  return (db: Queryable, ctx: ProjectContext, input: ListPlayersInput) => page(db, ctx, input, { name: input.name, email: input.email });
}

type PlayerFilters = { name?: string; email?: string };

export async function updatePlayer(db: Queryable, ctx: ProjectContext, id: string, input: CreatePlayerInput): Promise<PlayerRow> {
  return db.transaction(async (tx) => {
    const [current] = await tx.select().from(players).where(scoped(ctx, eq(players.id, id))).for("update");
    if (!current) throw notFound("player", id);
    const [row] = await tx
      .update(players)
      .set({
        ...(input.name !== undefined && { name: input.name }),
        ...(input.email !== undefined && { email: input.email }),
        ...(input.description !== undefined && { description: input.description }),
        metadata: applyMetadata(current.metadata, input.metadata),
        updatedAt: new Date(),
      })
      .where(eq(players.id, id))
      .returning();
    return row!;
  });
}

export async function deletePlayer(db: Queryable, ctx: ProjectContext, id: string) {
  return db.transaction(async (tx) => {
    const deleted = await tx
      .update(players)
      .set({ deletedAt: new Date() })
      .where(scoped(ctx, eq(players.id, id)))
      .returning({ id: players.id });
    if (deleted.length === 0) throw notFound("player", id);
    // A deleted player's tokens stop working at once, not when they expire.
    await revokePlayerSessions(tx, id, "the player was deleted");
    return { id, object: "player" as const, deleted: true as const };
  });
}

/** Players by id within the project, deleted ones included (for expanding references). */
export async function playersByIds(db: Queryable, ctx: ProjectContext, ids: string[]): Promise<PlayerRow[]> {
  if (ids.length === 0) return [];
  return db
    .select()
    .from(players)
    .where(inScope(players, ctx, inArray(players.id, ids)));
}

/** `%`, `_` and `\` match themselves in a LIKE pattern built from what a developer typed. */
export const likePattern = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** The dashboard's search: players whose id, name or email contains the text (case-insensitive). */
export async function searchPlayers(db: Queryable, ctx: ProjectContext, input: { q?: string; limit: number; skip: number }) {
  const q = input.q?.trim();
  const pattern = q ? likePattern(q) : undefined;
  const matches = pattern ? or(ilike(players.id, pattern), ilike(players.name, pattern), ilike(players.email, pattern)) : undefined;
  return listPage(db, players, scoped(ctx, matches), input);
}
