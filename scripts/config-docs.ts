// Writes docs/configuration.md and .env.example from the declaration of every setting (lib/settings.ts):
// `npm run docs:config`. lib/settings.unit.test.ts fails when either file differs from what this renders.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { SETTING_GROUPS, type Setting } from "../lib/settings";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** The generated files, relative to the repository's root. */
export const REFERENCE_FILE = "docs/configuration.md";
export const ENV_EXAMPLE_FILE = ".env.example";

const cell = (text: string) => text.replace(/\|/g, "\\|").replace(/\n/g, " ");
const slug = (title: string) =>
  title
    .toLowerCase()
    .replace(/[^a-z0-9 -]/g, "")
    .trim()
    .replace(/ /g, "-");

/** docs/configuration.md. */
export function renderReference(): string {
  const lines = [
    "# Configuration",
    "",
    "<!-- Generated from lib/settings.ts by `npm run docs:config`: edit the declaration there, not this file. -->",
    "",
    "Every setting is an environment variable, read through the declaration in `lib/settings.ts` (a test fails when",
    "the code reads one it does not declare, or when this page is stale). None is required: unset, each takes the",
    "default below, and `npm start` runs on an embedded database and local chains. A numeric setting that is blank, not",
    "a number or out of its range reads as its default; a malformed chain setting (`ANVIL_PORT`, `CHAINS`, `CHAIN_<id>_…`)",
    "is refused with an error naming it instead. `<id>` in a name stands for a chain id (`CHAIN_8453_RPC_URL`).",
    "",
    "`.env.example` lists the same settings with their defaults. Set them in the environment of the process (shell,",
    "systemd unit, container); a `.env` file in the working directory is loaded by the Next.js server only, so `npm",
    "start`'s own `HOST`, `PORT` and `NODE_OPTIONS`, and `npm run cli`, read the shell's environment alone.",
    "",
    ...SETTING_GROUPS.map((group) => `- [${group.title}](#${slug(group.title)})`),
    "",
  ];
  for (const group of SETTING_GROUPS) {
    lines.push(`## ${group.title}`, "");
    if ("intro" in group && group.intro) lines.push(group.intro, "");
    lines.push("| Variable | Type | Default | Meaning | Read by |", "|---|---|---|---|---|");
    for (const setting of group.settings as readonly Setting[]) {
      const readBy = setting.readBy.map((file) => `\`${file}\``).join(", ");
      lines.push(`| \`${setting.name}\` | ${setting.type}${setting.secret ? " (secret)" : ""} | ${cell(setting.default)} | ${cell(setting.description)} | ${readBy} |`);
    }
    lines.push("");
  }
  return lines.join("\n");
}

/** Markdown to plain text for a comment: code spans and links lose their marks. */
const plain = (text: string) => text.replace(/`([^`]*)`/g, "$1").replace(/\[([^\]]*)\]\([^)]*\)/g, "$1");

function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(/\s+/)) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines;
}

/** The value a commented-out line shows: the default when it is one literal (`` `10` ``), else nothing. */
function exampleValue(setting: Setting): string {
  if (setting.secret) return "";
  const literal = /^`([^`]*)`$/.exec(setting.default);
  return literal ? literal[1]! : "";
}

/** .env.example: every setting commented out, with its default where it is a plain value. */
export function renderEnvExample(): string {
  const lines = [
    "# Every setting of the service, with its default (generated from lib/settings.ts by `npm run docs:config`;",
    "# docs/configuration.md explains each). None is required: set what you change in the server's environment. A .env",
    "# file (this one copied, lines uncommented) is loaded by the Next.js server only: npm start's own HOST, PORT and",
    "# NODE_OPTIONS, and npm run cli, read the shell's environment.",
    "# <id> in a name stands for a chain id (CHAIN_8453_RPC_URL).",
    "",
  ];
  for (const group of SETTING_GROUPS) {
    lines.push(`# ${"=".repeat(3)} ${group.title} ${"=".repeat(Math.max(3, 100 - group.title.length - 7))}`, "");
    for (const setting of group.settings as readonly Setting[]) {
      const meaning = `${plain(setting.description)} (default: ${plain(setting.default)})`;
      lines.push(...wrap(meaning, 110).map((line) => `# ${line}`), `# ${setting.name}=${exampleValue(setting)}`, "");
    }
  }
  return lines.join("\n");
}

export const rendered = (): Record<string, string> => ({ [REFERENCE_FILE]: renderReference(), [ENV_EXAMPLE_FILE]: renderEnvExample() });

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  for (const [file, text] of Object.entries(rendered())) {
    fs.writeFileSync(path.join(root, file), text);
    console.log(`wrote ${file}`);
  }
}
