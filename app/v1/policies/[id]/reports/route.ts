import { routes } from "@/lib/http/routes";
import { getPolicyReports } from "@/lib/policy-actions/operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(getPolicyReports);
