import { z } from "zod";
import { defineOperation } from "@/lib/http/operation";
import { dashboardSession } from "./auth-strategy";
import { gasReport } from "./gas-report";
import { gasReportCsv, gasReportFilename } from "./gas-report-csv";

/**
 * The gas report as CSV, for the page's "Download CSV" link: the dashboard session, not an API
 * key, authenticates it, and someone else's project is a 404 as on the pages.
 */
export const downloadGasReport = defineOperation({
  operationId: "downloadGasReport",
  method: "GET",
  path: "/projects/{projectId}/{mode}/reports/csv",
  summary: "The gas report as CSV",
  tag: "Dashboard",
  auth: dashboardSession,
  internal: true,
  // The report checks its own parameters (dates, range, policy) with the page's messages.
  input: z.strictObject({ policy: z.string().optional(), from: z.string().optional(), to: z.string().optional() }),
  response: z.instanceof(Response),
  run: async ({ db, project, input }) => {
    const report = await gasReport(db, project, input);
    return new Response(gasReportCsv(report), {
      headers: {
        "content-type": "text/csv; charset=utf-8",
        "content-disposition": `attachment; filename="${gasReportFilename(report)}"`,
        "cache-control": "no-store",
      },
    });
  },
});
