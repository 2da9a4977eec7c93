import pino, { type DestinationStream, type Logger } from "pino";
import pretty from "pino-pretty";
import { errorText } from "@/lib/redact";
import { envRaw } from "@/lib/config";
import { processSingleton } from "@/lib/singleton";

/**
 * The service's one logger: JSON lines (pino) on stdout, one per request and one per background
 * run, for a log pipeline to index; human-readable under `next dev`; to a file with `LOG_FILE`
 * (the tests, which grep it for secrets). `LOG_LEVEL` (info) sets the level.
 *
 * What is logged is chosen field by field (ids, operation, status, timings): never headers,
 * bodies, keys or signatures. Errors go through `errorText` (URLs cut to their host, configured
 * RPC secrets removed), and the paths below are censored wherever a caller nests them anyway.
 */

const CENSORED = [
  "authorization",
  "secret",
  "password",
  "privateKey",
  "apiKey",
  "token",
  "signature",
  "headers",
  "body",
].flatMap((key) => [key, `*.${key}`]);

function destination(): DestinationStream {
  const file = envRaw("LOG_FILE");
  if (file) return pino.destination({ dest: file, append: true, sync: true, mkdir: true });
  if (process.env.NODE_ENV !== "production") {
    // Synchronous and in this thread: Next.js's bundles cannot load pino's worker-thread transports.
    return pretty({ colorize: process.stdout.isTTY, ignore: "pid,hostname", translateTime: "HH:MM:ss.l", singleLine: true, sync: true });
  }
  // Buffered (a write per 4 KB, not per line), flushed every second and at shutdown.
  const stream = pino.destination({ dest: 1, minLength: 4096, sync: false });
  setInterval(() => stream.flush(), 1000).unref();
  return stream;
}

function create(): Logger {
  return pino(
    {
      level: envRaw("LOG_LEVEL") ?? "info",
      base: { pid: process.pid },
      redact: { paths: CENSORED, censor: "[redacted]" },
      serializers: { err: (err: unknown) => errorText(err) },
      formatters: { level: (label) => ({ level: label }) },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination(),
  );
}

/** The process's logger (one per process: `next dev` may evaluate this module more than once). */
export const log: Logger = processSingleton("logger", create);

/** Writes out what the logger buffered (at shutdown). */
export function flushLog(): Promise<void> {
  return new Promise((resolve) => log.flush(() => resolve()));
}
