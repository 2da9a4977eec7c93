// Which EntryPoints a chain offers: both by default, or as configured (no chain needed; `chain list` against the test
// chains is in chain-entry-points.test.ts).
import { afterEach, describe, expect, it, vi } from "vitest";
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
});
