// Which EntryPoints a chain offers: both by default, or as configured; `chain list` shows them and whether the v0.8
// pieces are deployed.
import { afterEach, describe, expect, it, vi } from "vitest";
import { listChains, describeChains } from "@/cli/chains";
import { ENTRY_POINT_V06, ENTRY_POINT_V08 } from "@/lib/chain/deployment";
import { offeredEntryPoints } from "@/lib/chain/contracts";
import { chainEntryPoints, findChain, supportedChains } from "@/lib/chain/registry";

afterEach(() => vi.unstubAllEnvs());

describe("EntryPoints per chain", () => {
  it("offers v0.6 and v0.8 by default, at their canonical addresses", () => {
    const chain = findChain(31337)!;
    expect(chainEntryPoints(chain)).toEqual(["0.6", "0.8"]);
    expect(offeredEntryPoints(chain)).toEqual([
      { version: "0.6", address: ENTRY_POINT_V06 },
      { version: "0.8", address: ENTRY_POINT_V08 },
    ]);
  });

  it("takes CHAIN_<id>_ENTRY_POINTS and CHAINS' entryPoints, and refuses a version it does not serve", () => {
    vi.stubEnv("CHAIN_424243_RPC_URL", "http://127.0.0.1:9");
    vi.stubEnv("CHAIN_424243_ENTRY_POINTS", "v0.8");
    vi.stubEnv("CHAINS", JSON.stringify([{ chainId: 424244, rpcUrl: "http://127.0.0.1:9", entryPoints: ["0.6"] }]));
    expect(chainEntryPoints(findChain(424243)!)).toEqual(["0.8"]);
    expect(chainEntryPoints(findChain(424244)!)).toEqual(["0.6"]);
    vi.stubEnv("CHAIN_31337_ENTRY_POINTS", "0.8");
    expect(offeredEntryPoints(findChain(31337)!)).toEqual([{ version: "0.8", address: ENTRY_POINT_V08 }]);

    vi.stubEnv("CHAIN_424243_ENTRY_POINTS", "0.6,0.7");
    expect(() => supportedChains()).toThrow(/CHAIN_424243_ENTRY_POINTS must list EntryPoint versions among 0\.6, 0\.8/);
    vi.stubEnv("CHAIN_424243_ENTRY_POINTS", "");
    vi.stubEnv("CHAINS", JSON.stringify([{ chainId: 424244, rpcUrl: "http://127.0.0.1:9", entryPoints: ["0.7"] }]));
    expect(() => supportedChains()).toThrow(/CHAINS/);
  });

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
