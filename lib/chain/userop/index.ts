// User operations for EntryPoint v0.6 and, beside it, v0.8 (the *V08 names; EIP-7702 accounts included): building (gas
// by simulation), encoding, sponsorship, fees and revert reasons.
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
export {
  EIP7702_FACTORY,
  isEip7702Factory,
  paymasterPaysV08,
  preVerificationGasV08,
  requiredPrefundV08,
  signUserOperationV08,
  toPackedOp,
  userOperationHashV08,
  AUTHORIZATION_GAS,
  type SignatureScheme,
  type UserOpV08,
} from "./encoding-v08";
export {
  buildUserOperationV08,
  callValueV08,
  CALL_GAS_MARGIN_V08,
  encodeAccountCallsV08,
  estimateUserOperationV08,
  PAYMASTER_GAS_MARGIN,
  type BuildUserOperationV08Params,
  type PaymasterFieldsV08,
  type UserOperationEstimateV08,
} from "./build-v08";
export { failedOpV08, parseValidationData, simulateHandleOpV08, type ExecutionResultV08, type ValidationData } from "./simulate-v08";
export { PAYMASTER_POST_OP_GAS_V08, sponsorUserOperationV08, stubPaymasterV08 } from "./paymaster-v08";
export { counterfactualAccountStateV08 } from "./state-v08";
