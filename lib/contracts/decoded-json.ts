/** Decoded ABI values as JSON text, for people to read: viem decodes integers as bigints, which JSON.stringify refuses. */
export const decodedJson = (value: unknown) => JSON.stringify(value, (_, v) => (typeof v === "bigint" ? v.toString() : v));
