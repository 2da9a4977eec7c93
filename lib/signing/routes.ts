import { getDb, type Db } from "@/lib/db/client";
import { requireHttps } from "@/lib/http/auth";
import { readBody } from "@/lib/http/body";
import { errorResponse, jsonResponse } from "@/lib/http/handle";
import { clientAddress } from "@/lib/http/client-address";
import { enforce, limits } from "@/lib/http/rate-limit";
import { newId } from "@/lib/ids";
import { linkStatus, submitLinkSignature, tokenOf } from "./service";

type Route = { params: Promise<{ id: string }> };

/** The signing page's endpoints: the link's token is the credential, errors are the API's JSON envelope. */
function tokenRoute(run: (db: Db, request: Request, id: string) => Promise<unknown>) {
  return async (request: Request, route: Route): Promise<Response> => {
    try {
      requireHttps(request);
      const { id } = await route.params;
      const db = await getDb();
      // Unauthenticated but for the link's token: limited per client address, in the database all instances share.
      await enforce(db, `public:${clientAddress(request.headers)}`, limits.public(), "Too many requests from your address");
      return jsonResponse(await run(db, request, id));
    } catch (err) {
      return errorResponse(err, newId("request"));
    }
  };
}

/** POST {token, signature}: the owner's signature of the userOperationHash. */
export const postLinkSignature = tokenRoute(async (db, request, id) => {
  const body = await readBody(request);
  return submitLinkSignature(db, tokenOf(new URL(request.url), body), id, body);
});

/** GET ?t=: the intent's progress. */
export const getLinkStatus = tokenRoute((db, request, id) => linkStatus(db, tokenOf(new URL(request.url)), id));
