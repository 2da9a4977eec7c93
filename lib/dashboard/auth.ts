import type { NextAuthOptions } from "next-auth";
import Credentials from "next-auth/providers/credentials";
import GitHub from "next-auth/providers/github";
import Google from "next-auth/providers/google";
import { getDb } from "@/lib/db/client";
import { signInInput } from "@/lib/developers/schema";
import { checkCredentials, oauthDeveloper, signInLockout } from "@/lib/developers/service";
import { clientAddress } from "@/lib/http/client-address";
import { hit, limits } from "@/lib/http/rate-limit";
import { derivedKey } from "@/lib/keys/master";
import { takeSignInProof } from "./sign-in-proof";
import { envDefault, envRaw } from "@/lib/config";

// Self-hosted behind whatever host name it is reached by: take the origin from the request
// (next-auth otherwise assumes http://localhost:3000) unless NEXTAUTH_URL pins it.
envDefault("AUTH_TRUST_HOST", "true");

function oauthProviders() {
  const providers = [];
  const github = { clientId: envRaw("GITHUB_CLIENT_ID"), clientSecret: envRaw("GITHUB_CLIENT_SECRET") };
  if (github.clientId && github.clientSecret) providers.push(GitHub({ clientId: github.clientId, clientSecret: github.clientSecret }));
  const google = { clientId: envRaw("GOOGLE_CLIENT_ID"), clientSecret: envRaw("GOOGLE_CLIENT_SECRET") };
  if (google.clientId && google.clientSecret) providers.push(Google({ clientId: google.clientId, clientSecret: google.clientSecret }));
  return providers;
}

/** The OAuth providers switched on by environment variables, for the sign-in page's buttons. */
export const enabledOAuthProviders = () => oauthProviders().map((p) => ({ id: p.id, name: p.name }));

let options: NextAuthOptions | undefined;

/** Sessions are JWTs in an encrypted cookie, keyed from the master key (or NEXTAUTH_SECRET). */
export function authOptions(): NextAuthOptions {
  options ??= {
    secret: envRaw("NEXTAUTH_SECRET") ?? Buffer.from(derivedKey("dashboard-sessions")).toString("base64url"),
    session: { strategy: "jwt", maxAge: 7 * 24 * 3600 },
    pages: { signIn: "/login", error: "/login" },
    providers: [
      Credentials({
        name: "Email and password",
        credentials: { email: { label: "Email", type: "email" }, password: { label: "Password", type: "password" } },
        async authorize(raw, req) {
          // From the sign-in page: a proof that checkSignIn verified the password, so it is not hashed again (./sign-in-proof.ts).
          const proof = (raw as Record<string, unknown> | undefined)?.proof;
          const parsed = signInInput.safeParse(typeof proof === "string" ? { ...raw, password: "" } : raw);
          if (!parsed.success) return null;
          const { email, password } = parsed.data;
          const db = await getDb();
          if ((await signInLockout.lockedFor(db, email)) > 0) return null;
          // Per client address, whichever emails are tried (the lock-out is per email).
          const attempt = await hit(db, `auth:sign-in:${clientAddress(req?.headers)}`, limits.auth());
          if (!attempt.allowed) return null;
          if (typeof proof === "string") {
            const proven = await takeSignInProof(db, proof, email);
            if (proven) await signInLockout.clear(db, email);
            return proven && { id: proven.id, email: proven.email, name: proven.name };
          }
          const developer = await checkCredentials(db, email, password);
          await (developer ? signInLockout.clear(db, email) : signInLockout.recordFailure(db, email));
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
