import { developerProjectScope, sessionDeveloper } from "@/lib/dashboard/context";
import { gasReport, gasReportQuery } from "@/lib/dashboard/gas-report";
import { gasReportCsv, gasReportFilename } from "@/lib/dashboard/gas-report-csv";
import { getDb } from "@/lib/db/client";
import { ApiError } from "@/lib/http/errors";
import { errorResponse } from "@/lib/http/handle";
import { newId } from "@/lib/ids";

/**
 * The gas report as CSV, for the page's "Download CSV" link: the dashboard session, not an API
 * key, authenticates it, and someone else's project is a 404 as on the pages.
 */
export async function GET(request: Request, { params }: { params: Promise<{ projectId: string; mode: string }> }) {
  try {
    const developer = await sessionDeveloper();
    if (!developer) throw new ApiError(401, "authentication_error", "Sign in to the dashboard to download gas reports.");
    const { projectId, mode } = await params;
    const scope = await developerProjectScope(developer.id, projectId, mode);
    if (!scope) throw new ApiError(404, "invalid_request_error", `No such project: '${projectId}' (${mode})`);
    const report = await gasReport(await getDb(), scope.ctx, gasReportQuery(new URL(request.url).searchParams));
    return new Response(gasReportCsv(report), {
      headers: {
        "content-type": "text/csv; charset=utf-8",
        "content-disposition": `attachment; filename="${gasReportFilename(report)}"`,
        "cache-control": "no-store",
      },
    });
  } catch (err) {
    return errorResponse(err, newId("request"));
  }
}
