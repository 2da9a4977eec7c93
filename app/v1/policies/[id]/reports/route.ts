import { routes } from "@/lib/http/routes";
import { getPolicyReports } from "@/lib/policies/report-operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(getPolicyReports);
