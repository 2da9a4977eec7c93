import { accountOperations } from "@/lib/accounts/operations";
import { contractOperations } from "@/lib/contracts/operations";
import type { Operation } from "@/lib/http/operation";
import { playerOperations } from "@/lib/players/operations";
import { policyOperations, policyRuleOperations } from "@/lib/policies/operations";

/** Every public operation, for the OpenAPI document. */
export const operations: Operation[] = [...playerOperations, ...accountOperations, ...contractOperations, ...policyOperations, ...policyRuleOperations];
