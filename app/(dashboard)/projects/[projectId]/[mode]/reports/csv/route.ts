import { downloadGasReport } from "@/lib/dashboard/gas-report-download";
import { routes } from "@/lib/http/routes";

export const { GET, POST, PUT, PATCH, DELETE } = routes(downloadGasReport);
