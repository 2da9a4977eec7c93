/** @type {import('next').NextConfig} */
const nextConfig = {
  poweredByHeader: false,
  // PGlite loads its WebAssembly and data files relative to its own package, and viem's error
  // classes must be one copy (code matches them with instanceof): keep these out of the bundle.
  serverExternalPackages: ["@electric-sql/pglite", "postgres", "viem", "pino", "pino-pretty", "prom-client", "inngest", "drizzle-orm", "zod", "jose"],
};

export default nextConfig;
