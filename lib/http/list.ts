import { asc, count, desc, type AnyColumn, type SQL } from "drizzle-orm";
import type { PgTable } from "drizzle-orm/pg-core";
import type { Queryable } from "@/lib/db/client";

export interface ListParams {
  limit?: number;
  skip?: number;
  order?: "asc" | "desc";
}

export interface ListEnvelope<T> {
  object: "list";
  url: string;
  start: number;
  end: number;
  total: number;
  data: T[];
}

type ListableTable = PgTable & { createdAt: AnyColumn; id: AnyColumn };

/**
 * One page of a table's rows matching `where`, newest first unless asked otherwise (the id
 * breaks ties so pages never overlap), with the total count of matches.
 */
export async function listPage<T extends ListableTable>(
  db: Queryable,
  table: T,
  where: SQL | undefined,
  params: ListParams,
): Promise<{ rows: T["$inferSelect"][]; total: number }> {
  const dir = params.order === "asc" ? asc : desc;
  const [rows, [counted]] = await Promise.all([
    db
      .select()
      .from(table as PgTable)
      .where(where)
      .orderBy(dir(table.createdAt), dir(table.id))
      .limit(params.limit ?? 10)
      .offset(params.skip ?? 0),
    db.select({ total: count() }).from(table as PgTable).where(where),
  ]);
  return { rows: rows as T["$inferSelect"][], total: counted?.total ?? 0 };
}

export function listEnvelope<T>(url: string, params: ListParams, data: T[], total: number): ListEnvelope<T> {
  const start = params.skip ?? 0;
  return { object: "list", url, start, end: start + data.length, total, data };
}
