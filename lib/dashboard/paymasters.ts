import { getDb } from "@/lib/db/client";
import { listPaymasters } from "@/lib/paymasters/service";
import type { ProjectContext } from "@/lib/tenant";

/** The mode's registered paymasters with a URL, for the policy form's paymaster select. */
export async function usablePaymasters(ctx: ProjectContext) {
  const { rows } = await listPaymasters(await getDb(), ctx, { limit: 100 });
  return rows.filter((p) => p.url).map((p) => ({ id: p.id, name: p.name ?? p.address }));
}
