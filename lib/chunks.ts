/** `rows` in order, in pieces of at most `size` (the last one shorter): a statement's or a request's share of them. */
export function chunksOf<T>(rows: readonly T[], size: number): T[][] {
  if (!Number.isInteger(size) || size < 1) throw new RangeError(`chunksOf: size must be a positive integer, got ${size}`);
  return Array.from({ length: Math.ceil(rows.length / size) }, (_, i) => rows.slice(i * size, (i + 1) * size));
}
