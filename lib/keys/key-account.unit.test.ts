import { describe, expect, it } from "vitest";
import { keccak256, parseEther, toHex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { keyAccount } from "./key-account";
import { decrypt, encrypt } from "./encryption";

describe("keyAccount", () => {
  const privateKey = generatePrivateKey();
  const viemAccount = privateKeyToAccount(privateKey);
  const ours = keyAccount(privateKey, viemAccount.address.toLowerCase() as `0x${string}`);

  it("signs exactly as viem's privateKeyToAccount (messages, hashes, typed data, transactions, authorizations)", async () => {
    expect(ours.address).toBe(viemAccount.address);
    const hash = keccak256(toHex("op"));
    expect(await ours.signMessage({ message: { raw: hash } })).toBe(await viemAccount.signMessage({ message: { raw: hash } }));
    expect(await ours.sign({ hash })).toBe(await viemAccount.sign({ hash }));
    const typedData = {
      domain: { name: "x", chainId: 1 },
      types: { M: [{ name: "v", type: "uint256" }] },
      primaryType: "M",
      message: { v: 1n },
    } as const;
    expect(await ours.signTypedData(typedData)).toBe(await viemAccount.signTypedData(typedData));
    const transaction = { chainId: 31337, to: viemAccount.address, value: parseEther("1"), nonce: 0, gas: 21_000n, maxFeePerGas: 1n, maxPriorityFeePerGas: 1n };
    expect(await ours.signTransaction(transaction)).toBe(await viemAccount.signTransaction(transaction));
    const authorization = { address: viemAccount.address, chainId: 31337, nonce: 3 };
    expect(await ours.signAuthorization(authorization)).toEqual(await viemAccount.signAuthorization(authorization));
  });

  it("is only handed a key whose address the decryption authenticated: another row's address does not decrypt", () => {
    const other = privateKeyToAccount(generatePrivateKey()).address;
    const sealed = encrypt(privateKey, `owner-key:proj_1:${viemAccount.address}`);
    expect(decrypt(sealed, `owner-key:proj_1:${viemAccount.address}`)).toBe(privateKey);
    expect(() => decrypt(sealed, `owner-key:proj_1:${other}`)).toThrow();
  });
});
