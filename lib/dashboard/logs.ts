import { decodeEventLog, type Abi, type Hex } from "viem";
import { decodedJson } from "@/lib/contracts/decoded-json";
import { listContracts } from "@/lib/contracts/operations";
import type { ProjectContext } from "@/lib/tenant";
import { readOperation } from "./operations";

export interface DecodedLog {
  address: string;
  contract: { id: string; name: string } | null;
  event: string | null;
  args: string | null;
}

/** A landed intent's logs, named and decoded with the ABI of the registered contract that emitted each (when there is one). */
export async function decodeLogs(ctx: ProjectContext, chainId: number, logs: Record<string, unknown>[]): Promise<DecodedLog[]> {
  if (logs.length === 0) return [];
  const contracts = await readOperation(ctx, listContracts, { chainId, limit: 100 });
  const byAddress = new Map(contracts.data.map((c) => [c.address.toLowerCase(), c]));
  return logs.map((log) => {
    const address = String(log.address ?? "");
    const contract = byAddress.get(address.toLowerCase());
    let event: string | null = null;
    let args: string | null = null;
    if (contract) {
      try {
        const decoded = decodeEventLog({ abi: contract.abi as unknown as Abi, data: log.data as Hex, topics: log.topics as [Hex, ...Hex[]] });
        event = decoded.eventName ?? null;
        args = decodedJson(decoded.args);
      } catch {
        // An event the stored ABI does not describe: shown raw.
      }
    }
    return { address, contract: contract ? { id: contract.id, name: contract.name ?? contract.id } : null, event, args };
  });
}
