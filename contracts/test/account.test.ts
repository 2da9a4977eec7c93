import { encodeAbiParameters, encodeFunctionData, getAddress, hashTypedData, keccak256, parseEther, toHex, zeroAddress, type Address, type Hex } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { entryPointAbi, smartAccountAbi, smartAccountBytecode, verifyingPaymasterAbi } from "@/contracts/artifacts";
import { ENTRY_POINT_V06 } from "@/lib/chain/deployment";
import {
  accountCall,
  accountDomain,
  buildOp,
  counterfactualAddress,
  executeBatchCall,
  executeCall,
  fund,
  handleOps,
  initCodeFor,
  newAccount,
  ownerOp,
  randomAccount,
  readAccount,
  runOp,
  send,
  signOp,
  sponsor,
  startChain,
  walletFor,
  type TestChain,
} from "./helpers";

let t: TestChain;
beforeAll(async () => {
  t = await startChain(31337);
});
afterAll(async () => {
  await t?.stop();
});

const balance = (address: Address) => t.publicClient.getBalance({ address });
const IMPLEMENTATION_SLOT = "0x360894a13ba1a3210667c828492db98dca3e2076cc3735a920a3ca505d382bbc";
const implementationOf = async (proxy: Address) =>
  getAddress(`0x${(await t.publicClient.getStorageAt({ address: proxy, slot: IMPLEMENTATION_SLOT }))!.slice(26)}`);

describe("userOps", () => {
  it("deploys an account through initCode, sponsored by the paymaster (the account holds no ETH)", async () => {
    const owner = randomAccount();
    const salt = keccak256(toHex("first account"));
    const sender = await counterfactualAddress(t, owner.address, salt);
    const recipient = randomAccount().address;
    expect(await t.publicClient.getCode({ address: sender })).toBeUndefined();

    const paymasterDeposit = await t.publicClient.readContract({
      address: t.deployment.paymaster,
      abi: verifyingPaymasterAbi,
      functionName: "getDeposit",
    });
    const op = await sponsor(t, await buildOp(t, { sender, initCode: initCodeFor(t, owner.address, salt), callData: executeCall(recipient, 0n) }));
    const { receipt, result } = await runOp(t, op, owner);

    expect(await readAccount(t, sender, "owner")).toBe(owner.address);
    expect(await implementationOf(sender)).toBe(t.deployment.accountImplementation);
    expect(await balance(sender)).toBe(0n);
    const after = await t.publicClient.readContract({ address: t.deployment.paymaster, abi: verifyingPaymasterAbi, functionName: "getDeposit" });
    expect(after).toBe(paymasterDeposit - result.actualGasCost);
    console.info(`gas: deploy op (initCode + paymaster) handleOps tx ${receipt.gasUsed}, op actualGasUsed ${result.actualGasUsed}`);
    expect(receipt.gasUsed).toBeLessThan(450_000n);
  });

  it("runs an owner-signed op paid by the account", async () => {
    const account = await newAccount(t);
    const recipient = randomAccount().address;
    const { receipt, result } = await ownerOp(t, account, executeCall(recipient, parseEther("0.1")));
    expect(await balance(recipient)).toBe(parseEther("0.1"));
    // The prefund goes to the account's EntryPoint deposit; what the op did not use stays there.
    const deposit = await readAccount(t, account.address, "getDeposit");
    expect((await balance(account.address)) + deposit).toBe(parseEther("0.9") - result.actualGasCost);
    expect(await readAccount(t, account.address, "getNonce")).toBe(1n);
    console.info(`gas: first plain op (ETH to a new address) handleOps tx ${receipt.gasUsed}, op actualGasUsed ${result.actualGasUsed}`);
    expect(receipt.gasUsed).toBeLessThan(200_000n);
    // Steady state: nonce and deposit already non-zero, recipient already exists.
    const second = await ownerOp(t, account, executeCall(recipient, parseEther("0.1")));
    console.info(`gas: plain op (steady state) handleOps tx ${second.receipt.gasUsed}, op actualGasUsed ${second.result.actualGasUsed}`);
    expect(second.receipt.gasUsed).toBeLessThan(110_000n);
  });

  it("refuses an op signed by anyone else, or with a malformed signature (AA24, no revert in the account)", async () => {
    const account = await newAccount(t);
    const op = await buildOp(t, { sender: account.address, callData: executeCall(randomAccount().address, 1n) });
    await expect(handleOps(t, [await signOp(t, op, randomAccount())])).rejects.toThrow(/AA24 signature error/);
    for (const signature of ["0x", `0x${"11".repeat(64)}`, `0x${"00".repeat(65)}`] as Hex[]) {
      await expect(handleOps(t, [{ ...op, signature }])).rejects.toThrow(/AA24 signature error/);
    }
  });

  it("executes a batch and keeps the batch all-or-nothing", async () => {
    const account = await newAccount(t);
    const [r1, r2] = [randomAccount().address, randomAccount().address];
    await ownerOp(t, account, executeBatchCall([{ target: r1, value: 1000n }, { target: r2, value: 2000n }]));
    expect([await balance(r1), await balance(r2)]).toEqual([1000n, 2000n]);

    // The second call fails: the op's execution reverts with the inner error and nothing moves.
    const failing = executeBatchCall([
      { target: r1, value: 1n },
      { target: t.deployment.paymaster, data: encodeFunctionData({ abi: verifyingPaymasterAbi, functionName: "unlockStake" }) },
    ]);
    const { results } = await handleOps(t, [await signOp(t, await buildOp(t, { sender: account.address, callData: failing }), account.owner)]);
    expect(results[0]!.success).toBe(false);
    // OwnableUnauthorizedAccount(account), bubbled up unchanged.
    expect(results[0]!.revertReason).toBe(`0x118cdaa7${account.address.slice(2).toLowerCase().padStart(64, "0")}`);
    expect(await balance(r1)).toBe(1000n);

    // Lengths must match.
    await fund(t, account.owner.address);
    const owner = walletFor(t, account.owner);
    await expect(
      send(t, owner, { address: account.address, abi: smartAccountAbi, functionName: "executeBatch", args: [[r1, r2], [0n], ["0x", "0x"]] }),
    ).rejects.toThrow(/LengthMismatch/);
  });

  it("lets the owner execute directly and bubbles up revert data; nobody else may execute", async () => {
    const account = await newAccount(t);
    await fund(t, account.owner.address);
    const recipient = randomAccount().address;
    await send(t, walletFor(t, account.owner), { address: account.address, abi: smartAccountAbi, functionName: "execute", args: [recipient, 5n, "0x"] });
    expect(await balance(recipient)).toBe(5n);
    await expect(
      send(t, walletFor(t, account.owner), {
        address: account.address,
        abi: smartAccountAbi,
        functionName: "execute",
        args: [t.deployment.paymaster, 0n, encodeFunctionData({ abi: verifyingPaymasterAbi, functionName: "unlockStake" })],
      }),
    ).rejects.toThrow(/0x118cdaa7/);
    await expect(
      send(t, null, { address: account.address, abi: smartAccountAbi, functionName: "execute", args: [recipient, 1n, "0x"] }),
    ).rejects.toThrow(/NotAuthorized/);
    await expect(
      send(t, null, { address: account.address, abi: smartAccountAbi, functionName: "executeBatch", args: [[recipient], [1n], ["0x"]] }),
    ).rejects.toThrow(/NotAuthorized/);
    // validateUserOp is the EntryPoint's alone.
    const op = await buildOp(t, { sender: account.address, callData: "0x" });
    await expect(
      send(t, null, { address: account.address, abi: smartAccountAbi, functionName: "validateUserOp", args: [op, toHex(0, { size: 32 }), 0n] }),
    ).rejects.toThrow(/NotEntryPoint/);
  });
});

describe("two-step ownership", () => {
  it("transfers on acceptance by the pending owner only", async () => {
    const account = await newAccount(t);
    const next = randomAccount();
    const stranger = randomAccount();
    await Promise.all([fund(t, next.address), fund(t, stranger.address)]);

    await expect(
      send(t, null, { address: account.address, abi: smartAccountAbi, functionName: "transferOwnership", args: [next.address] }),
    ).rejects.toThrow(/NotAuthorized/);
    await ownerOp(t, account, accountCall("transferOwnership", [next.address]));
    expect(await readAccount(t, account.address, "pendingOwner")).toBe(next.address);
    expect(await readAccount(t, account.address, "owner")).toBe(account.owner.address);

    await expect(
      send(t, walletFor(t, stranger), { address: account.address, abi: smartAccountAbi, functionName: "acceptOwnership", args: [] }),
    ).rejects.toThrow(/NotPendingOwner/);
    await send(t, walletFor(t, next), { address: account.address, abi: smartAccountAbi, functionName: "acceptOwnership", args: [] });
    expect(await readAccount(t, account.address, "owner")).toBe(next.address);
    expect(await readAccount(t, account.address, "pendingOwner")).toBe(zeroAddress);

    // The old owner's signature no longer counts; the new owner's does.
    const op = await buildOp(t, { sender: account.address, callData: executeCall(stranger.address, 1n) });
    await expect(handleOps(t, [await signOp(t, op, account.owner)])).rejects.toThrow(/AA24 signature error/);
    await runOp(t, op, next);
  });

  it("can be canceled, after which the former pending owner cannot accept", async () => {
    const account = await newAccount(t);
    const next = randomAccount();
    await fund(t, next.address);
    await ownerOp(t, account, accountCall("transferOwnership", [next.address]));
    await ownerOp(t, account, accountCall("cancelOwnershipTransfer", []));
    expect(await readAccount(t, account.address, "pendingOwner")).toBe(zeroAddress);
    await expect(
      send(t, walletFor(t, next), { address: account.address, abi: smartAccountAbi, functionName: "acceptOwnership", args: [] }),
    ).rejects.toThrow(/NotPendingOwner/);
    await expect(
      send(t, null, { address: account.address, abi: smartAccountAbi, functionName: "cancelOwnershipTransfer", args: [] }),
    ).rejects.toThrow(/NotAuthorized/);
  });

  it("refuses the zero address and the current owner", async () => {
    const account = await newAccount(t);
    await fund(t, account.owner.address);
    const owner = walletFor(t, account.owner);
    for (const newOwner of [zeroAddress, account.owner.address]) {
      await expect(
        send(t, owner, { address: account.address, abi: smartAccountAbi, functionName: "transferOwnership", args: [newOwner] }),
      ).rejects.toThrow(/InvalidOwner/);
    }
  });
});

describe("EIP-1271", () => {
  const message = keccak256(toHex("hello"));
  const types = { AccountMessage: [{ name: "hash", type: "bytes32" }] } as const;

  it("accepts the owner's signature of the AccountMessage digest (eth_call), nothing else", async () => {
    const account = await newAccount(t);
    const isValid = (signature: Hex, hash = message) => readAccount(t, account.address, "isValidSignature", [hash, signature]);
    const signed = await account.owner.signTypedData({
      domain: accountDomain(t, account.address),
      types,
      primaryType: "AccountMessage",
      message: { hash: message },
    });
    expect(await isValid(signed)).toBe("0x1626ba7e");
    expect(
      hashTypedData({ domain: accountDomain(t, account.address), types, primaryType: "AccountMessage", message: { hash: message } }),
    ).not.toBe(message);

    // Another signer, another chain's domain, another account's domain, another hash, the raw hash, garbage.
    const wrongSigner = await randomAccount().signTypedData({
      domain: accountDomain(t, account.address),
      types,
      primaryType: "AccountMessage",
      message: { hash: message },
    });
    const otherChain = await account.owner.signTypedData({
      domain: accountDomain(t, account.address, 31338),
      types,
      primaryType: "AccountMessage",
      message: { hash: message },
    });
    const otherAccount = await account.owner.signTypedData({
      domain: accountDomain(t, randomAccount().address),
      types,
      primaryType: "AccountMessage",
      message: { hash: message },
    });
    const rawHash = await account.owner.sign({ hash: message });
    for (const signature of [wrongSigner, otherChain, otherAccount, rawHash, "0x" as Hex, `0x${"ab".repeat(65)}` as Hex]) {
      expect(await isValid(signature)).toBe("0xffffffff");
    }
    expect(await isValid(signed, keccak256(toHex("other")))).toBe("0xffffffff");
  });
});

describe("upgrades", () => {
  it("refuses an unauthorized upgrade and performs an owner-authorized one, keeping state", async () => {
    const account = await newAccount(t);
    const hash = await t.wallet.deployContract({ abi: smartAccountAbi, bytecode: smartAccountBytecode, args: [ENTRY_POINT_V06] });
    const newImplementation = (await t.publicClient.waitForTransactionReceipt({ hash })).contractAddress!;

    await expect(
      send(t, null, { address: account.address, abi: smartAccountAbi, functionName: "upgradeToAndCall", args: [newImplementation, "0x"] }),
    ).rejects.toThrow(/NotAuthorized/);
    // Not an implementation (no proxiableUUID): refused even for the owner, through a userOp.
    const bad = await handleOps(t, [
      await signOp(t, await buildOp(t, { sender: account.address, callData: accountCall("upgradeToAndCall", [t.deployment.paymaster, "0x"]) }), account.owner),
    ]);
    expect(bad.results[0]!.success).toBe(false);
    expect(await implementationOf(account.address)).toBe(t.deployment.accountImplementation);

    await ownerOp(t, account, accountCall("upgradeToAndCall", [newImplementation, "0x"]));
    expect(await implementationOf(account.address)).toBe(getAddress(newImplementation));
    expect(await readAccount(t, account.address, "owner")).toBe(account.owner.address);
    expect(await readAccount(t, account.address, "getNonce")).toBe(2n);
    await ownerOp(t, account, executeCall(randomAccount().address, 1n));
  });
});

describe("storage", () => {
  it("keeps state in its ERC-7201 namespace, nothing in the low slots", async () => {
    const account = await newAccount(t);
    // keccak256(abi.encode(uint256(keccak256("smartwallet.storage.SmartAccount")) - 1)) & ~0xff
    const namespace = BigInt(keccak256(encodeAbiParameters([{ type: "uint256" }], [BigInt(keccak256(toHex("smartwallet.storage.SmartAccount"))) - 1n]))) & ~0xffn;
    const slot = (n: bigint) => t.publicClient.getStorageAt({ address: account.address, slot: toHex(n, { size: 32 }) });
    expect(await slot(namespace)).toBe(`0x${account.owner.address.slice(2).toLowerCase().padStart(64, "0")}`);
    for (const n of [0n, 1n, 2n]) expect(BigInt((await slot(n)) ?? 0)).toBe(0n);
  });
});

describe("deposit, tokens, interfaces", () => {
  it("manages its EntryPoint deposit (withdrawal authorized only)", async () => {
    const account = await newAccount(t);
    await send(t, null, { address: account.address, abi: smartAccountAbi, functionName: "addDeposit", args: [], value: parseEther("0.5") });
    expect(await readAccount(t, account.address, "getDeposit")).toBe(parseEther("0.5"));
    const to = randomAccount().address;
    await expect(
      send(t, null, { address: account.address, abi: smartAccountAbi, functionName: "withdrawDepositTo", args: [to, 1n] }),
    ).rejects.toThrow(/NotAuthorized/);
    // Ops now draw on the deposit before the balance.
    await ownerOp(t, account, accountCall("withdrawDepositTo", [to, parseEther("0.2")]));
    expect(await balance(to)).toBe(parseEther("0.2"));
    const deposit = await t.publicClient.readContract({ address: ENTRY_POINT_V06, abi: entryPointAbi, functionName: "balanceOf", args: [account.address] });
    expect(deposit).toBeLessThan(parseEther("0.3"));
    expect(deposit).toBeGreaterThan(parseEther("0.29"));
  });

  it("receives ETH and answers the ERC-721/1155 hooks and ERC-165", async () => {
    const account = await newAccount(t, { balance: 0n });
    await t.publicClient.waitForTransactionReceipt({ hash: await t.wallet.sendTransaction({ to: account.address, value: 7n }) });
    expect(await balance(account.address)).toBe(7n);
    const hook = { address: account.address, abi: smartAccountAbi, account: t.wallet.account } as const;
    const erc721 = await t.publicClient.simulateContract({ ...hook, functionName: "onERC721Received", args: [zeroAddress, zeroAddress, 1n, "0x"] });
    expect(erc721.result).toBe("0x150b7a02");
    const erc1155 = await t.publicClient.simulateContract({ ...hook, functionName: "onERC1155Received", args: [zeroAddress, zeroAddress, 1n, 1n, "0x"] });
    expect(erc1155.result).toBe("0xf23a6e61");
    const batch = await t.publicClient.simulateContract({ ...hook, functionName: "onERC1155BatchReceived", args: [zeroAddress, zeroAddress, [1n], [1n], "0x"] });
    expect(batch.result).toBe("0xbc197c81");
    for (const id of ["0x01ffc9a7", "0x150b7a02", "0x4e2312e0", "0x1626ba7e"] as const) {
      expect(await readAccount(t, account.address, "supportsInterface", [id])).toBe(true);
    }
    expect(await readAccount(t, account.address, "supportsInterface", ["0xffffffff"])).toBe(false);
  });
});
