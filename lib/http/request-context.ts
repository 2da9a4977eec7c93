import { AsyncLocalStorage } from "node:async_hooks";

const current = new AsyncLocalStorage<{ requestId: string }>();

/** Runs `fn` as part of the API request `requestId` (handle() does, for every operation). */
export const withRequestId = <T>(requestId: string, fn: () => Promise<T>) => current.run({ requestId }, fn);

/**
 * The API request this code runs for (its `x-request-id`), or null in background work: what a
 * delivery log entry names as its `requestID`, through the intent the request created.
 */
export const currentRequestId = (): string | null => current.getStore()?.requestId ?? null;
