import nextVitals from "eslint-config-next/core-web-vitals";
import nextTs from "eslint-config-next/typescript";
import architecture from "./eslint/architecture.mjs";

/** The server's code: what the architecture rules below hold (tests and scripts may reach anywhere). */
const SERVER = ["lib/**/*.{ts,tsx}", "inngest/**/*.{ts,tsx}", "app/**/*.{ts,tsx}", "components/**/*.{ts,tsx}", "cli/**/*.ts", "instrumentation.ts"];

const config = [
  ...nextVitals,
  ...nextTs,
  {
    rules: {
      "@typescript-eslint/no-unused-vars": ["warn", { argsIgnorePattern: "^_", varsIgnorePattern: "^_", destructuredArrayIgnorePattern: "^_" }],
    },
  },
  // The shape (issue 33): no import cycle between files nor between domains (lib/'s folders, inngest/; type-only
  // imports excepted: they vanish at run time), and layers pointing down — lib/ never needs the background
  // functions, the routes, the pages or the CLI.
  {
    files: SERVER,
    ignores: ["**/*.test.ts"],
    plugins: { architecture },
    rules: {
      "architecture/no-cycle": "error",
      "architecture/no-domain-cycle": "error",
      "import/no-restricted-paths": [
        "error",
        {
          zones: [
            { target: "./lib", from: "./inngest", message: "lib/ sends jobs through lib/jobs/port.ts; the composition root (instrumentation.ts, inngest/jobs.ts) wires the runner in." },
            { target: "./lib", from: ["./app", "./components", "./cli", "./bench", "./test", "./e2e"], message: "lib/ is below the routes, pages, CLI and tests." },
            { target: "./inngest", from: ["./app", "./components", "./cli"], message: "the background functions are below the routes, pages and CLI." },
          ],
        },
      ],
    },
  },
  // Tests read untyped JSON responses.
  { files: ["test/**", "e2e/**"], rules: { "@typescript-eslint/no-explicit-any": "off" } },
  { ignores: [".next/**", ".data/**", "node_modules/**", "next-env.d.ts", "lib/db/migrations/**"] },
];

export default config;
