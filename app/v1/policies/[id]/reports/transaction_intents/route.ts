import { routes } from "@/lib/http/routes";
import { getPolicyIntentReports } from "@/lib/policy-actions/operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(getPolicyIntentReports);
