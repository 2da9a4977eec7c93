export async function register() {
  if (process.env.NEXT_RUNTIME !== "nodejs" || process.env.NEXT_PHASE === "phase-production-build") return;
  // Before boot, so no request (not even one Next.js cannot route) is answered without them.
  (await import("./lib/http/node-server")).installRequestHooks();
  (await import("./lib/shutdown")).installShutdown();
  // The composition root: lib/'s background jobs go to the embedded runner or to Inngest from now on.
  (await import("./inngest/jobs")).registerJobs();
  const { boot } = await import("./lib/boot");
  await boot();
}
