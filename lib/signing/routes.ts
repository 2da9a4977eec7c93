import { getDb, type Db } from "@/lib/db/client";
import { requireHttps } from "@/lib/http/auth";
import { readBody } from "@/lib/http/body";
import { errorResponse, jsonResponse } from "@/lib/http/handle";
import { pathParams, readingRequest } from "@/lib/http/read";
import { clientAddress } from "@/lib/http/client-address";
import { enforce, limits } from "@/lib/http/rate-limit";
import { newId } from "@/lib/ids";
import { linkStatus, submitLinkSignature, tokenOf } from "./service";
import { verifySigningToken } from "./token";

type Route = { params: Promise<{ id: string }> };

/**
 * Before its token is checked, a signing request's body may hold no more than the token and a
 * signature (JWTs here are ~300 bytes; a smart-wallet signature a few KiB): an unauthenticated
 * client cannot make the service read or parse more.
 */
const UNVERIFIED_BODY_BYTES = 16 * 1024;

/** The signing page's endpoints: the link's token is the credential, errors are the API's JSON envelope. */
function tokenRoute(run: (db: Db, request: Request, id: string) => Promise<unknown>) {
  return async (request: Request, route: Route): Promise<Response> => {
    try {
      requireHttps(request);
      const { id } = await readingRequest(async () => pathParams(await route.params));
      const db = await getDb();
      // Unauthenticated but for the link's token: limited per client address, in the database all instances share.
      await enforce(db, `public:${clientAddress(request.headers)}`, limits.public(), "Too many requests from your address");
      return jsonResponse(await run(db, request, id!));
    } catch (err) {
      return errorResponse(err, newId("request"));
    }
  };
}

/**
 * POST {token, signature}: the owner's signature of the userOperationHash. A token in `?t=` is
 * checked before the body is read; one in the body is read from a body of at most UNVERIFIED_BODY_BYTES.
 */
export const postLinkSignature = tokenRoute(async (db, request, id) => {
  const url = new URL(request.url);
  const queryToken = url.searchParams.get("t");
  if (queryToken) await verifySigningToken(queryToken, id);
  const body = await readingRequest(() => readBody(request, queryToken ? undefined : UNVERIFIED_BODY_BYTES), "request body");
  return submitLinkSignature(db, tokenOf(url, body), id, body);
});

/** GET ?t=: the intent's progress. */
export const getLinkStatus = tokenRoute((db, request, id) => linkStatus(db, tokenOf(new URL(request.url)), id));
