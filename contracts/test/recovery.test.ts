import { concat, encodeFunctionData, hashTypedData, parseEventLogs, zeroAddress, type Hex, type PrivateKeyAccount } from "viem";
import { generatePrivateKey } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { accountFactoryAbi, smartAccountAbi } from "@/contracts/artifacts";
import {
  accountCall,
  accountDomain,
  blockTime,
  buildOp,
  byAddress,
  executeCall,
  fund,
  handleOps,
  increaseTime,
  newAccount,
  ownerOp,
  randomAccount,
  readAccount,
  runOp,
  send,
  signOp,
  signRecovery,
  sponsor,
  startChain,
  walletFor,
  type TestAccount,
  type TestChain,
} from "./helpers";

let t: TestChain;
beforeAll(async () => {
  t = await startChain(31337);
});
afterAll(async () => {
  await t?.stop();
});

const RECOVERY_PERIOD = 2 * 24 * 3600;

/** An account with `count` guardians (each funded for direct calls). */
async function guardedAccount(count: number): Promise<{ account: TestAccount; guardians: PrivateKeyAccount[] }> {
  const account = await newAccount(t);
  const guardians = Array.from({ length: count }, () => randomAccount());
  for (const g of guardians) {
    await ownerOp(t, account, accountCall("addGuardian", [g.address]));
    await fund(t, g.address);
  }
  return { account, guardians };
}

const call = (from: PrivateKeyAccount | null, account: TestAccount, functionName: "startRecovery" | "completeRecovery" | "cancelRecovery" | "addGuardian" | "removeGuardian", args: readonly unknown[]) =>
  send(t, from ? walletFor(t, from) : null, { address: account.address, abi: smartAccountAbi, functionName, args } as never);

async function recoverySignatures(account: TestAccount, signers: PrivateKeyAccount[]): Promise<Hex[]> {
  const [newOwner, executeAfter] = await readAccount(t, account.address, "getRecovery");
  const nonce = await readAccount(t, account.address, "recoveryNonce");
  return Promise.all(signers.map((g) => signRecovery(t, account.address, g, { newOwner, executeAfter, nonce })));
}

describe("guardians", () => {
  it("are added and removed by the owner only, within the rules", async () => {
    const { account, guardians } = await guardedAccount(3);
    expect(await readAccount(t, account.address, "getGuardians")).toEqual(guardians.map((g) => g.address));
    expect(await readAccount(t, account.address, "isGuardian", [guardians[1]!.address])).toBe(true);

    await ownerOp(t, account, accountCall("removeGuardian", [guardians[0]!.address]));
    expect(await readAccount(t, account.address, "isGuardian", [guardians[0]!.address])).toBe(false);
    expect([...(await readAccount(t, account.address, "getGuardians"))].sort()).toEqual([guardians[1]!.address, guardians[2]!.address].sort());

    await fund(t, account.owner.address);
    const owner = account.owner;
    await expect(call(owner, account, "addGuardian", [guardians[1]!.address])).rejects.toThrow(/AlreadyGuardian/);
    await expect(call(owner, account, "addGuardian", [owner.address])).rejects.toThrow(/InvalidGuardian/);
    await expect(call(owner, account, "addGuardian", [zeroAddress])).rejects.toThrow(/InvalidGuardian/);
    await expect(call(owner, account, "removeGuardian", [guardians[0]!.address])).rejects.toThrow(/NotGuardian/);
    await expect(call(guardians[1]!, account, "addGuardian", [randomAccount().address])).rejects.toThrow(/NotAuthorized/);
    await expect(call(guardians[1]!, account, "removeGuardian", [guardians[2]!.address])).rejects.toThrow(/NotAuthorized/);

    // At most 16.
    for (let i = 0; i < 14; i++) await call(owner, account, "addGuardian", [randomAccount().address]);
    expect(await readAccount(t, account.address, "getGuardians")).toHaveLength(16);
    await expect(call(owner, account, "addGuardian", [randomAccount().address])).rejects.toThrow(/TooManyGuardians/);
  });
});

describe("recovery", () => {
  it("is started by a guardian and completed after the period with a strict majority of sorted guardian signatures", async () => {
    const { account, guardians } = await guardedAccount(3);
    const newOwner = randomAccount();
    const stranger = randomAccount();
    await fund(t, stranger.address);

    await expect(call(stranger, account, "startRecovery", [newOwner.address])).rejects.toThrow(/NotAuthorized/);
    await expect(call(guardians[0]!, account, "startRecovery", [guardians[1]!.address])).rejects.toThrow(/InvalidOwner/);
    await expect(call(guardians[0]!, account, "startRecovery", [zeroAddress])).rejects.toThrow(/InvalidOwner/);
    // executeAfter counts from the block that started it, which later blocks of the shared chain may follow at once.
    const started = await blockTime(t, await call(guardians[0]!, account, "startRecovery", [newOwner.address]));
    const [pendingOwner, executeAfter, required] = await readAccount(t, account.address, "getRecovery");
    expect([pendingOwner, executeAfter, required]).toEqual([newOwner.address, BigInt(started + RECOVERY_PERIOD), 2]);
    await expect(call(guardians[1]!, account, "startRecovery", [randomAccount().address])).rejects.toThrow(/RecoveryAlreadyActive/);

    // The digest guardians sign is the documented EIP-712 Recover struct.
    expect(await readAccount(t, account.address, "recoveryHash")).toBe(
      hashTypedData({
        domain: accountDomain(t, account.address),
        types: { Recover: [{ name: "newOwner", type: "address" }, { name: "executeAfter", type: "uint64" }, { name: "nonce", type: "uint256" }] },
        primaryType: "Recover",
        message: { newOwner: newOwner.address, executeAfter, nonce: 0n },
      }),
    );

    const sorted = byAddress(guardians);
    const good = await recoverySignatures(account, sorted.slice(0, 2));
    await expect(call(stranger, account, "completeRecovery", [good])).rejects.toThrow(/RecoveryNotReady/);
    await increaseTime(t, RECOVERY_PERIOD);

    const [s0, s1, s2] = await recoverySignatures(account, sorted);
    const [outsider] = await recoverySignatures(account, [stranger]);
    await expect(call(stranger, account, "completeRecovery", [[s0]])).rejects.toThrow(/NotEnoughGuardianSignatures/);
    await expect(call(stranger, account, "completeRecovery", [[s0, s0]])).rejects.toThrow(/GuardianSignaturesNotSorted/);
    await expect(call(stranger, account, "completeRecovery", [[s1, s0]])).rejects.toThrow(/GuardianSignaturesNotSorted/);
    await expect(call(stranger, account, "completeRecovery", [[s0, outsider]])).rejects.toThrow(/InvalidGuardianSignature/);
    await expect(call(stranger, account, "completeRecovery", [[s0, "0x1234"]])).rejects.toThrow(/InvalidGuardianSignature/);

    // Anyone may submit it; all three is fine too.
    await call(stranger, account, "completeRecovery", [[s0, s1, s2]]);
    expect(await readAccount(t, account.address, "owner")).toBe(newOwner.address);
    expect(await readAccount(t, account.address, "getRecovery")).toEqual([zeroAddress, 0n, 0]);
    expect(await readAccount(t, account.address, "recoveryNonce")).toBe(1n);
    await expect(readAccount(t, account.address, "recoveryHash")).rejects.toThrow(/NoActiveRecovery/);

    // The old owner is out, the new one in.
    const op = await buildOp(t, { sender: account.address, callData: executeCall(stranger.address, 1n) });
    await expect(handleOps(t, [await signOp(t, op, account.owner)])).rejects.toThrow(/AA24 signature error/);
    await runOp(t, op, newOwner);
  });

  it("needs a strict majority: one of two guardians never takes over", async () => {
    // Required signatures for 1..4 guardians.
    for (const [count, required] of [[1, 1], [2, 2], [3, 2], [4, 3]] as const) {
      const { account, guardians } = await guardedAccount(count);
      await call(guardians[0]!, account, "startRecovery", [randomAccount().address]);
      expect((await readAccount(t, account.address, "getRecovery"))[2]).toBe(required);
    }

    const { account, guardians } = await guardedAccount(2);
    const newOwner = randomAccount();
    await call(guardians[0]!, account, "startRecovery", [newOwner.address]);
    await increaseTime(t, RECOVERY_PERIOD);
    const [s0, s1] = await recoverySignatures(account, byAddress(guardians));
    for (const alone of [s0!, s1!]) {
      await expect(call(guardians[0]!, account, "completeRecovery", [[alone]])).rejects.toThrow(/NotEnoughGuardianSignatures/);
    }
    await call(guardians[0]!, account, "completeRecovery", [[s0, s1]]);
    expect(await readAccount(t, account.address, "owner")).toBe(newOwner.address);
  });

  it("counts guardians added after the start: the majority is of the guardians at completion too", async () => {
    const { account, guardians } = await guardedAccount(1);
    const newOwner = randomAccount();
    await call(guardians[0]!, account, "startRecovery", [newOwner.address]);
    const added = [randomAccount(), randomAccount()];
    for (const g of added) await ownerOp(t, account, accountCall("addGuardian", [g.address]));
    expect((await readAccount(t, account.address, "getRecovery"))[2]).toBe(2);
    await increaseTime(t, RECOVERY_PERIOD);
    await expect(call(null, account, "completeRecovery", [await recoverySignatures(account, guardians)])).rejects.toThrow(
      /NotEnoughGuardianSignatures/,
    );
    await call(null, account, "completeRecovery", [await recoverySignatures(account, byAddress([guardians[0]!, added[0]!]))]);
    expect(await readAccount(t, account.address, "owner")).toBe(newOwner.address);
  });

  it("is canceled by an ownership change, and its signatures never count again", async () => {
    const { account, guardians } = await guardedAccount(1);
    const recoveryOwner = randomAccount();
    await call(guardians[0]!, account, "startRecovery", [recoveryOwner.address]);
    const stale = await recoverySignatures(account, guardians);

    const transferee = randomAccount();
    await fund(t, transferee.address);
    await ownerOp(t, account, accountCall("transferOwnership", [transferee.address]));
    // Starting a transfer changes no owner: the recovery stays pending until the transfer is accepted.
    expect((await readAccount(t, account.address, "getRecovery"))[0]).toBe(recoveryOwner.address);
    const accepted = await send(t, walletFor(t, transferee), {
      address: account.address,
      abi: smartAccountAbi,
      functionName: "acceptOwnership",
      args: [],
    });
    expect(parseEventLogs({ abi: smartAccountAbi, logs: accepted.logs, eventName: "RecoveryCanceled" }).map((l) => l.args.newOwner)).toEqual([
      recoveryOwner.address,
    ]);
    expect(await readAccount(t, account.address, "owner")).toBe(transferee.address);
    expect(await readAccount(t, account.address, "getRecovery")).toEqual([zeroAddress, 0n, 0]);
    expect(await readAccount(t, account.address, "recoveryNonce")).toBe(1n);

    await increaseTime(t, RECOVERY_PERIOD);
    await expect(call(null, account, "completeRecovery", [stale])).rejects.toThrow(/NoActiveRecovery/);
    // A new recovery to the same address is a new digest: the stale signature does not complete it.
    await call(guardians[0]!, account, "startRecovery", [recoveryOwner.address]);
    await increaseTime(t, RECOVERY_PERIOD);
    await expect(call(null, account, "completeRecovery", [stale])).rejects.toThrow(/InvalidGuardianSignature/);
    expect(await readAccount(t, account.address, "owner")).toBe(transferee.address);
  });

  it("refuses the current owner as the new owner", async () => {
    const { account, guardians } = await guardedAccount(1);
    await expect(call(guardians[0]!, account, "startRecovery", [account.owner.address])).rejects.toThrow(/InvalidOwner/);
  });

  it("clears a pending ownership transfer on completion", async () => {
    const { account, guardians } = await guardedAccount(1);
    await ownerOp(t, account, accountCall("transferOwnership", [randomAccount().address]));
    const newOwner = randomAccount();
    await call(guardians[0]!, account, "startRecovery", [newOwner.address]);
    await increaseTime(t, RECOVERY_PERIOD);
    await call(null, account, "completeRecovery", [await recoverySignatures(account, guardians)]);
    expect(await readAccount(t, account.address, "owner")).toBe(newOwner.address);
    expect(await readAccount(t, account.address, "pendingOwner")).toBe(zeroAddress);
  });

  it("is canceled by the owner only, and signatures for a canceled recovery never count again", async () => {
    const { account, guardians } = await guardedAccount(2);
    const newOwner = randomAccount();
    await call(guardians[0]!, account, "startRecovery", [newOwner.address]);
    const stale = await recoverySignatures(account, byAddress(guardians));
    await expect(call(guardians[0]!, account, "cancelRecovery", [])).rejects.toThrow(/NotAuthorized/);
    await ownerOp(t, account, accountCall("cancelRecovery", []));
    expect(await readAccount(t, account.address, "getRecovery")).toEqual([zeroAddress, 0n, 0]);
    expect(await readAccount(t, account.address, "recoveryNonce")).toBe(1n);
    await expect(call(null, account, "completeRecovery", [stale])).rejects.toThrow(/NoActiveRecovery/);

    // Same new owner again: the nonce (and executeAfter) moved on, so the old signature is for another digest.
    await call(guardians[0]!, account, "startRecovery", [newOwner.address]);
    await increaseTime(t, RECOVERY_PERIOD);
    await expect(call(null, account, "completeRecovery", [stale])).rejects.toThrow(/InvalidGuardianSignature/);
    await call(null, account, "completeRecovery", [await recoverySignatures(account, byAddress(guardians))]);
    expect(await readAccount(t, account.address, "owner")).toBe(newOwner.address);
  });

  it("refuses to start without guardians", async () => {
    const account = await newAccount(t);
    await fund(t, account.owner.address);
    await expect(call(account.owner, account, "startRecovery", [randomAccount().address])).rejects.toThrow(/NoGuardians/);
  });
});

describe("guardian-signed userOps", () => {
  it("may start and complete recovery through a sponsored op, nothing else", async () => {
    const { account, guardians } = await guardedAccount(2);
    const guardian = guardians[0]!;
    const newOwner = randomAccount();
    const guardianOp = async (callData: Hex, sponsored = true) => {
      const op = await buildOp(t, { sender: account.address, callData });
      return signOp(t, sponsored ? await sponsor(t, op) : op, guardian);
    };

    for (const callData of [
      executeCall(guardian.address, 1n),
      accountCall("transferOwnership", [guardian.address]),
      accountCall("cancelRecovery", []),
      accountCall("removeGuardian", [guardians[1]!.address]),
    ]) {
      await expect(handleOps(t, [await guardianOp(callData)])).rejects.toThrow(/AA24 signature error/);
    }
    // Not without a paymaster: a guardian never spends the account's funds.
    await expect(handleOps(t, [await guardianOp(accountCall("startRecovery", [newOwner.address]), false)])).rejects.toThrow(
      /AA24 signature error/,
    );

    const balanceBefore = await t.publicClient.getBalance({ address: account.address });
    const start = await handleOps(t, [await guardianOp(accountCall("startRecovery", [newOwner.address]))]);
    expect(start.results[0]!.success).toBe(true);
    expect((await readAccount(t, account.address, "getRecovery"))[0]).toBe(newOwner.address);

    await increaseTime(t, RECOVERY_PERIOD);
    const signatures = await recoverySignatures(account, byAddress(guardians));
    const complete = await handleOps(t, [await guardianOp(accountCall("completeRecovery", [signatures]))]);
    expect(complete.results[0]!.success).toBe(true);
    expect(await readAccount(t, account.address, "owner")).toBe(newOwner.address);
    expect(await t.publicClient.getBalance({ address: account.address })).toBe(balanceBefore);
  });

  it("may start recovery with the op that deploys the account (createAccountWithGuardian), without the owner", async () => {
    const owner = randomAccount();
    const guardian = randomAccount();
    const newOwner = randomAccount();
    const salt = generatePrivateKey();
    const args = [owner.address, guardian.address, salt] as const;
    const factory = { address: t.deployment.accountFactory, abi: accountFactoryAbi } as const;
    const sender = await t.publicClient.readContract({ ...factory, functionName: "getAddressWithGuardian", args });
    const initCode = concat([t.deployment.accountFactory, encodeFunctionData({ ...factory, functionName: "createAccountWithGuardian", args })]);
    const op = await sponsor(t, await buildOp(t, { sender, initCode, callData: accountCall("startRecovery", [newOwner.address]) }));
    const { results } = await handleOps(t, [await signOp(t, op, guardian)]);
    expect(results[0]!.success).toBe(true);
    expect(await readAccount(t, sender, "owner")).toBe(owner.address);
    expect(await readAccount(t, sender, "getGuardians")).toEqual([guardian.address]);
    expect((await readAccount(t, sender, "getRecovery"))[0]).toBe(newOwner.address);

    await increaseTime(t, RECOVERY_PERIOD);
    const account = { address: sender, owner, salt };
    const signatures = await recoverySignatures(account, [guardian]);
    const complete = await handleOps(t, [await signOp(t, await sponsor(t, await buildOp(t, { sender, callData: accountCall("completeRecovery", [signatures]) })), guardian)]);
    expect(complete.results[0]!.success).toBe(true);
    expect(await readAccount(t, sender, "owner")).toBe(newOwner.address);
  });

  it("lets the owner start recovery through an op too", async () => {
    const { account } = await guardedAccount(1);
    const newOwner = randomAccount();
    await ownerOp(t, account, accountCall("startRecovery", [newOwner.address]));
    expect((await readAccount(t, account.address, "getRecovery"))[0]).toBe(newOwner.address);
  });
});
