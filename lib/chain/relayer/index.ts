// The self-bundling relayer's API: queue signed user operations (enqueue) and find their receipts. Tests' hooks are
// in ./testing.
export { enqueue, type EnqueueV08Options } from "./queue";
export { RelayerFundsError } from "./executors";
export { findUserOperationReceipt, findUserOperationReceipts, receiptsFromLogs, UserOperationReceiptTimeoutError } from "./receipts";
export type { RelayedUserOperationReceipt, RelayResult } from "./types";
