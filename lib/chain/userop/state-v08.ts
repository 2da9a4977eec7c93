// State that makes an undeployed Upgradeable_v08 account (a SmartAccountV8 proxy of AccountFactoryV8) look deployed,
// so its call can be estimated before its factory runs: as counterfactualAccountState does for v0.6.
import { concat, encodeAbiParameters, keccak256, toHex, type Address, type Hex, type StateOverride } from "viem";
import { accountFactoryInitCodeV08 } from "@/lib/chain/accounts-v08";
import { serviceDeployment } from "@/lib/chain/contracts";
import type { ChainConfig } from "@/lib/chain/registry";
import { accountProxyCode } from "./gas";

// ERC-1967 implementation slot; SmartAccountV8's ERC-7201 namespace (owner, pendingOwner, guardians, guardianPosition, …).
const IMPLEMENTATION_SLOT: Hex = "0x360894a13ba1a3210667c828492db98dca3e2076cc3735a920a3ca505d382bbc";
const ACCOUNT_STORAGE_SLOT_V08 = 0xfcbd041a7ec4b78431e81f10baf76c8199822d81f1f877f59d60ca4fa03b4200n;

const word = (value: Address | bigint) => encodeAbiParameters([{ type: typeof value === "bigint" ? "uint256" : "address" }], [value]);

/** The proxy code, its implementation, owner and built-in guardian for an initCode of our AccountFactoryV8; null for any other. */
export async function counterfactualAccountStateV08(chain: ChainConfig, sender: Address, initCode: Hex): Promise<StateOverride | null> {
  const deployment = accountFactoryInitCodeV08(initCode);
  if (!deployment) return null;
  const { owner, guardian } = deployment;
  const stateDiff: { slot: Hex; value: Hex }[] = [
    { slot: IMPLEMENTATION_SLOT, value: word(serviceDeployment().accountImplementationV08) },
    { slot: toHex(ACCOUNT_STORAGE_SLOT_V08, { size: 32 }), value: word(owner) },
  ];
  if (guardian) {
    // `guardians` (namespace word 2) = [guardian], `guardianPosition` (word 3)[guardian] = 1.
    const guardiansSlot = ACCOUNT_STORAGE_SLOT_V08 + 2n;
    stateDiff.push(
      { slot: toHex(guardiansSlot, { size: 32 }), value: word(1n) },
      { slot: keccak256(word(guardiansSlot)), value: word(guardian) },
      { slot: keccak256(concat([word(guardian), word(guardiansSlot + 1n)])), value: word(1n) },
    );
  }
  return [{ address: sender, code: await accountProxyCode(chain), stateDiff }];
}
