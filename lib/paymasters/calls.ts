// What an op a client built calls, as the policy's rules and approval webhooks see it: our accounts' execute /
// executeBatch decoded for either EntryPoint version (v0.6 SmartAccount's three arrays; v0.8 BaseAccount's Call[],
// which SmartAccountV8 and DelegatedAccountV8 share with Simple7702Account).
import { decodeFunctionData, isAddressEqual, type Abi, type Address, type Hex } from "viem";
import { delegatedAccountV8Abi, simple7702AccountAbi, smartAccountAbi, smartAccountV8Abi } from "@/contracts/artifacts";
import { registeredContractsAt } from "@/lib/contracts/service";
import type { Db } from "@/lib/db/client";
import type { RuledCall } from "@/lib/policies/evaluate";
import type { ProjectContext } from "@/lib/tenant";
import { initCodeOf, type VersionedUserOp } from "./op-params";

export interface OperationCall {
  to: Address;
  value: bigint;
  data: Hex;
}

/** The calls of an execute/executeBatch callData of our accounts; throws when it is no function of the account's ABI. */
function decodeCalls(v: VersionedUserOp): OperationCall[] {
  const { callData, sender } = v.op;
  if (v.version === "0.8") {
    let decoded;
    try {
      decoded = decodeFunctionData({ abi: simple7702AccountAbi, data: callData });
    } catch {
      // Another function of our v0.8 accounts (a session key, a guardian…): a call of the account itself. Else this throws.
      try {
        decodeFunctionData({ abi: smartAccountV8Abi, data: callData });
      } catch {
        decodeFunctionData({ abi: delegatedAccountV8Abi, data: callData });
      }
      return [{ to: sender, value: 0n, data: callData }];
    }
    if (decoded.functionName === "execute") return [{ to: decoded.args[0], value: decoded.args[1], data: decoded.args[2] }];
    if (decoded.functionName === "executeBatch") return decoded.args[0].map((c) => ({ to: c.target, value: c.value, data: c.data }));
    return [{ to: sender, value: 0n, data: callData }];
  }
  const decoded = decodeFunctionData({ abi: smartAccountAbi, data: callData });
  if (decoded.functionName === "execute") return [{ to: decoded.args[0], value: decoded.args[1], data: decoded.args[2] }];
  if (decoded.functionName === "executeBatch") return decoded.args[0].map((to, i) => ({ to, value: decoded.args[1][i] ?? 0n, data: decoded.args[2][i]! }));
  return [{ to: sender, value: 0n, data: callData }];
}

/** The op's calls as an approval webhook is shown them: execute/executeBatch decoded (ruledCalls refused anything else). */
export function operationCalls(v: VersionedUserOp): OperationCall[] {
  try {
    const calls = decodeCalls(v);
    return calls.length === 1 && isAddressEqual(calls[0]!.to, v.op.sender) && calls[0]!.data === v.op.callData ? [] : calls;
  } catch {
    return []; // a bare deployment (empty callData)
  }
}

/**
 * The op's calls as policy rules see them. Only our accounts' execute/executeBatch can be read (other accounts'
 * callData says nothing we could check a rule against): anything else is refused with `invalid`'s error. A call's
 * contract is the project's registered contract at its address on the chain whose ABI decodes it (its function named).
 */
export async function ruledCalls(db: Db, ctx: ProjectContext, chainId: number, v: VersionedUserOp, invalid: (message: string) => Error): Promise<RuledCall[]> {
  const { sender, callData } = v.op;
  if (callData === "0x") {
    // A v0.8 op with only the 7702 marker still delegates the EOA: as a bare deployment, it is the account's own.
    if (initCodeOf(v) === "0x") throw invalid("The operation has no callData and no initCode: nothing to sponsor.");
    return [{ contractId: null, to: sender, functionName: null, self: true }];
  }
  let calls: OperationCall[];
  try {
    calls = decodeCalls(v);
  } catch {
    throw invalid("The operation's callData is not an execute or executeBatch call of this service's smart accounts, so the policy's rules cannot be checked against it.");
  }
  const registered = await registeredContractsAt(db, ctx, chainId, calls.map((c) => c.to));
  return calls.map(({ to, data }) => {
    if (isAddressEqual(to, sender)) return { contractId: null, to, functionName: null, self: true };
    const here = registered.get(to.toLowerCase()) ?? [];
    for (const contract of here) {
      try {
        const { functionName } = decodeFunctionData({ abi: contract.abi as Abi, data });
        return { contractId: contract.id, to, functionName, self: false };
      } catch {
        // not this registration's ABI
      }
    }
    return { contractId: here[0]?.id ?? null, to, functionName: null, self: false };
  });
}
