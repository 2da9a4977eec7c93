import type { Db } from "@/lib/db/client";
import { requestLogs } from "@/lib/db/schema";
import type { ProjectContext } from "@/lib/projects/service";

export interface RequestLogEntry {
  id: string;
  project: ProjectContext | null;
  method: string;
  path: string;
  status: number;
  durationMs: number;
}

/** Method, path, status and timing only: never headers, keys or bodies. */
export async function recordRequest(db: Db, entry: RequestLogEntry) {
  await db.insert(requestLogs).values({
    id: entry.id,
    projectId: entry.project?.projectId ?? null,
    livemode: entry.project?.livemode ?? null,
    method: entry.method,
    path: entry.path,
    status: entry.status,
    durationMs: Math.round(entry.durationMs),
  });
}
