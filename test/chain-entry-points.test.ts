// `chain list` shows each chain's EntryPoints and whether the v0.8 pieces are deployed (what a chain offers, by default
// or as configured: chain-entry-points.unit.test.ts).
import { describe, expect, it } from "vitest";
import { listChains, describeChains } from "@/cli/chains";
import { ENTRY_POINT_V08 } from "@/lib/chain/deployment";

describe("EntryPoints per chain", () => {
  it("chain list names each chain's EntryPoints, with the v0.8 pieces deployed on the local chains", async () => {
    const result = await listChains();
    const local = result.chains.find((c) => c.chainId === 31337)!;
    expect(local).toMatchObject({ entryPoints: ["0.6", "0.8"], reachable: true, deployed: true, missing: [] });
    // Each paymaster's deposit at its own EntryPoint (local chains fund both), and their sum.
    const each = Object.values(local.paymasterDeposits!).map(Number);
    expect(Object.keys(local.paymasterDeposits!)).toEqual(["0.6", "0.8"]);
    for (const amount of each) expect(amount).toBeGreaterThan(0);
    expect(Number(local.paymasterDeposit)).toBeCloseTo(each[0]! + each[1]!, 6);
    expect(result.contracts.entryPointV08).toBe(ENTRY_POINT_V08);
    expect(describeChains(result)).toMatch(/31337 .*EntryPoints v0\.6, v0\.8 .*contracts deployed, paymaster deposit [\d.]+ \(v0\.6 [\d.]+, v0\.8 [\d.]+\)/);
  });
});
