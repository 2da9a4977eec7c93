import path from "node:path";
import ipaddr from "ipaddr.js";
import type { SettingName } from "@/lib/settings";

// The readers of the environment: the service reads its settings only through these, by the names lib/settings.ts
// declares (lib/settings.test.ts fails on a `process.env` read elsewhere). Each reads at each call.

export type { SettingName };

/** The environment as settings: what a function that takes an environment parameter (tests pass their own) reads. */
export type SettingsEnv = Readonly<Partial<Record<SettingName, string | undefined>>>;

/** The process's environment, for the functions that take a `SettingsEnv`. */
export const environment = (): SettingsEnv => process.env as SettingsEnv;

/** A setting's value exactly as set (untrimmed; empty stays empty), or undefined when unset. */
export const envRaw = (name: SettingName): string | undefined => process.env[name];

/** A setting's value trimmed; undefined when unset or blank. */
export function envText(name: SettingName): string | undefined {
  const value = process.env[name]?.trim();
  return value ? value : undefined;
}

/** Sets a setting's default in the environment, for a library that reads it itself (NextAuth's AUTH_TRUST_HOST). */
export function envDefault(name: SettingName, value: string) {
  process.env[name] ??= value;
}

/**
 * The set variables of a family (`CHAIN_<id>_RPC_URL`) with their values. Lists the names first and reads only the
 * matching ones: reading every variable of process.env goes through its native getter each time.
 */
export function envFamily(pattern: RegExp): [name: string, value: string | undefined][] {
  return Object.keys(process.env)
    .filter((name) => pattern.test(name))
    .map((name) => [name, process.env[name]]);
}

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
export function envNumber<F extends number | undefined>(name: SettingName, fallback: F, rule: EnvNumberRule = {}): number | F {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === "") return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || (rule.integer && !Number.isInteger(value))) return fallback;
  if ((rule.min !== undefined && value < rule.min) || (rule.above !== undefined && value <= rule.above)) return fallback;
  return value;
}

/**
 * A yes/no setting: `true`/`1`/`yes`/`on` or `false`/`0`/`no`/`off` (any case); undefined when unset, blank or
 * anything else, so the caller's default applies. Read at each call.
 */
export function envFlag(name: SettingName): boolean | undefined {
  const raw = process.env[name]?.trim().toLowerCase();
  if (raw === "true" || raw === "1" || raw === "yes" || raw === "on") return true;
  if (raw === "false" || raw === "0" || raw === "no" || raw === "off") return false;
  return undefined;
}

/** The address the server listens on: HOST, which `npm start` passes to `next start` (unset or blank: 127.0.0.1, its default and `npm run dev`'s). */
export const listenHost = () => process.env.HOST?.trim() || "127.0.0.1";

/** Whether the server listens on loopback alone (HOST a loopback address, `[::1]` or `localhost`): only this machine reaches it. */
export function listensOnLoopbackOnly(): boolean {
  const host = listenHost().replace(/^\[(.*)\]$/, "$1");
  if (host.toLowerCase() === "localhost") return true;
  if (!ipaddr.isValid(host)) return false;
  const ip = ipaddr.process(host);
  return ip.range() === "loopback";
}
