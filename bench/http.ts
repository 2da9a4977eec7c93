// The load client: node:http on keep-alive sockets, light enough that the client's own CPU stays small beside the
// server's on the same 2 cores (fetch costs several times more per request).
import http from "node:http";

const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

export interface HttpResponse {
  status: number;
  text: string;
}

export function request(url: string, options: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<HttpResponse> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: options.method ?? "GET", headers: options.headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(options.body);
  });
}
