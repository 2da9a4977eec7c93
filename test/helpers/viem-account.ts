// Our v0.6 SmartAccount as viem's own SmartAccount (toSmartAccount), for tests that drive viem's bundler and
// paymaster clients: execute/executeBatch, our factory's initCode, the owner's personal_sign of the v0.6 hash. Below
// it, the EntryPoint v0.8 accounts: a Delegated_v08 EOA through viem's toSimple7702SmartAccount, an Upgradeable_v08.
import { createPublicClient, getAddress, http, type Address } from "viem";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { entryPoint06Abi, entryPoint08Abi, getUserOperationHash, toSimple7702SmartAccount, toSmartAccount } from "viem/account-abstraction";
import { foundry } from "viem/chains";
import { expect } from "vitest";
import { accountFactoryCall, accountSalt } from "@/lib/chain/accounts";
import { accountFactoryCallV08 } from "@/lib/chain/accounts-v08";
import { serviceDeployment } from "@/lib/chain/contracts";
import { DUMMY_SIGNATURE, encodeAccountCalls, encodeAccountCallsV08 } from "@/lib/chain/userop";
import { call } from "./api";
import { chainOf } from "./chain";

/** Creates an account owned by `owner` through POST /v1/accounts (secret key `key`) and wraps it for viem. */
export async function viemSmartAccount(key: string, { owner = privateKeyToAccount(generatePrivateKey()), chainId = 31337 }: { owner?: PrivateKeyAccount; chainId?: number } = {}) {
  const created = await call("POST", "/v1/accounts", { key, json: { chainId, externalOwnerAddress: owner.address } });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  const address = getAddress(created.body.address as Address);
  const { factory, data } = accountFactoryCall(owner.address, accountSalt(created.body.player.id));
  const client = createPublicClient({ chain: { ...foundry, id: chainId }, transport: http(chainOf(chainId).rpcUrl) });
  const entryPoint = { address: serviceDeployment().entryPoint, abi: entryPoint06Abi, version: "0.6" as const };
  const account = await toSmartAccount({
    client,
    entryPoint,
    getAddress: async () => address,
    getFactoryArgs: async () => ({ factory, factoryData: data }),
    encodeCalls: async (calls) => encodeAccountCalls(calls.map((c) => ({ to: c.to, value: c.value ?? 0n, data: c.data ?? "0x" }))),
    decodeCalls: undefined,
    getStubSignature: async () => DUMMY_SIGNATURE,
    signMessage: async ({ message }) => owner.signMessage({ message }),
    signTypedData: async () => {
      throw new Error("not used");
    },
    async signUserOperation(op) {
      const hash = getUserOperationHash({ userOperation: { ...op, sender: address } as never, entryPointAddress: entryPoint.address, entryPointVersion: "0.6", chainId });
      return owner.signMessage({ message: { raw: hash } });
    },
  });
  return Object.assign(account, { record: created.body as { id: string; address: string; player: { id: string } } });
}

const v08Client = (chainId: number) => createPublicClient({ chain: { ...foundry, id: chainId }, transport: http(chainOf(chainId).rpcUrl) });
const entryPointV08 = () => ({ address: serviceDeployment().entryPointV08, abi: entryPoint08Abi, version: "0.8" as const });

/**
 * A player's own EOA as a Delegated_v08 account of the project (POST /v1/accounts, accountType DelegatedV8,
 * externalOwnerAddress = the EOA), wrapped by viem's own toSimple7702SmartAccount with our DelegatedAccountV8 as the
 * implementation: nothing of ours signs or encodes its operations.
 */
export async function viemDelegatedAccount(key: string, { owner = privateKeyToAccount(generatePrivateKey()), chainId = 31337 }: { owner?: PrivateKeyAccount; chainId?: number } = {}) {
  const created = await call("POST", "/v1/accounts", { key, json: { chainId, accountType: "DelegatedV8", externalOwnerAddress: owner.address } });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  expect(getAddress(created.body.address as Address)).toBe(owner.address);
  const account = await toSimple7702SmartAccount({ client: v08Client(chainId), owner, implementation: serviceDeployment().delegatedAccountV08, entryPoint: entryPointV08() });
  return Object.assign(account, { record: created.body as { id: string; address: string; player: { id: string } } });
}

/** The owner's signed EIP-7702 authorization of its EOA for `implementation` (our DelegatedAccountV8), at the EOA's current nonce: the relay sends it. */
export async function delegationAuthorization(owner: PrivateKeyAccount, { chainId = 31337, implementation = serviceDeployment().delegatedAccountV08 }: { chainId?: number; implementation?: Address } = {}) {
  const nonce = await v08Client(chainId).getTransactionCount({ address: owner.address, blockTag: "pending" });
  return owner.signAuthorization({ address: implementation, chainId, nonce });
}

/**
 * An Upgradeable_v08 account (SmartAccountV8 from AccountFactoryV8, POST /v1/accounts accountType UpgradeableV8)
 * through viem's generic toSmartAccount on EntryPoint v0.8: BaseAccount's execute/executeBatch(Call[]), the factory's
 * createAccount(owner, salt), and the owner's raw ECDSA signature of the v0.8 userOpHash (an EIP-712 digest).
 */
export async function viemSmartAccountV08(key: string, { owner = privateKeyToAccount(generatePrivateKey()), chainId = 31337 }: { owner?: PrivateKeyAccount; chainId?: number } = {}) {
  const created = await call("POST", "/v1/accounts", { key, json: { chainId, accountType: "UpgradeableV8", externalOwnerAddress: owner.address } });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  const address = getAddress(created.body.address as Address);
  const { factory, data } = accountFactoryCallV08(owner.address, accountSalt(created.body.player.id));
  const entryPoint = entryPointV08();
  const account = await toSmartAccount({
    client: v08Client(chainId),
    entryPoint,
    getAddress: async () => address,
    getFactoryArgs: async () => ({ factory, factoryData: data }),
    encodeCalls: async (calls) => encodeAccountCallsV08(calls.map((c) => ({ to: c.to, value: c.value ?? 0n, data: c.data ?? "0x" }))),
    decodeCalls: undefined,
    getStubSignature: async () => DUMMY_SIGNATURE,
    signMessage: async ({ message }) => owner.signMessage({ message }),
    signTypedData: async () => {
      throw new Error("not used");
    },
    async signUserOperation(op) {
      const hash = getUserOperationHash({ userOperation: { ...op, sender: address } as never, entryPointAddress: entryPoint.address, entryPointVersion: "0.8", chainId });
      return owner.sign({ hash });
    },
  });
  return Object.assign(account, { record: created.body as { id: string; address: string; player: { id: string } } });
}
