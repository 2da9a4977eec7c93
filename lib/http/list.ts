import { asc, desc, type AnyColumn } from "drizzle-orm";

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

export function pageOf(params: ListParams) {
  return { limit: params.limit ?? 10, offset: params.skip ?? 0 };
}

/** Newest first unless asked otherwise; the id breaks ties so pages never overlap. */
export function orderBy(params: ListParams, createdAt: AnyColumn, id: AnyColumn) {
  const dir = params.order === "asc" ? asc : desc;
  return [dir(createdAt), dir(id)];
}

export function listEnvelope<T>(url: string, params: ListParams, data: T[], total: number): ListEnvelope<T> {
  const start = params.skip ?? 0;
  return { object: "list", url, start, end: start + data.length, total, data };
}
