// Our v0.6 SmartAccount as viem's own SmartAccount (toSmartAccount), for tests that drive viem's bundler and
// paymaster clients: execute/executeBatch, our factory's initCode, the owner's personal_sign of the v0.6 hash.
import { createPublicClient, getAddress, http, type Address } from "viem";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { entryPoint06Abi, getUserOperationHash, toSmartAccount } from "viem/account-abstraction";
import { foundry } from "viem/chains";
import { expect } from "vitest";
import { accountFactoryCall, accountSalt } from "@/lib/chain/accounts";
import { serviceDeployment } from "@/lib/chain/contracts";
import { DUMMY_SIGNATURE, encodeAccountCalls } from "@/lib/chain/userop";
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
