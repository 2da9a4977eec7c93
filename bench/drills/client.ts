// The drills' API client: what a careful real client does. Every POST carries an Idempotency-Key and is retried with
// that same key until the service answers (connection refused or reset while the server restarts, 5xx, 429 or 409
// "in progress" after its Retry-After), so a request retried after a crash can never create a second intent (one
// that died after recording its intent is answered with that intent: lib/http/idempotency.ts, Operation.recover). Each failed try is counted by
// type, the drills print them.
import crypto from "node:crypto";
import http from "node:http";
import { sleep } from "../lib";

/** Its own agent: the burst opens up to a thousand requests at once (bench/http.ts caps at 256 sockets). */
const agent = new http.Agent({ keepAlive: true, maxSockets: 1024 });

/** A request hanging longer than this counts as failed and is tried again (same key). */
const REQUEST_TIMEOUT_MS = 60_000;

export interface Answer {
  status: number;
  json: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- the API's JSON, read field by field
  retryAfter?: number;
  /** Idempotent-Replayed: the first try had done the work (the answer was lost with the server). */
  replayed: boolean;
}

function send(url: string, method: string, headers: Record<string, string>, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers, agent, timeout: REQUEST_TIMEOUT_MS }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("error", reject);
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        let json: unknown = null;
        try {
          json = JSON.parse(text);
        } catch {
          json = { raw: text.slice(0, 200) };
        }
        const retryAfter = Number(res.headers["retry-after"]);
        resolve({ status: res.statusCode ?? 0, json, retryAfter: Number.isFinite(retryAfter) ? retryAfter : undefined, replayed: res.headers["idempotent-replayed"] === "true" });
      });
    });
    req.on("timeout", () => req.destroy(Object.assign(new Error("no answer"), { code: "TIMEOUT" })));
    req.on("error", reject);
    req.end(body);
  });
}

/** "503 api_error", "429 rate_limit_error", "ECONNREFUSED": how the drills count failed tries. */
export const errorType = (answer: Answer) => `${answer.status} ${answer.json?.error?.type ?? "?"}`;
const networkType = (err: unknown) => (err as NodeJS.ErrnoException).code ?? (err as Error).message.slice(0, 60);

/** Worth trying again with the same key: the service (or its chain, or the way to it) failed, not the request. */
// A 409 with Retry-After: the key's first request is still in progress (or was cut off by a crash, until its claim lapses).
const transient = (status: number, retryAfter?: number) => status >= 500 || status === 429 || (status === 409 && retryAfter !== undefined);

export class DrillClient {
  /** Failed tries by type, retried or not. */
  readonly errors = new Map<string, number>();
  /** Retries answered with the first try's stored response: it had created the intent before its answer was lost. */
  replays = 0;
  /** The first answer of each refused (4xx, not retried) request type, for the report. */
  readonly refusals = new Map<string, string>();

  constructor(
    readonly base: string,
    private readonly secret: string,
  ) {}

  private count(type: string) {
    this.errors.set(type, (this.errors.get(type) ?? 0) + 1);
  }

  /** One request, no retry; anything but 200 throws (setup calls). */
  async call<T = any>(method: string, path: string, json?: unknown): Promise<T> { // eslint-disable-line @typescript-eslint/no-explicit-any
    const answer = await send(this.base + path, method, this.headers(json !== undefined), json === undefined ? undefined : JSON.stringify(json));
    if (answer.status !== 200) throw new Error(`${method} ${path.split("?")[0]}: ${answer.status} ${JSON.stringify(answer.json).slice(0, 500)}`);
    return answer.json as T;
  }

  private headers(hasBody: boolean, key?: string): Record<string, string> {
    return {
      authorization: `Bearer ${this.secret}`,
      ...(hasBody ? { "content-type": "application/json" } : {}),
      ...(key ? { "idempotency-key": key } : {}),
    };
  }

  /**
   * POSTs until the service answers 200 (returns the body) or refuses the request itself (a 4xx other than 429:
   * returns null, nothing to retry), with one Idempotency-Key throughout. `until` bounds the retrying.
   */
  async postIdempotent<T = any>(path: string, json: unknown, options: { key?: string; until?: number } = {}): Promise<T | null> { // eslint-disable-line @typescript-eslint/no-explicit-any
    const key = options.key ?? crypto.randomUUID();
    const body = JSON.stringify(json);
    for (let attempt = 0; ; attempt++) {
      let wait = Math.min(2_000, 100 * 2 ** Math.min(attempt, 5));
      try {
        const answer = await send(this.base + path, "POST", this.headers(true, key), body);
        if (answer.status === 200) {
          if (answer.replayed) this.replays++;
          return answer.json as T;
        }
        this.count(errorType(answer));
        if (!transient(answer.status, answer.retryAfter)) {
          if (!this.refusals.has(errorType(answer))) this.refusals.set(errorType(answer), JSON.stringify(answer.json).slice(0, 300));
          return null;
        }
        if ((answer.status === 429 || answer.status === 409) && answer.retryAfter !== undefined) wait = answer.retryAfter * 1000;
      } catch (err) {
        this.count(networkType(err));
      }
      if (options.until !== undefined && Date.now() + wait > options.until) throw new Error(`POST ${path}: no answer before the deadline (key ${key})`);
      await sleep(wait + Math.random() * 100);
    }
  }
}

/** Failed tries by type as "type ×n, …" (or "none"). */
export const describeErrors = (errors: Map<string, number>) =>
  errors.size
    ? [...errors]
        .sort((a, b) => b[1] - a[1])
        .map(([type, n]) => `${type} ×${n}`)
        .join(", ")
    : "none";
