import { deliverEvent } from "./deliver";
import { cancelUnsignedIntent } from "./expire";
import { indexTokenTransfers } from "./inventory";
import { monitorBalances } from "./monitors";
import { relayIntent, relayIntents } from "./relay";
import { reconcileSponsorship } from "./reconcile";
import { purgeExpiredRows } from "./retention";
import { watchSponsorship } from "./sponsorship";
import { resendUnsettledIntents } from "./unsettled";

/** Every background function: served to Inngest at /api/inngest, or run by the embedded runner. */
export const functions = [relayIntents, relayIntent, deliverEvent, cancelUnsignedIntent, resendUnsettledIntents, monitorBalances, indexTokenTransfers, purgeExpiredRows, watchSponsorship, reconcileSponsorship];
