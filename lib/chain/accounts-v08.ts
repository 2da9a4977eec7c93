// Upgradeable_v08 accounts (SmartAccountV8 proxies from AccountFactoryV8 on EntryPoint v0.8): their address and the
// factory call that deploys them. The CREATE2 scheme is AccountFactory's (v0.6), with the v0.8 factory and implementation.
import { concat, decodeFunctionData, encodeAbiParameters, encodeFunctionData, getContractAddress, isAddressEqual, size, slice, type Address, type Hex } from "viem";
import { accountFactoryV8Abi, erc1967ProxyBytecode } from "@/contracts/artifacts";
import { serviceDeployment } from "./contracts";
import { accountCreate2Salt, type Deployment } from "./deployment";

type V08Factory = Pick<Deployment, "accountFactoryV08" | "accountImplementationV08">;

/** Where AccountFactoryV8 deploys `owner`'s account for `salt` (and `guardian`, when built in): computed, no RPC. */
export function counterfactualAddressV08(owner: Address, salt: Hex, guardian: Address | null = null, deployment: V08Factory = serviceDeployment()): Address {
  const proxyInitCode = concat([
    erc1967ProxyBytecode,
    encodeAbiParameters([{ type: "address" }, { type: "bytes" }], [deployment.accountImplementationV08, "0x"]),
  ]);
  return getContractAddress({
    opcode: "CREATE2",
    from: deployment.accountFactoryV08,
    salt: accountCreate2Salt(owner, salt, guardian),
    bytecode: proxyInitCode,
  });
}

/** The v0.8 op's `factory` / `factoryData` (and the joined initCode, ERC-6492 factory data) deploying the account. */
export function accountFactoryCallV08(owner: Address, salt: Hex, guardian: Address | null = null, deployment: Pick<Deployment, "accountFactoryV08"> = serviceDeployment()) {
  const factory = deployment.accountFactoryV08;
  const data = guardian
    ? encodeFunctionData({ abi: accountFactoryV8Abi, functionName: "createAccountWithGuardian", args: [owner, guardian, salt] })
    : encodeFunctionData({ abi: accountFactoryV8Abi, functionName: "createAccount", args: [owner, salt] });
  return { factory, data, initCode: concat([factory, data]) };
}

/** What an initCode calling AccountFactoryV8 deploys (owner, built-in guardian, salt); null for any other initCode. */
export function accountFactoryInitCodeV08(initCode: Hex, deployment: Pick<Deployment, "accountFactoryV08"> = serviceDeployment()): { owner: Address; guardian: Address | null; salt: Hex } | null {
  if (size(initCode) < 24 || !isAddressEqual(slice(initCode, 0, 20), deployment.accountFactoryV08)) return null;
  try {
    const call = decodeFunctionData({ abi: accountFactoryV8Abi, data: slice(initCode, 20) });
    if (call.functionName === "createAccount") return { owner: call.args[0], guardian: null, salt: call.args[1] };
    if (call.functionName === "createAccountWithGuardian") return { owner: call.args[0], guardian: call.args[1], salt: call.args[2] };
  } catch {
    // not a factory call we know
  }
  return null;
}
