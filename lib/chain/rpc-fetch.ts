import http from "node:http";
import https from "node:https";
import zlib from "node:zlib";
import { ResponseBodyTooLargeError } from "viem";

/**
 * A lean `fetchFn` for viem's `http()` transport to the chain nodes and bundlers we configure (never for user-set
 * URLs: those go through lib/outbound). Node's global fetch costs about 0.5 ms of CPU per JSON-RPC call (undici,
 * WHATWG streams for both bodies, and inside Next.js its patched fetch); a JSON-RPC POST needs none of that, only a
 * kept-alive socket, a string body and the answer as a string.
 *
 * It does only what viem's transport uses (utils/rpc/http.js): `ok`, `status`, `statusText`, `headers`, `body: null`
 * (viem then calls `text()`), `text()`. Retries, ids and batching stay viem's. viem moves `user:pass@` into an
 * Authorization header before calling it; a URL that still has them gets Basic auth from node:http the same way.
 */

/** viem's default bound on an answer (maxResponseBodySize); none of our transports change it. */
const MAX_BODY_BYTES = 10 * 1024 * 1024;

// One pool per protocol, kept alive: a request reuses a warm socket instead of a TCP (and TLS) handshake. Idle
// sockets close after 4 s, under the usual 5 s keep-alive of servers (Node's included), so a reused socket is rarely
// one the server is closing at the same moment; Node also honours a shorter `Keep-Alive: timeout=` the server sends.
const agentOptions = { keepAlive: true, maxSockets: 64, timeout: 4_000 };
const httpAgent = new http.Agent(agentOptions);
const httpsAgent = new https.Agent(agentOptions);

const abortError = (signal: AbortSignal): unknown =>
  signal.reason ?? Object.assign(new Error("This operation was aborted"), { name: "AbortError" });

/** Undoes a content coding (we ask for none, but a server may send one anyway), within the same bound. */
function decode(body: Buffer, coding: string | undefined): Buffer {
  if (!coding || coding === "identity") return body;
  const opts = { maxOutputLength: MAX_BODY_BYTES };
  if (coding === "gzip" || coding === "x-gzip") return zlib.gunzipSync(body, opts);
  if (coding === "deflate") return zlib.inflateSync(body, opts);
  if (coding === "br") return zlib.brotliDecompressSync(body, opts);
  throw new Error(`The node answered with an unsupported content encoding: ${coding}`);
}

export interface RpcResponse {
  ok: boolean;
  status: number;
  statusText: string;
  headers: Headers;
  body: null;
  text(): Promise<string>;
  json(): Promise<unknown>;
}

/**
 * `fetch` as viem's `http()` transport calls it (typed so it can be its `fetchFn`; the Response is the RpcResponse
 * subset). The whole answer is read before this resolves, so viem's timeout (our `signal`) bounds the body as well.
 */
export function rpcFetch(input: string | URL | Request, init: RequestInit = {}): Promise<Response> {
  return request(input, init) as unknown as Promise<Response>;
}

function request(input: string | URL | Request, init: RequestInit): Promise<RpcResponse> {
  return new Promise((resolve, reject) => {
    const { signal } = init;
    if (signal?.aborted) return reject(abortError(signal));
    if (input instanceof Request) return reject(new TypeError("rpcFetch takes a URL and an init, not a Request"));
    const url = typeof input === "string" ? new URL(input) : input;
    const body = init.body ?? undefined;
    if (body !== undefined && typeof body !== "string" && !(body instanceof Uint8Array)) {
      return reject(new TypeError("rpcFetch sends a string or bytes body only"));
    }
    // viem passes a plain object; anything else (Headers, pairs) is normalised.
    const headers: Record<string, string> =
      init.headers instanceof Headers || Array.isArray(init.headers) ? Object.fromEntries(new Headers(init.headers)) : { ...(init.headers as Record<string, string> | undefined) };
    if (body !== undefined) headers["content-length"] = String(typeof body === "string" ? Buffer.byteLength(body) : body.byteLength);

    let settled = false;
    const finish = (err: unknown, value?: RpcResponse) => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener("abort", onAbort);
      if (err) {
        req.destroy(); // the socket may be mid-answer: never hand it back to the pool
        reject(err);
      } else resolve(value!);
    };
    const onAbort = () => finish(abortError(signal!));

    const isHttps = url.protocol === "https:";
    if (!isHttps && url.protocol !== "http:") return reject(new TypeError(`rpcFetch: unsupported protocol ${url.protocol}`));
    const req = (isHttps ? https : http).request(url, { method: init.method ?? "POST", headers, agent: isHttps ? httpsAgent : httpAgent });
    signal?.addEventListener("abort", onAbort, { once: true });
    req.on("error", finish);
    req.on("response", (res) => {
      const declared = Number(res.headers["content-length"]);
      if (declared > MAX_BODY_BYTES) return finish(new ResponseBodyTooLargeError({ maxSize: MAX_BODY_BYTES, size: declared }));
      const chunks: Buffer[] = [];
      let size = 0;
      res.on("data", (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_BODY_BYTES) finish(new ResponseBodyTooLargeError({ maxSize: MAX_BODY_BYTES, size }));
        else chunks.push(chunk);
      });
      res.on("error", finish);
      // Closed before its end (the server dropped the connection): an error, never a truncated body.
      res.on("close", () => finish(new Error("The node closed the connection before the end of its answer")));
      res.on("end", () => {
        let text: string;
        const responseHeaders = new Headers();
        try {
          text = decode(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks), res.headers["content-encoding"]).toString("utf8");
          for (let i = 0; i < res.rawHeaders.length; i += 2) responseHeaders.append(res.rawHeaders[i]!, res.rawHeaders[i + 1]!);
        } catch (err) {
          return finish(err); // a body we cannot decode, or a header value Headers refuses
        }
        const status = res.statusCode ?? 0;
        finish(null, {
          ok: status >= 200 && status < 300,
          status,
          statusText: res.statusMessage ?? "",
          headers: responseHeaders,
          body: null,
          text: async () => text,
          json: async () => JSON.parse(text),
        });
      });
    });
    req.end(body);
  });
}
