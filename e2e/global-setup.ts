import { startServer } from "../test/helpers/server";

/**
 * One production server for the suite: `next build` when sources changed, then `next start` on a
 * fresh data dir, which starts anvil with our contracts and creates the printed project.
 */
export default async function globalSetup() {
  // Every browser here comes from 127.0.0.1: per-address limits sized for the suite, not for one person.
  // SIGNUP=open: the specs sign several developers up on /signup (closed by default, issue 29.14).
  // TRIGGER_DISABLE_AFTER: a trigger failing its first two scheduled attempts (5 s apart) is disabled, so the subscriptions spec sees one.
  const env: Record<string, string> = { RATE_LIMIT_PER_SECOND: "0", RATE_LIMIT_AUTH_PER_MINUTE: "1000", RATE_LIMIT_PUBLIC_PER_MINUTE: "0", TRIGGER_DISABLE_AFTER: "4s", SIGNUP: "open" };
  // The e2e suite is about the embedded default: PGlite, whatever the vitest run used.
  delete process.env.DATABASE_URL;
  const server = await startServer(env);
  const anvilPort = server.output().match(/31337 test .*\(port (\d+)\)/)?.[1];
  if (!anvilPort) throw new Error(`no anvil port in the server's output:\n${server.output()}`);
  // The project printed at first start, whose keys go to whoever opens the claim link printed with it.
  const printedSecret = server.output().match(/test {2}publishable \S+\s+secret\s+(sk_test_\S+)/)?.[1];
  if (!printedSecret) throw new Error(`no printed project in the server's output:\n${server.output()}`);
  process.env.E2E_BASE_URL = server.url;
  process.env.E2E_PRINTED_SECRET = printedSecret;
  const claimUrl = server.output().match(/Claim it in the dashboard[^\n]*\n\s+(http\S+\/claim\/\S+)/)?.[1];
  if (!claimUrl) throw new Error(`no claim link in the server's output:\n${server.output()}`);
  process.env.E2E_CLAIM_URL = claimUrl;
  process.env.E2E_RPC_URL = `http://127.0.0.1:${anvilPort}`;
  return async () => {
    await server.stop();
  };
}
