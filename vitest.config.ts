import path from "node:path";
import { defineConfig } from "vitest/config";

export default defineConfig({
  resolve: { alias: { "@": path.resolve(import.meta.dirname) } },
  test: {
    include: ["test/**/*.test.ts", "lib/**/*.test.ts", "contracts/**/*.test.ts", "inngest/**/*.test.ts"],
    globalSetup: ["test/global-setup.ts"],
    setupFiles: ["test/worker-setup.ts"],
    environment: "node",
    testTimeout: 30_000,
    hookTimeout: 300_000,
  },
});
