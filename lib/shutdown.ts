import type http from "node:http";
import { envNumber } from "@/lib/config";
import { flushLog, log } from "@/lib/log";
import { processSingleton } from "@/lib/singleton";

/**
 * A clean stop on SIGTERM (or SIGINT): stop taking requests, let those in flight finish, let the
 * background runs finish or hand them over, close the database. Bounded by SHUTDOWN_GRACE_MS
 * (10 s) for the requests and again for the runs; a second signal exits at once.
 *
 * The HTTP side is seen through the request hook (lib/http/node-server.ts): it registers each
 * server and counts requests in flight, and answers 503 to a request arriving on a kept-alive
 * connection while draining.
 */
interface ShutdownState {
  draining: boolean;
  inFlight: number;
  servers: Set<http.Server>;
  idle: (() => void)[];
  steps: { name: string; run: (graceMs: number) => Promise<unknown> }[];
  installed: boolean;
}

const shutdown = processSingleton<ShutdownState>("shutdown", () => ({ draining: false, inFlight: 0, servers: new Set(), idle: [], steps: [], installed: false }));

export const isDraining = () => shutdown.draining;

const graceMs = () => envNumber("SHUTDOWN_GRACE_MS", 10_000, { min: 0 });

/** The request hook's part: a request began on `server`; it counts as in flight until its response closes. */
export function requestStarted(server: http.Server, res: http.ServerResponse) {
  shutdown.servers.add(server);
  shutdown.inFlight++;
  res.once("close", () => {
    shutdown.inFlight--;
    if (shutdown.inFlight === 0) for (const resolve of shutdown.idle.splice(0)) resolve();
  });
}

/**
 * What the process does after the HTTP server stopped, in order of registration (lib/boot.ts: the
 * runner, the request log, local chains, the database); each step gets the grace period and is
 * awaited whatever the previous did. The logs are flushed last, before the exit.
 */
export function onShutdown(name: string, run: (graceMs: number) => Promise<unknown>) {
  shutdown.steps.push({ name, run });
}

function requestsDone(timeoutMs: number): Promise<boolean> {
  if (shutdown.inFlight === 0) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), timeoutMs);
    shutdown.idle.push(() => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

async function drain(signal: string) {
  const started = performance.now();
  const grace = graceMs();
  shutdown.draining = true;
  log.info({ signal, inFlight: shutdown.inFlight, graceMs: grace }, "shutting down: no new requests");
  for (const server of shutdown.servers) {
    server.close();
    server.closeIdleConnections();
  }
  const finished = await requestsDone(grace);
  if (!finished) log.warn({ inFlight: shutdown.inFlight }, "shutting down: requests still in flight after the grace period");
  for (const step of shutdown.steps) {
    try {
      await step.run(grace);
    } catch (err) {
      log.error({ step: step.name, err }, "shutting down: a step failed");
    }
  }
  log.info({ signal, ms: Math.round(performance.now() - started) }, "shut down");
}

/**
 * Takes SIGTERM and SIGINT over (Next.js's own handlers would exit as soon as the HTTP server
 * closed, with the database and the runs still open). The first signal drains; a second forces.
 */
export function installShutdown() {
  if (shutdown.installed) return;
  shutdown.installed = true;
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    process.removeAllListeners(signal);
    process.on(signal, () => {
      if (shutdown.draining) {
        log.warn({ signal }, "second signal: exiting now");
        process.exit(1);
      }
      drain(signal)
        .then(() => 0, () => 1)
        .then(async (code) => {
          await flushLog().catch(() => {});
          process.exit(code);
        });
    });
  }
}
