import { Inngest } from "inngest";
import { redactingLogger } from "./logger";
import { envRaw } from "@/lib/config";

export const inngest = new Inngest({ id: "smart-wallet-service", logger: redactingLogger() });

/**
 * With Inngest configured (cloud keys, a self-hosted base URL or the dev server), functions are
 * served at /api/inngest and events go to Inngest; otherwise the embedded runner runs them.
 */
export const usesInngestServer = () =>
  Boolean(envRaw("INNGEST_EVENT_KEY") || envRaw("INNGEST_SIGNING_KEY") || envRaw("INNGEST_DEV") || envRaw("INNGEST_BASE_URL"));
