import Link from "next/link";
import type { ReactNode } from "react";

export interface Column<T> {
  header: string;
  cell: (row: T) => ReactNode;
  className?: string;
}

/** A table that scrolls sideways on narrow screens rather than squeezing its columns. */
export function Table<T>({ rows, columns, rowKey, rowHref }: { rows: T[]; columns: Column<T>[]; rowKey: (row: T) => string; rowHref?: (row: T) => string }) {
  return (
    <div className="overflow-x-auto rounded-lg border border-slate-200 bg-white shadow-sm">
      <table className="min-w-full divide-y divide-slate-200 text-sm">
        <thead className="bg-slate-50 text-left text-xs font-semibold uppercase tracking-wide text-slate-500">
          <tr>
            {columns.map((c) => (
              <th key={c.header} scope="col" className={`whitespace-nowrap px-4 py-2 ${c.className ?? ""}`}>
                {c.header}
              </th>
            ))}
          </tr>
        </thead>
        <tbody className="divide-y divide-slate-100">
          {rows.map((row) => (
            <tr key={rowKey(row)} className="hover:bg-slate-50">
              {columns.map((c, i) => (
                <td key={c.header} className={`whitespace-nowrap px-4 py-2 align-top ${c.className ?? ""}`}>
                  {i === 0 && rowHref ? (
                    <Link href={rowHref(row)} className="font-medium text-indigo-700 hover:underline">
                      {c.cell(row)}
                    </Link>
                  ) : (
                    c.cell(row)
                  )}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** Offset pagination over the API's list envelope (`total`, `start`, `end`), keeping the page's other query parameters. */
export function Pagination({ total, skip, limit, href }: { total: number; skip: number; limit: number; href: (skip: number) => string }) {
  if (total === 0) return null;
  const prev = Math.max(0, skip - limit);
  const next = skip + limit;
  const linkClass = "rounded-md border border-slate-300 bg-white px-3 py-1 hover:bg-slate-50";
  return (
    <nav aria-label="Pagination" className="mt-3 flex items-center justify-between text-sm text-slate-600">
      <span>
        {Math.min(skip + 1, total)}–{Math.min(skip + limit, total)} of {total}
      </span>
      <span className="flex gap-2">
        {skip > 0 && (
          <Link className={linkClass} href={href(prev)}>
            Previous
          </Link>
        )}
        {next < total && (
          <Link className={linkClass} href={href(next)}>
            Next
          </Link>
        )}
      </span>
    </nav>
  );
}

/** `?skip=…` links that keep the rest of the current query. */
export function pageHref(path: string, query: Record<string, string | undefined>) {
  return (skip: number) => {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) if (v && k !== "skip") params.set(k, v);
    if (skip > 0) params.set("skip", String(skip));
    const qs = params.toString();
    return qs ? `${path}?${qs}` : path;
  };
}

/** The switch between a list of soft-deletable resources with and without the deleted ones. */
export function DeletedToggle({ href, shown, noun }: { href: string; shown: boolean; noun: string }) {
  return (
    <p className="mb-3 text-sm">
      <a className="text-indigo-700 hover:underline" href={shown ? href : `${href}?deleted=true`}>
        {shown ? "Hide" : "Show"} deleted {noun}
      </a>
    </p>
  );
}
