import { concat, encodeFunctionData, hashMessage, parseEther, type Address, type Hex, type PrivateKeyAccount } from "viem";
import { toPackedUserOperation, toSimple7702SmartAccount } from "viem/account-abstraction";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { delegatedAccountV8Abi } from "@/contracts/artifacts";
import { ENTRY_POINT_V08, SIMPLE_7702_ACCOUNT } from "@/lib/chain/deployment";
import { fund, now, randomAccount, send, walletFor, type TestChain } from "./helpers";
import {
  EIP7702_FACTORY,
  authorize,
  buildOpV08,
  executeBatchV08,
  executeV08,
  handleOpsV08,
  runOpV08,
  signOpV08,
  sponsorV08,
  startChainV08,
  userOpHashV08,
  type OpV08,
} from "./helpers-v08";

let t: TestChain;
beforeAll(async () => {
  t = await startChainV08(31337);
});
afterAll(async () => {
  await t?.stop();
});

const balance = (address: Address) => t.publicClient.getBalance({ address });
const codeOf = (address: Address) => t.publicClient.getCode({ address });
const delegatedCode = () => concat(["0xef0100", t.deployment.delegatedAccountV08]).toLowerCase();

const delegatedCall = (functionName: "registerSessionKey" | "revokeSessionKey" | "revokeAllSessionKeys", args: readonly unknown[]): Hex =>
  encodeFunctionData({ abi: delegatedAccountV8Abi, functionName, args } as never);
const readDelegated = (address: Address, functionName: string, args: readonly unknown[] = []) =>
  t.publicClient.readContract({ address, abi: delegatedAccountV8Abi, functionName, args } as never) as Promise<unknown>;

/** An EOA (with `eth` ETH) delegated to DelegatedAccountV8 by a type-4 transaction the funded key sends. */
async function delegatedEoa(eth = parseEther("1")): Promise<PrivateKeyAccount> {
  const eoa = randomAccount();
  if (eth > 0n) await fund(t, eoa.address, eth);
  const authorization = await authorize(t, eoa);
  const hash = await t.wallet.sendTransaction({ to: eoa.address, data: "0x", authorizationList: [authorization] });
  await t.publicClient.waitForTransactionReceipt({ hash });
  expect(await codeOf(eoa.address)).toBe(delegatedCode());
  return eoa;
}

describe("an EOA delegating to DelegatedAccountV8 (EIP-7702)", () => {
  it("delegates and runs its first sponsored op in one type-4 handleOps transaction, through the EntryPoint's 0x7702 initCode marker", async () => {
    const eoa = randomAccount();
    await fund(t, eoa.address, parseEther("1"));
    const recipient = randomAccount().address;
    expect(await codeOf(eoa.address)).toBeUndefined();

    const authorization = await authorize(t, eoa);
    // factory 0x7702: the userOpHash (and the paymaster's hash) bind the delegate, read from the EOA's code on chain.
    const op = await sponsorV08(t, await buildOpV08(t, { sender: eoa.address, factory: EIP7702_FACTORY, authorization, callData: executeV08(recipient, 5n) }));
    const { results } = await handleOpsV08(t, [await signOpV08(t, op, eoa)], { authorizationList: [authorization] });
    expect(results[0]!.success).toBe(true);
    expect(await codeOf(eoa.address)).toBe(delegatedCode());
    expect(await balance(recipient)).toBe(5n);
    // The paymaster paid: the EOA only parted with the 5 wei it sent.
    expect(await balance(eoa.address)).toBe(parseEther("1") - 5n);
    expect(await readDelegated(eoa.address, "owner")).toBe(eoa.address);
    expect(await readDelegated(eoa.address, "entryPoint")).toBe(ENTRY_POINT_V08);
  });

  it("also takes the delegation from a type-4 transaction's authorizationList with an op that has no initCode", async () => {
    const eoa = randomAccount();
    const recipient = randomAccount().address;
    const authorization = await authorize(t, eoa);
    const op = await sponsorV08(t, await buildOpV08(t, { sender: eoa.address, callData: executeV08(recipient, 0n) }));
    const { results } = await handleOpsV08(t, [await signOpV08(t, op, eoa)], { authorizationList: [authorization] });
    expect(results[0]!.success).toBe(true);
    expect(await codeOf(eoa.address)).toBe(delegatedCode());
  });

  it("refuses a 0x7702 op whose signature or sponsorship was for another delegate (AA24, AA34)", async () => {
    const eoa = randomAccount();
    const authorization = await authorize(t, eoa);
    const op = await buildOpV08(t, { sender: eoa.address, factory: EIP7702_FACTORY, authorization, callData: executeV08(randomAccount().address, 0n) });
    const elsewhere = { ...authorization, address: SIMPLE_7702_ACCOUNT };

    const sponsored = await sponsorV08(t, op);
    const signedForElsewhere = { ...sponsored, signature: await eoa.sign({ hash: userOpHashV08(t, { ...sponsored, authorization: elsewhere }) }) };
    await expect(handleOpsV08(t, [signedForElsewhere], { authorizationList: [authorization] })).rejects.toThrow(/AA24 signature error/);

    const sponsoredForElsewhere = { ...(await sponsorV08(t, { ...op, authorization: elsewhere })), authorization };
    await expect(handleOpsV08(t, [await signOpV08(t, sponsoredForElsewhere, eoa)], { authorizationList: [authorization] })).rejects.toThrow(/AA34 signature error/);
    expect(await codeOf(eoa.address)).toBeUndefined();
  });

  it("runs batches from the EntryPoint or the EOA itself, and nobody else", async () => {
    const eoa = await delegatedEoa();
    const [a, b] = [randomAccount().address, randomAccount().address];
    await runOpV08(t, await buildOpV08(t, { sender: eoa.address, callData: executeBatchV08([{ target: a, value: 1n }, { target: b, value: 2n }]) }), eoa);
    expect([await balance(a), await balance(b)]).toEqual([1n, 2n]);

    await send(t, walletFor(t, eoa), { address: eoa.address, abi: delegatedAccountV8Abi, functionName: "executeBatch", args: [[{ target: a, value: 10n, data: "0x" }]] });
    expect(await balance(a)).toBe(11n);

    const stranger = randomAccount();
    await fund(t, stranger.address);
    await expect(send(t, walletFor(t, stranger), { address: eoa.address, abi: delegatedAccountV8Abi, functionName: "execute", args: [stranger.address, 1n, "0x"] })).rejects.toThrow(/NotAuthorized/);
    await expect(
      send(t, walletFor(t, stranger), { address: eoa.address, abi: delegatedAccountV8Abi, functionName: "registerSessionKey", args: [stranger.address, 0, 2 ** 40, 1, [], 0n] }),
    ).rejects.toThrow(/NotAuthorized/);
    // Another key's op is refused.
    const op = await buildOpV08(t, { sender: eoa.address, callData: executeV08(stranger.address, 1n) });
    await expect(handleOpsV08(t, [await signOpV08(t, op, stranger)])).rejects.toThrow(/AA24 signature error/);
    // Still an EOA to anyone sending it ETH or calls.
    await t.wallet.sendTransaction({ to: eoa.address, value: 1n, data: "0x12345678" });
  });

  it("takes a scoped session key: sponsored ops to whitelisted targets only, never the EOA itself", async () => {
    const eoa = await delegatedEoa();
    const key = randomAccount();
    const allowed = randomAccount().address;
    // Registered by the EOA's own transaction to itself.
    await send(t, walletFor(t, eoa), {
      address: eoa.address,
      abi: delegatedAccountV8Abi,
      functionName: "registerSessionKey",
      args: [key.address, 0, (await now(t)) + 3600, 3, [allowed], 0n],
    });
    const keyOp = async (callData: Hex, sponsored = true) => {
      const op = await buildOpV08(t, { sender: eoa.address, callData });
      return signOpV08(t, sponsored ? await sponsorV08(t, op) : op, key);
    };
    expect((await handleOpsV08(t, [await keyOp(executeV08(allowed, 7n))])).results[0]!.success).toBe(true);
    expect(await balance(allowed)).toBe(7n);
    expect((await readDelegated(eoa.address, "getSessionKey", [key.address]) as unknown[])[3]).toBe(1);

    const refused: OpV08[] = [
      await keyOp(executeV08(randomAccount().address, 1n)),
      await keyOp(executeV08(eoa.address, 0n, delegatedCall("revokeAllSessionKeys", []))),
      await keyOp(delegatedCall("registerSessionKey", [randomAccount().address, 0, 2 ** 40, 1, [], 0n])),
      // Cap 0: never an op the EOA pays for.
      await keyOp(executeV08(allowed, 1n), false),
    ];
    for (const op of refused) await expect(handleOpsV08(t, [op])).rejects.toThrow(/AA24 signature error/);

    // The EOA's owner-signed op revokes every key at once.
    await runOpV08(t, await buildOpV08(t, { sender: eoa.address, callData: delegatedCall("revokeAllSessionKeys", []) }), eoa);
    await expect(handleOpsV08(t, [await keyOp(executeV08(allowed, 1n))])).rejects.toThrow(/AA24 signature error/);
  });

  it("answers isValidSignature for the EOA's own signature of the hash (not a session key's), and ERC-165", async () => {
    const eoa = await delegatedEoa(0n);
    const key = randomAccount();
    await runOpV08(t, await sponsorV08(t, await buildOpV08(t, { sender: eoa.address, callData: delegatedCall("registerSessionKey", [key.address, 0, 2 ** 40, 3, [], 0n]) })), eoa);
    const hash = hashMessage("hello");
    const valid = (signature: Hex) => readDelegated(eoa.address, "isValidSignature", [hash, signature]);
    expect(await valid(await eoa.signMessage({ message: "hello" }))).toBe("0x1626ba7e");
    expect(await valid(await key.signMessage({ message: "hello" }))).toBe("0xffffffff");
    expect(await t.publicClient.verifyMessage({ address: eoa.address, message: "hello", signature: await eoa.signMessage({ message: "hello" }) })).toBe(true);
    for (const id of ["0x01ffc9a7", "0x150b7a02", "0x4e2312e0", "0x1626ba7e", "0x19822f7c"]) {
      expect(await readDelegated(eoa.address, "supportsInterface", [id])).toBe(true);
    }
  });
});

describe("viem's toSimple7702SmartAccount with implementation = DelegatedAccountV8", () => {
  it("encodes calls, signs ops and messages that our contract accepts; its stub signature fails validation without reverting", async () => {
    const eoa = randomAccount();
    const account = await toSimple7702SmartAccount({ client: t.publicClient, owner: eoa, implementation: t.deployment.delegatedAccountV08 });
    expect(account.address).toBe(eoa.address);
    const [a, b] = [randomAccount().address, randomAccount().address];
    const callData = await account.encodeCalls([{ to: a, value: 0n }, { to: b, value: 0n, data: "0x" }]);
    expect(callData).toBe(executeBatchV08([{ target: a }, { target: b }]));
    expect(await account.encodeCalls([{ to: a, value: 3n }])).toBe(executeV08(a, 3n));

    // The first op: viem's factory marker, short form ("0x7702"), with the authorization the relayer sends along.
    const { factory, factoryData } = await account.getFactoryArgs();
    const authorization = await eoa.signAuthorization({ address: t.deployment.delegatedAccountV08, chainId: t.chainId, nonce: 0 });
    const unsigned = await sponsorV08(t, await buildOpV08(t, { sender: account.address, nonce: await account.getNonce(), factory, factoryData, authorization, callData }));
    const signature = await account.signUserOperation(unsigned);
    expect(signature).toBe((await signOpV08(t, unsigned, eoa)).signature);
    const { results } = await handleOpsV08(t, [{ ...unsigned, signature }], { authorizationList: [authorization] });
    expect(results[0]!.success).toBe(true);
    expect(await codeOf(eoa.address)).toBe(delegatedCode());

    // Then plain ops, and messages verified through our isValidSignature (ERC-1271, the EOA has code now).
    const next = await buildOpV08(t, { sender: account.address, nonce: await account.getNonce(), callData: await account.encodeCalls([{ to: a, value: 0n }]) });
    const sponsoredNext = await sponsorV08(t, next);
    expect((await handleOpsV08(t, [{ ...sponsoredNext, signature: await account.signUserOperation(sponsoredNext) }])).results[0]!.success).toBe(true);
    const message = "sign in";
    expect(await t.publicClient.verifyMessage({ address: account.address, message, signature: await account.signMessage({ message }) })).toBe(true);

    const stub = { ...sponsoredNext, nonce: await account.getNonce(), signature: await account.getStubSignature() };
    const { result } = await t.publicClient.simulateContract({
      account: ENTRY_POINT_V08,
      address: eoa.address,
      abi: delegatedAccountV8Abi,
      functionName: "validateUserOp",
      args: [toPackedUserOperation(stub), userOpHashV08(t, stub), 0n],
    });
    expect(result).toBe(1n);
  });
});
