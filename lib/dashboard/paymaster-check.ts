"use server";

import { serviceDeployment } from "@/lib/chain/contracts";
import { ApiError } from "@/lib/errors";
import { supportedEntryPoints } from "@/lib/paymasters/client";
import { getPaymaster } from "@/lib/paymasters/operations";
import { projectScope } from "./context";
import type { FormState } from "./form-state";
import { readOperation } from "./operations";

/**
 * The Paymasters page's Check: asks the registered service pm_supportedEntryPoints through lib/outbound (the mode's
 * outbound rule), and says whether it serves the EntryPoint v0.6 our accounts use.
 */
export async function checkPaymaster(projectId: string, mode: string, id: string): Promise<FormState> {
  const scope = await projectScope(projectId, mode);
  const paymaster = await readOperation(scope.ctx, getPaymaster, {}, { id });
  if (!paymaster.url) return { error: { message: "This paymaster has no url to check." } };
  const entryPoint = serviceDeployment().entryPoint;
  try {
    const served = await supportedEntryPoints({
      url: paymaster.url,
      livemode: scope.ctx.livemode,
      chainId: 0,
      entryPoint,
      context: paymaster.context ?? null,
      who: `Paymaster ${paymaster.id}`,
      param: "url",
      paramValue: paymaster.url,
    });
    const ok = served.some((e) => e.toLowerCase() === entryPoint.toLowerCase());
    return ok
      ? { ok: true, data: { message: "Answers, and serves EntryPoint v0.6.", entryPoints: served } }
      : { error: { message: `The service answers but serves ${served.join(", ") || "no EntryPoint"}, not EntryPoint v0.6 ${entryPoint}.` } };
  } catch (err) {
    if (err instanceof ApiError) return { error: { message: err.message } };
    throw err;
  }
}
