// User operations for EntryPoint v0.6: building (gas by simulation), encoding, sponsorship, fees and revert reasons.
export {
  buildUserOperation,
  estimateUserOperation,
  simulateHandleOp,
  type BuildUserOperationParams,
  type ExecutionResult,
  type UserOperationEstimate,
} from "./build";
export {
  callValue,
  encodeAccountCalls,
  signUserOperation,
  toEntryPointOp,
  userOperationHash,
  type AccountCall,
  type UserOp,
} from "./encoding";
export { CallRevertedError, InsufficientFundsError, UserOperationRejectedError } from "./errors";
export { chainFees, DUMMY_SIGNATURE, MIN_PRIORITY_FEE, paymasterPays, preVerificationGas, requiredPrefund, type Fees } from "./gas";
export {
  paymasterHash,
  signPaymasterAndData,
  sponsorshipWindow,
  sponsorUserOperation,
  stubPaymasterAndData,
  type SponsorshipWindow,
} from "./paymaster";
export { describeRevert, revertDataOf } from "./revert";
