import { and, eq, type AnyColumn, type Placeholder, type SQL } from "drizzle-orm";

/**
 * A project and mode to scope a statement to: values (a ProjectContext is one), or a prepared statement's
 * placeholders for them. Structural, so lib/db depends on neither lib/http nor lib/projects.
 */
export interface TenantScope {
  projectId: string | Placeholder;
  livemode: boolean | Placeholder;
}

/** Any table keyed by tenant: a project id and a mode. */
export interface TenantTable {
  projectId: AnyColumn<{ data: string }>;
  livemode: AnyColumn<{ data: boolean }>;
}

/**
 * Rows of `table` in the scope's project and mode, and matching every condition given (undefined ones are
 * ignored, as with drizzle's `and`): the one form of the tenant scope every tenant query starts from.
 */
export const inScope = (table: TenantTable, scope: TenantScope, ...conditions: (SQL | undefined)[]): SQL | undefined =>
  and(eq(table.projectId, scope.projectId), eq(table.livemode, scope.livemode), ...conditions);
