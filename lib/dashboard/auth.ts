import crypto from "node:crypto";
import type { NextAuthOptions } from "next-auth";
import Credentials from "next-auth/providers/credentials";
import GitHub from "next-auth/providers/github";
import Google from "next-auth/providers/google";
import { getDb } from "@/lib/db/client";
import { signInInput } from "@/lib/developers/schema";
import { isLockedOut, recordSignIn } from "@/lib/developers/lockout";
import { checkCredentials, oauthDeveloper } from "@/lib/developers/service";
import { clientAddress } from "@/lib/http/client-address";
import { hit, limits } from "@/lib/http/rate-limit";
import { derivationRoot } from "@/lib/keys/master";

// Self-hosted behind whatever host name it is reached by: take the origin from the request
// (next-auth otherwise assumes http://localhost:3000) unless NEXTAUTH_URL pins it.
process.env.AUTH_TRUST_HOST ??= "true";

function oauthProviders() {
  const providers = [];
  if (process.env.GITHUB_CLIENT_ID && process.env.GITHUB_CLIENT_SECRET) {
    providers.push(GitHub({ clientId: process.env.GITHUB_CLIENT_ID, clientSecret: process.env.GITHUB_CLIENT_SECRET }));
  }
  if (process.env.GOOGLE_CLIENT_ID && process.env.GOOGLE_CLIENT_SECRET) {
    providers.push(Google({ clientId: process.env.GOOGLE_CLIENT_ID, clientSecret: process.env.GOOGLE_CLIENT_SECRET }));
  }
  return providers;
}

/** The OAuth providers switched on by environment variables, for the sign-in page's buttons. */
export const enabledOAuthProviders = () => oauthProviders().map((p) => ({ id: p.id, name: p.name }));

let options: NextAuthOptions | undefined;

/** Sessions are JWTs in an encrypted cookie, keyed from the master key (or NEXTAUTH_SECRET). */
export function authOptions(): NextAuthOptions {
  options ??= {
    secret: process.env.NEXTAUTH_SECRET ?? Buffer.from(crypto.hkdfSync("sha256", derivationRoot(), "smart-wallet-service", "dashboard-sessions", 32)).toString("base64url"),
    session: { strategy: "jwt", maxAge: 7 * 24 * 3600 },
    pages: { signIn: "/login", error: "/login" },
    providers: [
      Credentials({
        name: "Email and password",
        credentials: { email: { label: "Email", type: "email" }, password: { label: "Password", type: "password" } },
        async authorize(raw, req) {
          const parsed = signInInput.safeParse(raw);
          if (!parsed.success) return null;
          const db = await getDb();
          if (await isLockedOut(db, parsed.data.email)) return null;
          // Per client address, whichever emails are tried (the lock-out is per email).
          const attempt = await hit(db, `auth:sign-in:${clientAddress(req?.headers)}`, limits.auth());
          if (!attempt.allowed) return null;
          const developer = await checkCredentials(db, parsed.data.email, parsed.data.password);
          await recordSignIn(db, parsed.data.email, developer !== null);
          return developer && { id: developer.id, email: developer.email, name: developer.name };
        },
      }),
      ...oauthProviders(),
    ],
    callbacks: {
      async signIn({ account, user }) {
        return account?.provider === "credentials" || Boolean(user.email);
      },
      async jwt({ token, user, account }) {
        if (account && account.provider !== "credentials") {
          const developer = await oauthDeveloper(await getDb(), {
            provider: account.provider,
            providerAccountId: account.providerAccountId,
            email: user.email!,
            name: user.name,
          });
          token.sub = developer.id;
        } else if (user) {
          token.sub = user.id;
        }
        return token;
      },
      async session({ session, token }) {
        return { ...session, developerId: token.sub };
      },
    },
  };
  return options;
}
