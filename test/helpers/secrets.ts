import fs from "node:fs";
import path from "node:path";

/**
 * The secrets a test run handles (API keys, webhook signing secrets, passwords, tokens), written
 * down per test process so the run's teardown can grep every log of the run for them
 * (test/helpers/global-setup.ts): none may ever appear in a log line.
 */
const SECRET_FIELD = /secret|password|privatekey|token/i;
const seen = new Set<string>();

function record(value: string) {
  const dir = process.env.TEST_LOG_DIR;
  if (!dir || seen.has(value)) return;
  seen.add(value);
  fs.appendFileSync(path.join(dir, `secrets-${process.pid}.txt`), `${value}\n`);
}

/** Records the secret-looking strings in a request or response body: by field name, or sk_ keys anywhere. */
export function rememberSecrets(value: unknown, field = ""): void {
  if (typeof value === "string") {
    // A bare number is an amount (tokenContractAmount, tokenCharge: "token" fields) and a 20-byte hex an address
    // (tokenContract), never a secret of these tests; a private key is 32 bytes.
    const amount = /^\d+$/.test(value);
    const address = /^0x[0-9a-fA-F]{40}$/.test(value);
    if (value.length >= 12 && !amount && !address && (SECRET_FIELD.test(field) || /^sk_(test|live)_/.test(value)) && !/^(whsec_)?\*+$/.test(value)) record(value);
    return;
  }
  if (Array.isArray(value)) for (const item of value) rememberSecrets(item, field);
  else if (value && typeof value === "object") for (const [key, item] of Object.entries(value)) rememberSecrets(item, key);
}

/** Every log line of the run that carries a recorded secret: `file: secret (shortened)`. */
export function secretsInLogs(dir: string): { leaks: string[]; secrets: number; lines: number } {
  const files = fs.readdirSync(dir);
  const secrets = new Set(files.filter((f) => f.startsWith("secrets-")).flatMap((f) => fs.readFileSync(path.join(dir, f), "utf8").split("\n").filter(Boolean)));
  const leaks: string[] = [];
  let lines = 0;
  for (const file of files.filter((f) => f.endsWith(".log"))) {
    const text = fs.readFileSync(path.join(dir, file), "utf8");
    lines += text.split("\n").filter(Boolean).length;
    for (const secret of secrets) if (text.includes(secret)) leaks.push(`${file}: ${secret.slice(0, 10)}…`);
  }
  return { leaks, secrets: secrets.size, lines };
}
