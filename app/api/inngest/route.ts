import { serve } from "inngest/next";
import { inngest, usesInngestServer } from "@/inngest/client";
import { functions } from "@/inngest/functions";
import { registerJobs } from "@/inngest/jobs";
import { forbidden, missing } from "@/lib/errors";
import { errorResponse } from "@/lib/http/handle";
import { newId } from "@/lib/ids";
import { envText } from "@/lib/config";

// A composition root, as instrumentation.ts is: the jobs the functions served here send go through lib/'s port.
registerJobs();

const served = serve({ client: inngest, functions });

// Inngest authenticates its own calls (its signing key); here only the "not served" answer is ours.
const embedded = () =>
  errorResponse(
    missing("Background functions run in-process here; set INNGEST_EVENT_KEY/INNGEST_SIGNING_KEY (or INNGEST_DEV / INNGEST_BASE_URL) to serve them to Inngest."),
    newId("request"),
  );

/**
 * Without a signing key the SDK runs whatever it is sent (INNGEST_DEV skips the signature check):
 * anyone could start relays and deliveries with events of their own. Fine against a local dev
 * server; in production the route refuses instead (issue 29.14).
 */
const unsigned = () =>
  process.env.NODE_ENV === "production" && !envText("INNGEST_SIGNING_KEY")
    ? errorResponse(
        forbidden("Serving background functions without INNGEST_SIGNING_KEY is refused in production: their calls could not be authenticated. Set INNGEST_SIGNING_KEY, or unset the INNGEST_* settings to run them in-process."),
        newId("request"),
      )
    : null;

type Handler = (req: Request, ctx: unknown) => Promise<Response>;
const when =
  (handler: Handler): Handler =>
  (req, ctx) =>
    usesInngestServer() ? Promise.resolve(unsigned() ?? handler(req, ctx)) : Promise.resolve(embedded());

export const GET = when(served.GET as Handler);
export const POST = when(served.POST as Handler);
export const PUT = when(served.PUT as Handler);
