export const PAGE_SIZE = 20;

/** `?skip=` from the URL as a safe offset (anything odd is the first page). */
export function pageParams(query: { skip?: string }) {
  const skip = Number(query.skip);
  return { limit: PAGE_SIZE, skip: Number.isSafeInteger(skip) && skip > 0 ? Math.min(skip, 1_000_000) : 0 };
}

/** `?deleted=true` lists soft-deleted resources too; otherwise the list asks for the others only. */
export function deletedParams(query: { deleted?: string }) {
  const shown = query.deleted === "true";
  return { shown, filter: shown ? {} : { deleted: false } };
}
