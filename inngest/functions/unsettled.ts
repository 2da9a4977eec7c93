import { getDb } from "@/lib/db/client";
import { unsettledIntents } from "@/lib/intents/relay";
import { inngest } from "../client";
import { sendEvents } from "../runner";
import { expireEvent } from "./expire";
import { relayEvent } from "./relay";

/**
 * Every minute, sends again the event of each intent that has waited on its background run for a
 * while: a process that died after recording an intent but before sending its event leaves it with
 * none. The event ids are the ones first sent, so an intent whose run exists is not run twice.
 */
export const resendUnsettledIntents = inngest.createFunction(
  { id: "resend-unsettled-intents", retries: 2, triggers: [{ cron: "* * * * *" }] },
  async ({ step }) =>
    step.run("resend", async () => {
      const intents = await unsettledIntents(await getDb());
      if (intents.length) await sendEvents(intents.map((i) => (i.status === "pending" ? relayEvent(i.id) : expireEvent(i.id))));
      return { intents: intents.length };
    }),
);
