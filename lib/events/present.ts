import { eventDefinitions } from "@/lib/db/schema";
import { BALANCE_TOPICS, type Topic } from "@/lib/deliveries/topics";
import { unixSeconds } from "@/lib/http/resource";
import type { EventResponse, MonitorResponse } from "./schema";

export type EventRow = typeof eventDefinitions.$inferSelect;

export const isBalanceTopic = (topic: string) => (BALANCE_TOPICS as readonly string[]).includes(topic);

/** armed: at or above the threshold (or never read); below: under it, not yet for numberOfBlocks blocks; fired: the event was sent. */
export function monitorState(row: EventRow): MonitorResponse["state"] {
  if (row.firedAt) return "fired";
  return row.belowSinceBlock !== null ? "below" : "armed";
}

/** An event definition as the API shows it, its monitor's stored reading included. */
export function presentEvent(row: EventRow): EventResponse {
  return {
    id: row.id,
    object: "event",
    createdAt: unixSeconds(row.createdAt),
    name: row.name,
    topic: row.topic as Topic,
    threshold: row.threshold,
    contract: row.contractId ? { id: row.contractId } : null,
    functionName: row.functionName,
    functionArgs: row.functionArgs,
    developerAccount: row.developerAccountId ? { id: row.developerAccountId } : null,
    chainId: row.chainId,
    numberOfBlocks: row.numberOfBlocks,
    deleted: row.deleted,
    monitor: isBalanceTopic(row.topic)
      ? {
          value: row.lastValue,
          blockNumber: row.lastBlock,
          checkedAt: row.lastCheckedAt ? unixSeconds(row.lastCheckedAt) : null,
          state: monitorState(row),
          belowSinceBlock: row.belowSinceBlock,
          firedAt: row.firedAt ? unixSeconds(row.firedAt) : null,
          error: row.lastError,
        }
      : null,
  };
}
