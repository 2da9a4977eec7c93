/** A GET form: the search is in the URL, so it can be bookmarked and paginated. */
export function SearchBox({ placeholder, defaultValue, name = "q", children }: { placeholder: string; defaultValue?: string; name?: string; children?: React.ReactNode }) {
  return (
    <form role="search" className="flex flex-col gap-2 sm:flex-row">
      <input
        type="search"
        name={name}
        defaultValue={defaultValue}
        placeholder={placeholder}
        aria-label={placeholder}
        className="w-full rounded-md border border-slate-300 bg-white px-3 py-1.5 text-sm shadow-sm sm:max-w-sm"
      />
      {children}
      <button type="submit" className="rounded-md border border-slate-300 bg-white px-3 py-1.5 text-sm hover:bg-slate-50">
        Search
      </button>
    </form>
  );
}
