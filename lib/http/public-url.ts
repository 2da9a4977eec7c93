import { listenHost, envText } from "@/lib/config";

/**
 * Our public base URL, for URLs a third party keeps and sends browsers to (an OAuth client's
 * registered redirect URI). PUBLIC_URL when set. In production without it, the address the server
 * listens on (HOST and PORT, as `npm start` sets them) when that is one address; never a Host or
 * X-Forwarded-* header there, which any client can write. In development and tests, the origin the
 * request came to (`requestOrigin`). Undefined when production has no name to trust.
 */
export function publicBaseUrl(requestOrigin: string | undefined): string | undefined {
  const configured = envText("PUBLIC_URL");
  if (configured) return configured.replace(/\/+$/, "");
  if (process.env.NODE_ENV !== "production") return requestOrigin;
  const host = listenHost();
  // Every interface: the server cannot know which of its names browsers reach it by.
  if (["0.0.0.0", "::", "[::]"].includes(host)) return undefined;
  const port = envText("PORT") ?? "3000";
  return `http://${host.includes(":") && !host.startsWith("[") ? `[${host}]` : host}:${port}`;
}
