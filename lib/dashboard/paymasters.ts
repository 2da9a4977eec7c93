import { listPaymasters } from "@/lib/paymasters/operations";
import type { ProjectContext } from "@/lib/projects/service";
import { readOperation } from "./operations";

/** The mode's registered paymasters with a URL, for the policy form's paymaster select. */
export async function usablePaymasters(ctx: ProjectContext) {
  const list = await readOperation(ctx, listPaymasters, { limit: 100 });
  return list.data.filter((p) => p.url).map((p) => ({ id: p.id, name: p.name ?? p.address }));
}
