import { Inngest } from "inngest";
import { redactingLogger } from "./logger";

export const inngest = new Inngest({ id: "smart-wallet-service", logger: redactingLogger() });

/**
 * With Inngest configured (cloud keys, a self-hosted base URL or the dev server), functions are
 * served at /api/inngest and events go to Inngest; otherwise the embedded runner runs them.
 */
export const usesInngestServer = () =>
  Boolean(process.env.INNGEST_EVENT_KEY || process.env.INNGEST_SIGNING_KEY || process.env.INNGEST_DEV || process.env.INNGEST_BASE_URL);
