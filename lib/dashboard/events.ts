"use server";

import { revalidatePath } from "next/cache";
import { getDb } from "@/lib/db/client";
import { checkMonitors } from "@/lib/monitors/monitor";
import { presentEvent } from "@/lib/monitors/present";
import { getEvent } from "@/lib/monitors/service";
import { ApiError } from "@/lib/errors";
import { projectScope } from "./context";
import type { FormState } from "./form-state";

/** "Read now": one check of one of the project's monitors, outside the minute's schedule (it may fire, as a scheduled check would). */
export async function readMonitorNow(projectId: string, mode: string, id: string): Promise<FormState> {
  const scope = await projectScope(projectId, mode);
  const db = await getDb();
  try {
    await getEvent(db, scope.ctx, id);
  } catch (err) {
    if (err instanceof ApiError) return { error: { message: err.message } };
    throw err;
  }
  const summary = await checkMonitors(db, { runId: null, ids: [id] });
  revalidatePath(`${scope.base}/events`);
  if (summary.checked === 0) return { error: { message: "This event monitors nothing (deleted, or not a balance topic)." } };
  const row = await getEvent(db, scope.ctx, id);
  if (row.lastError) return { error: { message: `The read failed: ${row.lastError}` } };
  // A balance.project monitor of every chain shows its lowest reading.
  const { value, blockNumber } = presentEvent(row).monitor!;
  return { ok: true, data: { message: summary.fired.length ? `Read ${value} at block ${blockNumber}: below the threshold, the event was sent.` : `Read ${value} at block ${blockNumber}.` } };
}
