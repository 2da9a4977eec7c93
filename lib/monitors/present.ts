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

type ChainReading = NonNullable<MonitorResponse["chains"]>[number];

const seconds = (iso: string | null) => (iso ? unixSeconds(new Date(iso)) : null);

/** The readings of a balance.project monitor of every chain, by chain id. */
function chainReadings(row: EventRow): ChainReading[] {
  return Object.entries(row.chainStates ?? {})
    .map(([chainId, s]) => ({
      chainId: Number(chainId),
      value: s.value,
      blockNumber: s.block,
      checkedAt: seconds(s.checkedAt)!,
      state: (s.firedAt ? "fired" : s.belowSinceBlock !== null ? "below" : "armed") as ChainReading["state"],
      belowSinceBlock: s.belowSinceBlock,
      firedAt: seconds(s.firedAt),
    }))
    .sort((a, b) => a.chainId - b.chainId);
}

/** A monitor of every chain, summed up: its lowest reading (below when any is: the threshold is the same), fired when any chain fired. */
function acrossChains(row: EventRow): MonitorResponse {
  const chains = chainReadings(row);
  const lowest = chains.reduce<ChainReading | null>((low, c) => (low === null || BigInt(c.value) < BigInt(low.value) ? c : low), null);
  const fired = chains.filter((c) => c.firedAt !== null).map((c) => c.firedAt!);
  return {
    value: lowest?.value ?? null,
    blockNumber: lowest?.blockNumber ?? null,
    checkedAt: row.lastCheckedAt ? unixSeconds(row.lastCheckedAt) : null,
    state: fired.length ? "fired" : chains.some((c) => c.state === "below") ? "below" : "armed",
    belowSinceBlock: lowest?.belowSinceBlock ?? null,
    firedAt: fired.length ? Math.max(...fired) : null,
    error: row.lastError,
    chains,
  };
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
    monitor: !isBalanceTopic(row.topic)
      ? null
      : row.topic === "balance.project" && row.chainId === null
        ? acrossChains(row)
        : {
          value: row.lastValue,
          blockNumber: row.lastBlock,
          checkedAt: row.lastCheckedAt ? unixSeconds(row.lastCheckedAt) : null,
          state: monitorState(row),
          belowSinceBlock: row.belowSinceBlock,
            firedAt: row.firedAt ? unixSeconds(row.firedAt) : null,
            error: row.lastError,
          },
  };
}
