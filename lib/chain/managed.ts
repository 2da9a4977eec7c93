import {
  concat,
  decodeFunctionData,
  encodeAbiParameters,
  encodeDeployData,
  encodeFunctionData,
  getContractAddress,
  isAddressEqual,
  keccak256,
  size,
  slice,
  toHex,
  type Address,
  type Hex,
  type StateOverride,
} from "viem";
import { managedAccountFactoryAbi, managedAccountProxyBytecode, managedBeaconAbi, managedBeaconBytecode } from "@/contracts/artifacts";
import { serviceAccount } from "@/lib/keys/service-keys";
import { publicClient } from "./clients";
import { serviceDeployment } from "./contracts";
import { accountCreate2Salt } from "./deployment";
import type { ChainConfig } from "./registry";
import { processSingleton } from "@/lib/singleton";

/**
 * ManagedV5 accounts, off-chain: the same computations as ManagedAccountFactory (beaconOf, getAddress…), so an
 * account's address and initCode need no chain call. Each project has one beacon, at the same address on every
 * chain for this installation (the factory's address and the beacon's init code depend on its beacon admin).
 */

/** What managed addresses depend on; `managedSetup()` is this installation's. */
export interface ManagedSetup {
  factory: Address;
  implementation: Address;
  admin: Address;
}

/** The key that owns every project's beacon: the only one that can upgrade managed accounts. */
export const beaconAdmin = () => serviceAccount("beacon-admin");

export const managedSetup = (): ManagedSetup => {
  const { managedAccountFactory, accountImplementation } = serviceDeployment();
  return { factory: managedAccountFactory, implementation: accountImplementation, admin: beaconAdmin().address };
};

/** The ManagedAccountFactory CREATE2 salt of a project's beacon. */
export const beaconKey = (projectId: string): Hex => keccak256(toHex(`beacon:${projectId}`));

/** Where the beacon of `key` is (or will be, once a first managed account or an upgrade deploys it). */
export function beaconAddressOf(setup: ManagedSetup, key: Hex): Address {
  return getContractAddress({ opcode: "CREATE2", from: setup.factory, salt: key, bytecode: beaconInitCode(setup) });
}

/** A project's beacon's creation code: the same for every project (the key only salts it). */
const beaconInitCode = (setup: ManagedSetup) =>
  encodeDeployData({ abi: managedBeaconAbi, bytecode: managedBeaconBytecode, args: [setup.implementation, setup.admin] });

/** The address of a managed account (a BeaconProxy to the beacon of `key`), with `guardian` built in when given. */
export function managedAddressOf(setup: ManagedSetup, key: Hex, owner: Address, salt: Hex, guardian: Address | null = null): Address {
  const proxyInitCode = concat([managedAccountProxyBytecode, encodeAbiParameters([{ type: "address" }], [beaconAddressOf(setup, key)])]);
  return getContractAddress({ opcode: "CREATE2", from: setup.factory, salt: accountCreate2Salt(owner, salt, guardian), bytecode: proxyInitCode });
}

/** The factory call (userOperation initCode, ERC-6492 factory data) deploying a managed account, and its beacon when missing. */
export function managedCallOf(factory: Address, key: Hex, owner: Address, salt: Hex, guardian: Address | null = null) {
  const data = guardian
    ? encodeFunctionData({ abi: managedAccountFactoryAbi, functionName: "createAccountWithGuardian", args: [key, owner, guardian, salt] })
    : encodeFunctionData({ abi: managedAccountFactoryAbi, functionName: "createAccount", args: [key, owner, salt] });
  return { factory, data, initCode: concat([factory, data]) };
}

/** The project's beacon on every chain. */
export const managedBeaconAddress = (projectId: string) => beaconAddressOf(managedSetup(), beaconKey(projectId));

export const managedAccountAddress = (projectId: string, owner: Address, salt: Hex, guardian: Address | null) =>
  managedAddressOf(managedSetup(), beaconKey(projectId), owner, salt, guardian);

export const managedFactoryCall = (projectId: string, owner: Address, salt: Hex, guardian: Address | null) =>
  managedCallOf(serviceDeployment().managedAccountFactory, beaconKey(projectId), owner, salt, guardian);

// ---------------------------------------------------------------- estimating before deployment

/** What a managed account's initCode deploys: null unless it calls our ManagedAccountFactory's createAccount…. */
export function managedInitCode(initCode: Hex): { beacon: Address; owner: Address; guardian: Address | null } | null {
  const setup = managedSetup();
  if (size(initCode) < 24 || !isAddressEqual(slice(initCode, 0, 20), setup.factory)) return null;
  try {
    const call = decodeFunctionData({ abi: managedAccountFactoryAbi, data: slice(initCode, 20) });
    if (call.functionName === "createAccount") return { beacon: beaconAddressOf(setup, call.args[0]), owner: call.args[1], guardian: null };
    if (call.functionName === "createAccountWithGuardian") return { beacon: beaconAddressOf(setup, call.args[0]), owner: call.args[1], guardian: call.args[2] };
  } catch {
    // not a factory call we know: refused by the caller like any foreign initCode
  }
  return null;
}

const word = (address: Address) => encodeAbiParameters([{ type: "address" }], [address]);

const runtimeCache = processSingleton("managedRuntime", () => new Map<string, Hex>());

/** Runtime code from creation code (an eth_call of it returns it), once per chain and input. */
async function runtimeOf(chain: ChainConfig, creation: Hex, stateOverride?: StateOverride): Promise<Hex> {
  const cacheKey = `${chain.chainId}:${keccak256(creation)}`;
  const cached = runtimeCache.get(cacheKey);
  if (cached) return cached;
  const { data } = await publicClient(chain).call({ data: creation, stateOverride });
  if (!data || data === "0x") throw new Error(`Could not compute a managed account's runtime code on chain ${chain.chainId}`);
  runtimeCache.set(cacheKey, data);
  return data;
}

/**
 * The state that makes an undeployed managed account look deployed, so its call can be estimated before its initCode
 * runs: the account's proxy code with `accountStorage` (owner, guardian), and the project's beacon when it is not
 * deployed yet (UpgradeableBeacon keeps its owner in slot 0 and the implementation in slot 1).
 */
export async function managedAccountState(
  chain: ChainConfig,
  sender: Address,
  deploying: { beacon: Address },
  accountStorage: { slot: Hex; value: Hex }[],
): Promise<StateOverride> {
  const setup = managedSetup();
  const beaconCode = await publicClient(chain).getCode({ address: deploying.beacon });
  const beaconState: StateOverride =
    beaconCode && beaconCode !== "0x"
      ? []
      : [
          {
            address: deploying.beacon,
            code: await runtimeOf(chain, beaconInitCode(setup)),
            stateDiff: [
              { slot: toHex(0, { size: 32 }), value: word(setup.admin) },
              { slot: toHex(1, { size: 32 }), value: word(setup.implementation) },
            ],
          },
        ];
  // The proxy's constructor asks the beacon for its implementation, so the beacon must exist for the eth_call too.
  const proxyCode = await runtimeOf(chain, concat([managedAccountProxyBytecode, word(deploying.beacon)]), beaconState);
  return [{ address: sender, code: proxyCode, stateDiff: accountStorage }, ...beaconState];
}
