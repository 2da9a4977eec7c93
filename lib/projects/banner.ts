import type { ProjectWithKeys } from "./service";

/** `sk_live_…abcd` (the dashboard's key hint): enough to tell keys apart, useless to an onlooker. */
export const maskKey = (key: string) => `${key.slice(0, 8)}…${key.slice(-4)}`;

/**
 * The start banner's lines for a just-created project. The live secret key is masked: terminal
 * output ends up in scrollback, CI logs and process managers' log files; the full key is in the
 * saved file (mode 0600).
 */
export function createdProjectLines(project: ProjectWithKeys, savedIn: string, base: string): string[] {
  return [
    `  Created project "${project.name}" (${project.id}). Its keys, saved in ${savedIn}:`,
    `    test  publishable ${project.keys.test.publishable}`,
    `          secret      ${project.keys.test.secret}`,
    `    live  publishable ${project.keys.live.publishable}`,
    `          secret      ${maskKey(project.keys.live.secret)} (not printed: read it from ${savedIn})`,
    `  Try:  curl ${base}/v1/players -u ${project.keys.test.secret}: -d name=Alice`,
  ];
}
