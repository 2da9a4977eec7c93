import net from "node:net";

export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * One HTTP/1.1 request written byte for byte to host:port (request targets such as `*` that no client library
 * sends); the answer's status, headers (names lower-cased) and body.
 */
export function rawRequest(host: string, port: number, method: string, target: string): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, host, () => socket.write(`${method} ${target} HTTP/1.1\r\nHost: ${host}:${port}\r\nConnection: close\r\n\r\n`));
    let text = "";
    socket.on("data", (d) => (text += d));
    socket.on("error", reject);
    socket.on("end", () => {
      const [head, ...rest] = text.split("\r\n\r\n");
      const [statusLine, ...lines] = head!.split("\r\n");
      const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(":")).toLowerCase(), l.slice(l.indexOf(":") + 1).trim()]));
      resolve({ status: Number(statusLine!.split(" ")[1]), headers, body: rest.join("\r\n\r\n") });
    });
  });
}
