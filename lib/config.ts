import path from "node:path";

/** Where the embedded default keeps its state (database, master key, printed project). */
export const dataDir = () => path.resolve(/* turbopackIgnore: true */ process.env.DATA_DIR ?? ".data");

/** What a numeric setting must be to be used; any other value reads as the fallback. */
export interface EnvNumberRule {
  /** The least value accepted. */
  min?: number;
  /** Only values greater than this are accepted (`above: 0`: positive). */
  above?: number;
  integer?: boolean;
}

/**
 * A numeric setting from the environment, read as `Number(value)`: `fallback` when the variable is unset
 * or empty, not a finite number, or outside `rule`. Read at each call, so tests and operators can change it.
 */
export function envNumber<F extends number | undefined>(name: string, fallback: F, rule: EnvNumberRule = {}): number | F {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === "") return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || (rule.integer && !Number.isInteger(value))) return fallback;
  if ((rule.min !== undefined && value < rule.min) || (rule.above !== undefined && value <= rule.above)) return fallback;
  return value;
}
