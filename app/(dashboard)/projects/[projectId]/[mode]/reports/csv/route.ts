import { routes } from "@/lib/http/routes";
import { downloadGasReport } from "@/lib/dashboard/gas-report-download";

export const { GET, POST, PUT, PATCH, DELETE } = routes(downloadGasReport);
