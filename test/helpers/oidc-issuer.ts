import crypto from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair, type JWK } from "jose";
import Provider from "oidc-provider";

/**
 * A real OpenID provider (the `oidc-provider` package) on 127.0.0.1, for tests: ID tokens come out
 * of a real authorization-code flow with PKCE, driven headlessly. Its interaction step signs in the
 * account named by `login_hint` and grants what was asked, as a user clicking through would.
 */

export interface IssuerClient {
  client_id: string;
  client_secret: string;
  /** Lifetime of the ID tokens this client gets (seconds); the provider's default (1 h) otherwise. */
  idTokenTtl?: number;
  /** Where it may send browsers back, besides the fixture's own callback. */
  redirectUris?: string[];
}

export interface TestIssuer {
  /** The issuer identifier its tokens carry in `iss`. */
  issuer: string;
  /** Where it is served (origin plus mount path): `${base}/jwks` etc. */
  base: string;
  jwksUrl: string;
  /** An ID token for `accountId`, obtained through the authorization-code flow for `clientId`. */
  idToken(clientId: string, accountId: string): Promise<string>;
  /** Opens an authorization URL (made by the service) as a browser would, signs in `accountId`, and answers where the provider sends the browser back. */
  authorize(url: string, accountId: string): Promise<URL>;
  /** How many requests a path (after the mount) has had. */
  hits(path: string): number;
  close(): Promise<void>;
}

export interface IssuerOptions {
  clients: IssuerClient[];
  /** Claims of each account (beyond `sub`). */
  accounts: Record<string, { email?: string; email_verified?: boolean; name?: string }>;
  /** The signing keys (private JWKs); a fresh RS256 key when not given. */
  keys?: JWK[];
  /** The issuer identifier; the served URL by default. */
  issuer?: (base: string) => string;
  /** A path prefix to serve it under (Supabase serves its auth under /auth/v1). */
  mount?: string;
  /** Where the JWKS is served, relative to the mount (default /jwks). */
  jwksPath?: string;
}

const REDIRECT_URI = "http://127.0.0.1/callback";

export async function signingKey(kid = crypto.randomUUID()): Promise<JWK> {
  const { privateKey } = await generateKeyPair("RS256", { extractable: true });
  return { ...(await exportJWK(privateKey)), kid, alg: "RS256", use: "sig" };
}

export async function startIssuer(options: IssuerOptions): Promise<TestIssuer> {
  const mount = options.mount ?? "";
  const keys = options.keys ?? [await signingKey()];
  const ttlByClient = new Map(options.clients.map((c) => [c.client_id, c.idTokenTtl]));
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}${mount}`;
  const issuer = options.issuer ? options.issuer(base) : base;

  const provider = new Provider(issuer, {
    clients: options.clients.map((c) => ({
      client_id: c.client_id,
      client_secret: c.client_secret,
      redirect_uris: [REDIRECT_URI, ...(c.redirectUris ?? [])],
      grant_types: ["authorization_code"],
      response_types: ["code"],
    })),
    jwks: { keys },
    cookies: { keys: [crypto.randomBytes(32).toString("hex")] },
    claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name"] },
    // The scope's claims go into the ID token itself (not only the userinfo endpoint), as Google's do.
    conformIdTokenClaims: false,
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx, interaction) => `${mount}/interaction/${interaction.uid}` },
    routes: { jwks: options.jwksPath ?? "/jwks" },
    ttl: {
      Interaction: 600,
      Session: 3600,
      Grant: 3600,
      AccessToken: 3600,
      AuthorizationCode: 60,
      IdToken: (_ctx, _token, client) => ttlByClient.get(client.clientId) ?? 3600,
    },
    async findAccount(_ctx, id) {
      const claims = options.accounts[id];
      if (!claims) return undefined;
      return { accountId: id, claims: async () => ({ sub: id, ...claims }) };
    },
  });
  const callback = provider.callback();

  const hits = new Map<string, number>();
  server.on("request", async (req, res) => {
    const url = req.url ?? "/";
    const path = new URL(url, "http://x").pathname.slice(mount.length);
    hits.set(path, (hits.get(path) ?? 0) + 1);
    if (!url.startsWith(mount)) {
      res.writeHead(404).end();
      return;
    }
    if (url.startsWith(`${mount}/interaction/`)) {
      try {
        const details = await provider.interactionDetails(req, res);
        if (details.prompt.name === "login") {
          await provider.interactionFinished(req, res, { login: { accountId: String(details.params.login_hint) } }, { mergeWithLastSubmission: false });
          return;
        }
        const grant = new provider.Grant({ accountId: details.session!.accountId, clientId: String(details.params.client_id) });
        const missing = details.prompt.details as { missingOIDCScope?: string[]; missingOIDCClaims?: string[] };
        if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(" "));
        if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
        await provider.interactionFinished(req, res, { consent: { grantId: await grant.save() } }, { mergeWithLastSubmission: true });
      } catch (err) {
        res.writeHead(500).end(String(err));
      }
      return;
    }
    // Mounted under a path as a framework would: the provider reads the prefix from originalUrl.
    (req as http.IncomingMessage & { originalUrl?: string }).originalUrl = url;
    req.url = url.slice(mount.length) || "/";
    callback(req, res);
  });

  /** Follows the provider's redirects (auth → interaction → resume → …), with its cookies, until it sends the browser elsewhere. */
  async function follow(start: string): Promise<URL> {
    const cookies = new Map<string, string>();
    let next = start;
    for (let hop = 0; hop < 10; hop++) {
      const res = await fetch(next, { redirect: "manual", headers: { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join("; ") } });
      for (const line of res.headers.getSetCookie()) {
        const [pair] = line.split(";");
        const at = pair!.indexOf("=");
        cookies.set(pair!.slice(0, at), pair!.slice(at + 1));
      }
      const location = res.headers.get("location");
      if (!location) throw new Error(`the provider answered ${res.status} without a redirect: ${await res.text()}`);
      const target = new URL(location, next);
      if (!target.href.startsWith(base)) return target;
      next = target.href;
    }
    throw new Error("too many redirects");
  }

  async function authorize(url: string, accountId: string): Promise<URL> {
    const start = new URL(url);
    start.searchParams.set("login_hint", accountId);
    return follow(start.href);
  }

  async function idToken(clientId: string, accountId: string): Promise<string> {
    const client = options.clients.find((c) => c.client_id === clientId)!;
    const verifier = crypto.randomBytes(32).toString("base64url");
    const challenge = crypto.createHash("sha256").update(verifier).digest("base64url");
    const cookies = new Map<string, string>();
    const remember = (res: Response) => {
      for (const line of res.headers.getSetCookie()) {
        const [pair] = line.split(";");
        const at = pair!.indexOf("=");
        cookies.set(pair!.slice(0, at), pair!.slice(at + 1));
      }
    };
    const cookieHeader = () => [...cookies].map(([k, v]) => `${k}=${v}`).join("; ");
    let next = `${base}/auth?${new URLSearchParams({
      client_id: clientId,
      redirect_uri: REDIRECT_URI,
      response_type: "code",
      scope: "openid email profile",
      state: crypto.randomUUID(),
      nonce: crypto.randomUUID(),
      code_challenge: challenge,
      code_challenge_method: "S256",
      login_hint: accountId,
    })}`;
    // Follow the provider's redirects (auth → interaction → resume → …) until it sends the browser back with a code.
    for (let hop = 0; hop < 10; hop++) {
      const res = await fetch(next, { redirect: "manual", headers: { cookie: cookieHeader() } });
      remember(res);
      const location = res.headers.get("location");
      if (!location) throw new Error(`the provider answered ${res.status} without a redirect: ${await res.text()}`);
      const target = new URL(location, next);
      if (target.href.startsWith(REDIRECT_URI)) {
        const code = target.searchParams.get("code");
        if (!code) throw new Error(`no code in the redirect: ${target.search}`);
        const token = await fetch(`${base}/token`, {
          method: "POST",
          headers: {
            "content-type": "application/x-www-form-urlencoded",
            authorization: `Basic ${Buffer.from(`${clientId}:${client.client_secret}`).toString("base64")}`,
          },
          body: new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: REDIRECT_URI, code_verifier: verifier }),
        });
        const body = (await token.json()) as { id_token?: string };
        if (!body.id_token) throw new Error(`the token endpoint gave no id_token: ${JSON.stringify(body)}`);
        return body.id_token;
      }
      next = target.href;
    }
    throw new Error("too many redirects");
  }

  return {
    issuer,
    base,
    jwksUrl: `${base}${options.jwksPath ?? "/jwks"}`,
    idToken,
    authorize,
    hits: (path) => hits.get(path) ?? 0,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
