import { encodeFunctionData, getAddress, hashTypedData, keccak256, parseEther, toFunctionSelector, toHex, zeroAddress, type Address } from "viem";
import { generatePrivateKey } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { accountFactoryV8Abi, smartAccountV8Abi, testTokenAbi, verifyingPaymasterV8Abi } from "@/contracts/artifacts";
import { accountFactoryCallV08, accountFactoryInitCodeV08, counterfactualAddressV08 } from "@/lib/chain/accounts-v08";
import { ENTRY_POINT_V08 } from "@/lib/chain/deployment";
import { accountDomain, fund, randomAccount, send, walletFor, type TestChain } from "./helpers";
import {
  buildOpV08,
  callV08,
  executeBatchV08,
  executeV08,
  factoryDataV08,
  getAddressV08,
  handleOpsV08,
  newAccountV08,
  ownerOpV08,
  readV08,
  runOpV08,
  signOpV08,
  sponsorV08,
  startChainV08,
  userOpHashV08,
} from "./helpers-v08";

let t: TestChain;
beforeAll(async () => {
  t = await startChainV08(31337);
});
afterAll(async () => {
  await t?.stop();
});

const balance = (address: Address) => t.publicClient.getBalance({ address });
const IMPLEMENTATION_SLOT = "0x360894a13ba1a3210667c828492db98dca3e2076cc3735a920a3ca505d382bbc";
const implementationOf = async (proxy: Address) =>
  getAddress(`0x${(await t.publicClient.getStorageAt({ address: proxy, slot: IMPLEMENTATION_SLOT }))!.slice(26)}`);

describe("AccountFactoryV8", () => {
  it("deploys at getAddress(owner, salt) = counterfactualAddressV08, returns it again without reverting, and never re-initializes", async () => {
    const owner = randomAccount();
    const salt = generatePrivateKey();
    const predicted = await getAddressV08(t, owner.address, salt);
    expect(counterfactualAddressV08(owner.address, salt, null, t.deployment)).toBe(predicted);
    // Not the v0.6 account of the same owner and salt.
    expect(predicted).not.toBe(counterfactualAddressV08(owner.address, salt, null, { accountFactoryV08: t.deployment.accountFactory, accountImplementationV08: t.deployment.accountImplementation }));

    const create = { address: t.deployment.accountFactoryV08, abi: accountFactoryV8Abi, functionName: "createAccount", args: [owner.address, salt] } as const;
    expect((await t.publicClient.simulateContract({ ...create, account: t.wallet.account })).result).toBe(predicted);
    await send(t, null, create);
    expect(await readV08(t, predicted, "owner")).toBe(owner.address);
    expect(await readV08(t, predicted, "entryPoint")).toBe(ENTRY_POINT_V08);
    expect(await implementationOf(predicted)).toBe(t.deployment.accountImplementationV08);
    await send(t, null, create);
    expect(await readV08(t, predicted, "owner")).toBe(owner.address);
    await expect(
      send(t, null, { address: predicted, abi: smartAccountV8Abi, functionName: "initialize", args: [randomAccount().address] }),
    ).rejects.toThrow(/InvalidInitialization/);
  });

  it("deploys with a first guardian at getAddressWithGuardian (the guardian is part of the address)", async () => {
    const owner = randomAccount();
    const guardian = randomAccount();
    const salt = generatePrivateKey();
    const predicted = await t.publicClient.readContract({
      address: t.deployment.accountFactoryV08,
      abi: accountFactoryV8Abi,
      functionName: "getAddressWithGuardian",
      args: [owner.address, guardian.address, salt],
    });
    expect(counterfactualAddressV08(owner.address, salt, guardian.address, t.deployment)).toBe(predicted);
    expect(counterfactualAddressV08(owner.address, salt, null, t.deployment)).not.toBe(predicted);
    const call = accountFactoryCallV08(owner.address, salt, guardian.address, t.deployment);
    expect(accountFactoryInitCodeV08(call.initCode, t.deployment)).toEqual({ owner: owner.address, guardian: guardian.address, salt });
    expect(accountFactoryInitCodeV08(accountFactoryCallV08(owner.address, salt, null, t.deployment).initCode, t.deployment)).toEqual({ owner: owner.address, guardian: null, salt });
    // Mined before the reads (the node answers with the hash first): a read right after raced it under load.
    await t.publicClient.waitForTransactionReceipt({ hash: await t.wallet.sendTransaction({ to: call.factory, data: call.data }) });
    expect(await readV08(t, predicted, "owner")).toBe(owner.address);
    expect(await readV08(t, predicted, "getGuardians")).toEqual([guardian.address]);
  });
});

describe("userOps on EntryPoint v0.8", () => {
  it("deploys an account through factory/factoryData, sponsored (the account holds no ETH), signed as the raw userOpHash", async () => {
    const owner = randomAccount();
    const salt = keccak256(toHex("first v0.8 account"));
    const sender = await getAddressV08(t, owner.address, salt);
    const recipient = randomAccount().address;
    const paymasterDeposit = await t.publicClient.readContract({ address: t.deployment.paymasterV08, abi: verifyingPaymasterV8Abi, functionName: "getDeposit" });

    const op = await sponsorV08(
      t,
      await buildOpV08(t, { sender, factory: t.deployment.accountFactoryV08, factoryData: factoryDataV08(owner.address, salt), callData: executeV08(recipient, 0n) }),
    );
    // An eth_sign / personal_sign signature (v0.6's scheme) is not the owner's here.
    const personal = { ...op, signature: await owner.signMessage({ message: { raw: userOpHashV08(t, op) } }) };
    await expect(handleOpsV08(t, [personal])).rejects.toThrow(/AA24 signature error/);

    const { receipt, result } = await runOpV08(t, op, owner);
    expect(await readV08(t, sender, "owner")).toBe(owner.address);
    expect(await implementationOf(sender)).toBe(t.deployment.accountImplementationV08);
    expect(await balance(sender)).toBe(0n);
    const after = await t.publicClient.readContract({ address: t.deployment.paymasterV08, abi: verifyingPaymasterV8Abi, functionName: "getDeposit" });
    expect(after).toBe(paymasterDeposit - result.actualGasCost);
    console.info(`gas (v0.8): deploy op (factory + paymaster) handleOps tx ${receipt.gasUsed}, op actualGasUsed ${result.actualGasUsed}`);
  });

  it("runs an owner-signed op paid by the account, and refuses another signer (AA24)", async () => {
    const account = await newAccountV08(t);
    const recipient = randomAccount().address;
    const { result } = await ownerOpV08(t, account, executeV08(recipient, parseEther("0.1")));
    expect(await balance(recipient)).toBe(parseEther("0.1"));
    const deposit = await readV08(t, account.address, "getDeposit");
    expect((await balance(account.address)) + deposit).toBe(parseEther("0.9") - result.actualGasCost);
    expect(await readV08(t, account.address, "getNonce")).toBe(1n);

    const op = await buildOpV08(t, { sender: account.address, callData: executeV08(recipient, 1n) });
    await expect(handleOpsV08(t, [await signOpV08(t, op, randomAccount())])).rejects.toThrow(/AA24 signature error/);
  });

  it("runs a batch of calls (executeBatch(Call[])), all or nothing", async () => {
    const account = await newAccountV08(t);
    const [a, b] = [randomAccount().address, randomAccount().address];
    await ownerOpV08(t, account, executeBatchV08([{ target: a, value: 1n }, { target: b, value: 2n }]));
    expect([await balance(a), await balance(b)]).toEqual([1n, 2n]);

    // The second call reverts: the first is undone, the op fails with ExecuteError(1, ...).
    const failing = encodeFunctionData({ abi: testTokenAbi, functionName: "transfer", args: [a, 1n] });
    const op = await buildOpV08(t, { sender: account.address, callData: executeBatchV08([{ target: a, value: 5n }, { target: t.deployment.accountImplementationV08, data: failing }]) });
    const { results } = await handleOpsV08(t, [await signOpV08(t, op, account.owner)]);
    expect(results[0]!.success).toBe(false);
    expect(results[0]!.revertReason?.slice(0, 10)).toBe(toFunctionSelector("ExecuteError(uint256,bytes)"));
    expect(await balance(a)).toBe(1n);
  });

  it("lets the owner call execute directly and nobody else", async () => {
    const account = await newAccountV08(t);
    await fund(t, account.owner.address);
    const recipient = randomAccount().address;
    await send(t, walletFor(t, account.owner), { address: account.address, abi: smartAccountV8Abi, functionName: "execute", args: [recipient, 3n, "0x"] });
    expect(await balance(recipient)).toBe(3n);
    const stranger = randomAccount();
    await fund(t, stranger.address);
    await expect(
      send(t, walletFor(t, stranger), { address: account.address, abi: smartAccountV8Abi, functionName: "executeBatch", args: [[{ target: recipient, value: 1n, data: "0x" }]] }),
    ).rejects.toThrow(/NotAuthorized/);
    await expect(
      send(t, walletFor(t, stranger), { address: account.address, abi: smartAccountV8Abi, functionName: "upgradeToAndCall", args: [t.deployment.accountImplementationV08, "0x"] }),
    ).rejects.toThrow(/NotAuthorized/);
    await expect(
      send(t, walletFor(t, stranger), { address: account.address, abi: smartAccountV8Abi, functionName: "validateUserOp", args: [{ sender: account.address, nonce: 0n, initCode: "0x", callData: "0x", accountGasLimits: toHex(0, { size: 32 }), preVerificationGas: 0n, gasFees: toHex(0, { size: 32 }), paymasterAndData: "0x", signature: "0x" }, toHex(0, { size: 32 }), 0n] }),
    ).rejects.toThrow(/NotEntryPoint/);
  });

  it("transfers ownership in two steps: the pending owner accepts, the old owner's ops stop validating", async () => {
    const account = await newAccountV08(t);
    const next = randomAccount();
    await ownerOpV08(t, account, callV08("transferOwnership", [next.address]));
    expect(await readV08(t, account.address, "pendingOwner")).toBe(next.address);
    await fund(t, next.address);
    await send(t, walletFor(t, next), { address: account.address, abi: smartAccountV8Abi, functionName: "acceptOwnership", args: [] });
    expect(await readV08(t, account.address, "owner")).toBe(next.address);
    expect(await readV08(t, account.address, "pendingOwner")).toBe(zeroAddress);

    const recipient = randomAccount().address;
    const op = await buildOpV08(t, { sender: account.address, callData: executeV08(recipient, 1n) });
    await expect(handleOpsV08(t, [await signOpV08(t, op, account.owner)])).rejects.toThrow(/AA24 signature error/);
    await runOpV08(t, op, next);
    expect(await balance(recipient)).toBe(1n);

    // Cancel: a started transfer can be withdrawn; only authorized callers may start one.
    const other = randomAccount();
    await ownerOpV08(t, { address: account.address, owner: next }, callV08("transferOwnership", [other.address]));
    await ownerOpV08(t, { address: account.address, owner: next }, callV08("cancelOwnershipTransfer", []));
    expect(await readV08(t, account.address, "pendingOwner")).toBe(zeroAddress);
    await fund(t, other.address);
    await expect(send(t, walletFor(t, other), { address: account.address, abi: smartAccountV8Abi, functionName: "acceptOwnership", args: [] })).rejects.toThrow(/NotPendingOwner/);
  });

  it("answers isValidSignature for the owner's EIP-712 AccountMessage in this account's domain only", async () => {
    const account = await newAccountV08(t);
    const hash = keccak256(toHex("hello"));
    const message = { domain: accountDomain(t, account.address), types: { AccountMessage: [{ name: "hash", type: "bytes32" }] }, primaryType: "AccountMessage", message: { hash } } as const;
    const good = await account.owner.signTypedData(message);
    const valid = (signature: `0x${string}`) => t.publicClient.readContract({ address: account.address, abi: smartAccountV8Abi, functionName: "isValidSignature", args: [hash, signature] });
    expect(await valid(good)).toBe("0x1626ba7e");
    expect(await valid(await account.owner.sign({ hash }))).toBe("0xffffffff");
    expect(await valid(await account.owner.signTypedData({ ...message, domain: accountDomain(t, account.address, 1) }))).toBe("0xffffffff");
    expect(await valid(await randomAccount().signTypedData(message))).toBe("0xffffffff");
    expect(hashTypedData(message)).not.toBe(hash);
  });

  it("supports the ERC-165 interfaces of an account and token receiver", async () => {
    const account = await newAccountV08(t);
    const supports = (id: `0x${string}`) => t.publicClient.readContract({ address: account.address, abi: smartAccountV8Abi, functionName: "supportsInterface", args: [id] });
    // IERC165, IERC721Receiver, IERC1155Receiver, IERC1271, IAccount (validateUserOp)
    for (const id of ["0x01ffc9a7", "0x150b7a02", "0x4e2312e0", "0x1626ba7e", "0x19822f7c"] as const) expect(await supports(id)).toBe(true);
    expect(await supports("0xffffffff")).toBe(false);
  });
});
