import type postgres from "postgres";
import { envRaw } from "@/lib/config";

type Client = postgres.Sql | postgres.TransactionSql | postgres.ReservedSql;

/** Whether statements are prepared (named): postgres.js's own queries (its type lookup, tagged templates) too. */
export const preparesStatements = () => envRaw("DATABASE_PREPARE") !== "false";

/**
 * The postgres.js client as drizzle should use it: every statement prepared (named, once per
 * connection), so PostgreSQL parses and plans a query once and then reuses its plan. drizzle asks
 * for an unnamed statement unless a query is `.prepare()`d by name, which re-plans every time:
 * measured on `GET /v1/players`, planning cost more than executing. `DATABASE_PREPARE=false` turns
 * it off (behind a pooler in transaction mode, which cannot keep named statements), for the
 * `.prepare()`d queries too (lib/http/list.ts's pages).
 */
export function preparingClient<T extends Client>(client: T, prepare = preparesStatements(), count: (statements: number) => void = () => {}): T {
  return new Proxy(client, {
    get(target, prop, receiver) {
      switch (prop) {
        case "unsafe":
          return (query: string, params?: postgres.ParameterOrJSON<never>[], options?: postgres.UnsafeQueryOptions) => {
            count(1);
            return target.unsafe(query, params, { ...options, prepare });
          };
        // Transactions and savepoints hand drizzle a client of their own: prepared (and counted) the same way. Each
        // is two statements besides its body's: BEGIN and COMMIT or ROLLBACK (SAVEPOINT and RELEASE or ROLLBACK TO).
        case "begin":
        case "savepoint":
          return (...args: unknown[]) => {
            count(2);
            const body = args.pop() as (sql: Client) => unknown;
            const open = Reflect.get(target, prop, receiver) as (...a: unknown[]) => unknown;
            return open.call(target, ...args, (sql: Client) => body(preparingClient(sql, prepare, count)));
          };
      }
      const value = Reflect.get(target, prop, receiver) as unknown;
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
