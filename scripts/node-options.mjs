// Node options for the server process, shared by `npm start` and the tests' and bench's servers.

const SEMI_SPACE = "--max-semi-space-size=2";

/**
 * NODE_OPTIONS for the server under `env`. The embedded default (no DATABASE_URL: PGlite in the process) gets a
 * young generation of 2 MB semi-spaces instead of V8's 16 MB: its idle RSS stays about 30 MB lower and stops
 * growing over the first minutes (measured by `npm run bench`), for some 6–10 % fewer requests a second on
 * PGlite. A laptop's memory is the embedded default's budget; on PostgreSQL the server keeps V8's defaults.
 * A semi-space size already in NODE_OPTIONS wins.
 */
export function serverNodeOptions(env) {
  const options = env.NODE_OPTIONS ?? "";
  if (env.DATABASE_URL || options.includes("--max-semi-space-size")) return options || undefined;
  return `${options} ${SEMI_SPACE}`.trim();
}
