/** @type {import('next').NextConfig} */
const nextConfig = {
  poweredByHeader: false,
  // PGlite loads its WebAssembly and data files relative to its own package, and viem's error
  // classes must be one copy (code matches them with instanceof): keep these out of the bundle.
  // The types are checked once, by `npx tsc --noEmit` over the whole project (CI's types step, beside lint), not again
  // in every build (about 45 s of `next build` on 2 cores, and of a fresh machine's first `npm start`).
  typescript: { ignoreBuildErrors: true },
  serverExternalPackages: ["@electric-sql/pglite", "postgres", "viem", "pino", "pino-pretty", "prom-client", "inngest", "drizzle-orm", "zod", "jose"],
};

export default nextConfig;
