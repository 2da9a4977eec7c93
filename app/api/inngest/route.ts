import { serve } from "inngest/next";
import { inngest, usesInngestServer } from "@/inngest/client";
import { functions } from "@/inngest/functions";

const served = serve({ client: inngest, functions });

const embedded = () =>
  Response.json(
    { error: { type: "invalid_request_error", message: "Background functions run in-process here; set INNGEST_EVENT_KEY/INNGEST_SIGNING_KEY (or INNGEST_DEV / INNGEST_BASE_URL) to serve them to Inngest." } },
    { status: 404 },
  );

type Handler = (req: Request, ctx: unknown) => Promise<Response>;
const when = (handler: Handler): Handler => (req, ctx) => (usesInngestServer() ? handler(req, ctx) : Promise.resolve(embedded()));

export const GET = when(served.GET as Handler);
export const POST = when(served.POST as Handler);
export const PUT = when(served.PUT as Handler);
