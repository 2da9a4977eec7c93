import type { Queryable } from "./client";

interface Preparable<R> {
  prepare(name: string): { execute(values?: Record<string, unknown>): Promise<R> };
}

/**
 * A hot statement built once per database handle (its values `sql.placeholder`s) and then run as drizzle's prepared
 * query with each call's values: otherwise drizzle builds its SQL again on every call, ~0.1–0.2 ms of CPU for a select
 * of a table's columns. A transaction's handle gets one of its own (built once for it). `name` must be unique.
 */
export function preparedQuery<R>(name: string, build: (q: Queryable) => Preparable<R>) {
  const built = new WeakMap<Queryable, ReturnType<Preparable<R>["prepare"]>>();
  return (q: Queryable, values: Record<string, unknown>): Promise<R> => {
    let statement = built.get(q);
    if (!statement) built.set(q, (statement = build(q).prepare(name)));
    return statement.execute(values);
  };
}
