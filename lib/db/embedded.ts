import fs from "node:fs";
import path from "node:path";

/**
 * PGlite is one database in one process. The process that opens `.data/pglite` holds this
 * lock; a CLI that finds it held by a live server hands its command to that server instead.
 */
export interface EmbeddedOwner {
  pid: number;
  /** Set by a running server: where and how the CLI may reach it. */
  adminUrl?: string;
  adminToken?: string;
}

const lockFile = (dataRoot: string) => path.join(dataRoot, "pglite.lock");

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

function readOwner(dataRoot: string): EmbeddedOwner | null {
  try {
    return JSON.parse(fs.readFileSync(lockFile(dataRoot), "utf8")) as EmbeddedOwner;
  } catch {
    return null;
  }
}

/** Takes the lock, or returns the live process that holds it. */
export function acquireEmbeddedLock(dataRoot: string): { acquired: true } | { acquired: false; owner: EmbeddedOwner } {
  fs.mkdirSync(dataRoot, { recursive: true });
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      const fd = fs.openSync(lockFile(dataRoot), "wx", 0o600);
      fs.writeSync(fd, JSON.stringify({ pid: process.pid } satisfies EmbeddedOwner));
      fs.closeSync(fd);
      process.once("exit", () => releaseEmbeddedLock(dataRoot));
      return { acquired: true };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      const owner = readOwner(dataRoot);
      if (owner && isAlive(owner.pid) && owner.pid !== process.pid) return { acquired: false, owner };
      // a stale lock from a process that died (or one being written this instant)
      if (!owner || !isAlive(owner.pid)) fs.rmSync(lockFile(dataRoot), { force: true });
    }
  }
  throw new Error(`Could not lock the embedded database (${lockFile(dataRoot)})`);
}

export function releaseEmbeddedLock(dataRoot: string) {
  if (readOwner(dataRoot)?.pid === process.pid) fs.rmSync(lockFile(dataRoot), { force: true });
}

/** A running server advertises its admin endpoint in the lock it holds. */
export function advertiseAdmin(dataRoot: string, adminUrl: string, adminToken: string) {
  fs.writeFileSync(lockFile(dataRoot), JSON.stringify({ pid: process.pid, adminUrl, adminToken } satisfies EmbeddedOwner), {
    mode: 0o600,
  });
}

export function embeddedOwner(dataRoot: string): EmbeddedOwner | null {
  const owner = readOwner(dataRoot);
  return owner && isAlive(owner.pid) && owner.pid !== process.pid ? owner : null;
}
