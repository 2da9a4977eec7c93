/** Unix seconds (the API's timestamps) as a UTC date and time, the same on server and client. */
export function Time({ seconds }: { seconds: number | null | undefined }) {
  if (seconds === null || seconds === undefined) return <span className="text-slate-400">—</span>;
  const iso = new Date(seconds * 1000).toISOString();
  return (
    <time dateTime={iso} className="whitespace-nowrap">
      {iso.slice(0, 19).replace("T", " ")} UTC
    </time>
  );
}
