import { routes } from "@/lib/http/routes";
import { getPolicyWithdrawable, withdrawFromPolicy } from "@/lib/policy-actions/operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(getPolicyWithdrawable, withdrawFromPolicy);
