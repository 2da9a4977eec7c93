import { getAddress, keccak256, parseEther, parseEventLogs, toHex, zeroAddress, type Address, type Hex, type PrivateKeyAccount } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { erc6551RegistryAbi, testNftAbi, testNftBytecode, tokenBoundAccountAbi } from "@/contracts/artifacts";
import { deploymentAddresses } from "@/lib/chain/deployment";
import { tokenBoundAddress, tokenBoundDeployment, type TokenBinding } from "@/lib/chain/token-bound";
import { buildOp, executeBatchCall, executeCall, fund, handleOps, randomAccount, runOp, send, signOp, startChain, walletFor, type TestChain } from "./helpers";

// Two chains: the registry and implementation must sit at the same addresses on both.
let t: TestChain;
let other: TestChain;
let nft: Address;

beforeAll(async () => {
  [t, other] = await Promise.all([startChain(31337), startChain(31338)]);
  const hash = await t.wallet.deployContract({ abi: testNftAbi, bytecode: testNftBytecode, args: ["Test NFT", "TNFT"] });
  nft = (await t.publicClient.waitForTransactionReceipt({ hash })).contractAddress!;
});
afterAll(async () => {
  await Promise.all([t?.stop(), other?.stop()]);
});

let nextTokenId = 1n;

/** Mints a fresh token to `holder` and returns its binding on chain `t` (nothing deployed yet). */
async function mintTo(holder: Address, { salt = keccak256(toHex(`salt ${nextTokenId}`)) }: { salt?: Hex } = {}): Promise<TokenBinding> {
  const tokenId = nextTokenId++;
  await send(t, null, { address: nft, abi: testNftAbi, functionName: "mint", args: [holder, tokenId] });
  return { chainId: t.chainId, tokenContract: nft, tokenId, salt };
}

const registryCall = (b: TokenBinding, implementation = t.deployment.tokenBoundAccountImplementation) =>
  [implementation, b.salt, BigInt(b.chainId), b.tokenContract, b.tokenId] as const;

/** Deploys the account through the registry (from the funded key) and gives it ETH. */
async function deployAccount(b: TokenBinding, balance = parseEther("1")): Promise<Address> {
  await send(t, null, { address: t.deployment.tokenBoundRegistry, abi: erc6551RegistryAbi, functionName: "createAccount", args: registryCall(b) });
  const address = tokenBoundAddress(b, t.deployment);
  if (balance > 0n) await fund(t, address, balance);
  return address;
}

const read = (address: Address, functionName: "owner" | "token" | "state" | "getNonce" | "entryPoint") =>
  t.publicClient.readContract({ address, abi: tokenBoundAccountAbi, functionName } as never) as Promise<unknown>;

async function transferToken(b: TokenBinding, from: PrivateKeyAccount, to: Address) {
  await fund(t, from.address);
  await send(t, walletFor(t, from), { address: nft, abi: testNftAbi, functionName: "transferFrom", args: [from.address, to, b.tokenId] });
}

describe("ERC-6551 registry", () => {
  it("sits with the account implementation at the same addresses on every chain and installation", async () => {
    const elsewhere = deploymentAddresses({ paymasterOwner: randomAccount().address, paymasterSigner: randomAccount().address, beaconAdmin: randomAccount().address });
    for (const chain of [t, other]) {
      expect(chain.deployment.tokenBoundRegistry).toBe(elsewhere.tokenBoundRegistry);
      expect(chain.deployment.tokenBoundAccountImplementation).toBe(elsewhere.tokenBoundAccountImplementation);
      expect(chain.deployment.deployed).toEqual(expect.arrayContaining(["tokenBoundRegistry", "tokenBoundAccountImplementation"]));
      expect(await chain.publicClient.getCode({ address: elsewhere.tokenBoundRegistry })).toMatch(/^0x[0-9a-f]{100,}$/);
      expect(await chain.publicClient.getCode({ address: elsewhere.tokenBoundAccountImplementation })).toMatch(/^0x[0-9a-f]{100,}$/);
    }
    expect(await t.publicClient.readContract({ address: t.deployment.tokenBoundAccountImplementation, abi: tokenBoundAccountAbi, functionName: "entryPoint" })).toBe(t.deployment.entryPoint);
  });

  it("predicts the address (account() and the service's computation), deploys there once and is idempotent", async () => {
    const b = await mintTo(randomAccount().address);
    const predicted = tokenBoundAddress(b, t.deployment);
    expect(await t.publicClient.readContract({ address: t.deployment.tokenBoundRegistry, abi: erc6551RegistryAbi, functionName: "account", args: registryCall(b) })).toBe(predicted);
    // Another chain id in the binding is another account.
    expect(tokenBoundAddress({ ...b, chainId: 1 }, t.deployment)).not.toBe(predicted);

    const first = await send(t, null, { address: t.deployment.tokenBoundRegistry, abi: erc6551RegistryAbi, functionName: "createAccount", args: registryCall(b) });
    const created = parseEventLogs({ abi: erc6551RegistryAbi, logs: first.logs, eventName: "ERC6551AccountCreated" });
    expect(created.map((l) => l.args)).toEqual([
      { account: predicted, implementation: t.deployment.tokenBoundAccountImplementation, salt: b.salt, chainId: BigInt(t.chainId), tokenContract: getAddress(nft), tokenId: b.tokenId },
    ]);
    // The EIP-6551 proxy: 0x2d bytes of ERC-1167 then the 0x80-byte footer.
    expect(((await t.publicClient.getCode({ address: predicted }))!.length - 2) / 2).toBe(0xad);

    const { result } = await t.publicClient.simulateContract({ address: t.deployment.tokenBoundRegistry, abi: erc6551RegistryAbi, functionName: "createAccount", args: registryCall(b), account: t.wallet.account });
    expect(result).toBe(predicted);
    const again = await send(t, null, { address: t.deployment.tokenBoundRegistry, abi: erc6551RegistryAbi, functionName: "createAccount", args: registryCall(b) });
    expect(parseEventLogs({ abi: erc6551RegistryAbi, logs: again.logs, eventName: "ERC6551AccountCreated" })).toEqual([]);
  });
});

describe("TokenBoundAccount", () => {
  it("reads its token from its code and its owner from the token", async () => {
    const holder = randomAccount();
    const b = await mintTo(holder.address);
    const account = await deployAccount(b);
    expect(await read(account, "token")).toEqual([BigInt(t.chainId), getAddress(nft), b.tokenId]);
    expect(await read(account, "owner")).toBe(holder.address);
    expect(await read(account, "entryPoint")).toBe(t.deployment.entryPoint);
    expect(await read(account, "getNonce")).toBe(0n);
    const isValidSigner = (signer: Address) =>
      t.publicClient.readContract({ address: account, abi: tokenBoundAccountAbi, functionName: "isValidSigner", args: [signer, "0x"] });
    expect(await isValidSigner(holder.address)).toBe("0x523e3260");
    expect(await isValidSigner(randomAccount().address)).toBe("0x00000000");
    const supports = (id: Hex) => t.publicClient.readContract({ address: account, abi: tokenBoundAccountAbi, functionName: "supportsInterface", args: [id] });
    // IERC6551Account, IERC6551Executable, IERC1271, IERC721Receiver; not an arbitrary id.
    for (const id of ["0x6faff5f1", "0x51945447", "0x1626ba7e", "0x150b7a02"] as const) expect(await supports(id)).toBe(true);
    expect(await supports("0x12345678")).toBe(false);
  });

  it("is deployed by a userOperation's initCode and runs the holder's calls (execute and executeBatch)", async () => {
    const holder = randomAccount();
    const b = await mintTo(holder.address);
    const account = tokenBoundAddress(b, t.deployment);
    await fund(t, account, parseEther("1"));
    const [x, y] = [randomAccount().address, randomAccount().address];
    const op = await buildOp(t, { sender: account, initCode: tokenBoundDeployment(b, t.deployment).initCode, callData: executeCall(x, 5n) });
    await runOp(t, op, holder);
    expect(await t.publicClient.getBalance({ address: x })).toBe(5n);
    await runOp(t, await buildOp(t, { sender: account, callData: executeBatchCall([{ target: x, value: 1n }, { target: y, value: 2n }]) }), holder);
    expect(await t.publicClient.getBalance({ address: x })).toBe(6n);
    expect(await t.publicClient.getBalance({ address: y })).toBe(2n);
    expect(await read(account, "state")).toBe(3n);
  });

  it("refuses a non-holder's userOperation on chain (AA24)", async () => {
    const b = await mintTo(randomAccount().address);
    const account = await deployAccount(b);
    const op = await signOp(t, await buildOp(t, { sender: account, callData: executeCall(randomAccount().address, 1n) }), randomAccount());
    await expect(handleOps(t, [op])).rejects.toThrow(/AA24 signature error/);
  });

  it("follows the token: after a transfer the old holder is refused and the new one accepted", async () => {
    const [a, b2] = [randomAccount(), randomAccount()];
    const b = await mintTo(a.address);
    const account = await deployAccount(b);
    const target = randomAccount().address;
    await runOp(t, await buildOp(t, { sender: account, callData: executeCall(target, 1n) }), a);

    await transferToken(b, a, b2.address);
    expect(await read(account, "owner")).toBe(b2.address);
    const byOld = await signOp(t, await buildOp(t, { sender: account, callData: executeCall(target, 1n) }), a);
    await expect(handleOps(t, [byOld])).rejects.toThrow(/AA24 signature error/);
    await runOp(t, await buildOp(t, { sender: account, callData: executeCall(target, 1n) }), b2);
    expect(await t.publicClient.getBalance({ address: target })).toBe(2n);

    // Direct calls follow the token as well.
    await fund(t, a.address);
    await expect(
      walletFor(t, a).writeContract({ address: account, abi: tokenBoundAccountAbi, functionName: "execute", args: [target, 1n, "0x"] }),
    ).rejects.toThrow(/NotAuthorized/);
  });

  it("lets the holder call directly through IERC6551Executable (calls only)", async () => {
    const holder = randomAccount();
    const b = await mintTo(holder.address);
    const account = await deployAccount(b);
    await fund(t, holder.address);
    const target = randomAccount().address;
    await send(t, walletFor(t, holder), { address: account, abi: tokenBoundAccountAbi, functionName: "execute", args: [target, 3n, "0x", 0] });
    expect(await t.publicClient.getBalance({ address: target })).toBe(3n);
    await expect(
      walletFor(t, holder).writeContract({ address: account, abi: tokenBoundAccountAbi, functionName: "execute", args: [target, 3n, "0x", 1] }),
    ).rejects.toThrow(/UnsupportedOperation/);
    const stranger = randomAccount();
    await fund(t, stranger.address);
    await expect(
      walletFor(t, stranger).writeContract({ address: account, abi: tokenBoundAccountAbi, functionName: "execute", args: [target, 3n, "0x", 0] }),
    ).rejects.toThrow(/NotAuthorized/);
  });

  it("has no owner when its token is on another chain", async () => {
    const holder = randomAccount();
    const b = { ...(await mintTo(holder.address)), chainId: 1 };
    await send(t, null, { address: t.deployment.tokenBoundRegistry, abi: erc6551RegistryAbi, functionName: "createAccount", args: registryCall(b) });
    const account = tokenBoundAddress(b, t.deployment);
    await fund(t, account, parseEther("1"));
    expect(await read(account, "owner")).toBe(zeroAddress);
    const op = await signOp(t, await buildOp(t, { sender: account, callData: executeCall(randomAccount().address, 1n) }), holder);
    await expect(handleOps(t, [op])).rejects.toThrow(/AA24 signature error/);
  });

  it("validates the holder's EIP-1271 signatures in its own EIP-712 domain, and nobody else's", async () => {
    const [a, b2] = [randomAccount(), randomAccount()];
    const b = await mintTo(a.address);
    const account = await deployAccount(b, 0n);
    const hash = keccak256(toHex("a message"));
    const sign = (signer: PrivateKeyAccount, verifyingContract: Address = account) =>
      signer.signTypedData({
        domain: { name: "TokenBoundAccount", version: "1", chainId: t.chainId, verifyingContract },
        types: { AccountMessage: [{ name: "hash", type: "bytes32" }] },
        primaryType: "AccountMessage",
        message: { hash },
      });
    const check = (signature: Hex) => t.publicClient.readContract({ address: account, abi: tokenBoundAccountAbi, functionName: "isValidSignature", args: [hash, signature] });
    expect(await check(await sign(a))).toBe("0x1626ba7e");
    expect(await check(await sign(b2))).toBe("0xffffffff");
    // Signed for another account of the same holder: not valid here.
    expect(await check(await sign(a, randomAccount().address))).toBe("0xffffffff");
    expect(await check(await a.signMessage({ message: { raw: hash } }))).toBe("0xffffffff");
    await transferToken(b, a, b2.address);
    expect(await check(await sign(a))).toBe("0xffffffff");
    expect(await check(await sign(b2))).toBe("0x1626ba7e");
  });

  it("refuses to receive its own token (an ownership cycle) but takes other tokens", async () => {
    const holder = randomAccount();
    const b = await mintTo(holder.address);
    const account = await deployAccount(b, 0n);
    await fund(t, holder.address);
    const wallet = walletFor(t, holder);
    await expect(
      wallet.writeContract({ address: nft, abi: testNftAbi, functionName: "safeTransferFrom", args: [holder.address, account, b.tokenId] }),
    ).rejects.toThrow(/OwnershipCycle|reverted/);
    expect(await read(account, "owner")).toBe(holder.address);
    const otherToken = await mintTo(holder.address);
    await send(t, wallet, { address: nft, abi: testNftAbi, functionName: "safeTransferFrom", args: [holder.address, account, otherToken.tokenId] });
    expect(await t.publicClient.readContract({ address: nft, abi: testNftAbi, functionName: "ownerOf", args: [otherToken.tokenId] })).toBe(account);
  });
});
