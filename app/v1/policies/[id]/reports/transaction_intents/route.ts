import { routes } from "@/lib/http/routes";
import { getPolicyIntentReports } from "@/lib/policies/report-operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(getPolicyIntentReports);
