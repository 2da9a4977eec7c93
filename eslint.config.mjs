import nextVitals from "eslint-config-next/core-web-vitals";
import nextTs from "eslint-config-next/typescript";

const config = [
  ...nextVitals,
  ...nextTs,
  {
    rules: {
      "@typescript-eslint/no-unused-vars": ["warn", { argsIgnorePattern: "^_", varsIgnorePattern: "^_", destructuredArrayIgnorePattern: "^_" }],
    },
  },
  // Tests read untyped JSON responses.
  { files: ["test/**", "e2e/**"], rules: { "@typescript-eslint/no-explicit-any": "off" } },
  { ignores: [".next/**", ".data/**", "node_modules/**", "next-env.d.ts", "lib/db/migrations/**"] },
];

export default config;
