import path from "node:path";
import { PGlite } from "@electric-sql/pglite";
import postgres from "postgres";
import type { RunningServer } from "./server";

/** Reads a server's database; on PGlite only while the server is stopped or killed (its database is one process's at a time). */
export async function queryServerDatabase<T>(server: RunningServer, text: string): Promise<T[]> {
  if (server.env.DATABASE_URL) {
    const db = postgres(server.env.DATABASE_URL, { max: 1, onnotice: () => {} });
    try {
      return [...(await db.unsafe(text))] as T[];
    } finally {
      await db.end();
    }
  }
  const db = await PGlite.create(path.join(server.dataDir, "pglite"));
  try {
    return (await db.query<T>(text)).rows;
  } finally {
    await db.close();
  }
}
