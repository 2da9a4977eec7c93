import { operations } from "@/lib/api";
import { downloadGasReport } from "@/lib/dashboard/gas-report-download";
import type { Operation } from "@/lib/http/operation";
import { googleCallback } from "@/lib/iam/google-operations";
import { runAdmin } from "@/lib/admin";
import { signingLinkSignature, signingLinkStatus } from "@/lib/signing/operations";

/**
 * Every operation a route file under app/ serves: the public API's (lib/api.ts) and the ones its OpenAPI document
 * leaves out (Google's callback, the signing page's, the dashboard's CSV download, the CLI's admin route). `npm run routes` writes the
 * route files from it and test/helpers/api.ts routes the tests' requests by it.
 */
export const endpoints: Operation[] = [...operations, googleCallback, signingLinkStatus, signingLinkSignature, downloadGasReport, runAdmin];
