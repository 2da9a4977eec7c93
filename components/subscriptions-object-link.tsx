import Link from "next/link";

/** Where a delivery's related object is shown in the dashboard: an intent's page, the events page. */
function objectHref(base: string, id: string) {
  if (id.startsWith("tin_")) return `${base}/intents/${id}`;
  if (id.startsWith("eve_")) return `${base}/events`;
  return null;
}

/** The object a delivery is about, linked to its page when it has one. */
export function ObjectLink({ base, id }: { base: string; id: string | null }) {
  if (!id) return <span className="text-slate-400">—</span>;
  const href = objectHref(base, id);
  return href ? (
    <Link className="font-mono text-xs text-indigo-700 hover:underline" href={href}>
      {id}
    </Link>
  ) : (
    <span className="font-mono text-xs">{id}</span>
  );
}
