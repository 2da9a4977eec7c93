import http from "node:http";
import type { AddressInfo, Socket } from "node:net";

export interface LoopbackServer {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** Closes the server, cutting the connections still open (a handler may never answer). */
  close(): Promise<void>;
}

/** An HTTP server on 127.0.0.1 (a port of its own) answering with `handler`: a node or receiver a test controls. */
export async function loopbackServer(handler: http.RequestListener): Promise<LoopbackServer> {
  const sockets = new Set<Socket>();
  const server = http.createServer(handler);
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
