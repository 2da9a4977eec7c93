import { hashTypedData, zeroAddress, type Hex, type PrivateKeyAccount } from "viem";
import { generatePrivateKey } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { accountFactoryV8Abi, smartAccountV8Abi } from "@/contracts/artifacts";
import { accountDomain, blockTime, byAddress, fund, increaseTime, randomAccount, send, signRecovery, walletFor, type TestChain } from "./helpers";
import {
  buildOpV08,
  callV08,
  executeV08,
  factoryDataV08,
  handleOpsV08,
  newAccountV08,
  ownerOpV08,
  readV08,
  runOpV08,
  signOpV08,
  sponsorV08,
  startChainV08,
  type TestAccountV08,
} from "./helpers-v08";

let t: TestChain;
beforeAll(async () => {
  t = await startChainV08(31337);
});
afterAll(async () => {
  await t?.stop();
});

const RECOVERY_PERIOD = 2 * 24 * 3600;

/** An account with `count` guardians (each funded for direct calls). */
async function guardedAccount(count: number): Promise<{ account: TestAccountV08; guardians: PrivateKeyAccount[] }> {
  const account = await newAccountV08(t);
  const guardians = Array.from({ length: count }, () => randomAccount());
  for (const g of guardians) {
    await ownerOpV08(t, account, callV08("addGuardian", [g.address]));
    await fund(t, g.address);
  }
  return { account, guardians };
}

type Direct = "startRecovery" | "completeRecovery" | "cancelRecovery" | "addGuardian" | "removeGuardian" | "acceptOwnership";
const call = (from: PrivateKeyAccount | null, account: TestAccountV08, functionName: Direct, args: readonly unknown[]) =>
  send(t, from ? walletFor(t, from) : null, { address: account.address, abi: smartAccountV8Abi, functionName, args } as never);

async function recoverySignatures(account: { address: `0x${string}` }, signers: PrivateKeyAccount[]): Promise<Hex[]> {
  const [newOwner, executeAfter] = await readV08(t, account.address, "getRecovery");
  const nonce = await readV08(t, account.address, "recoveryNonce");
  // The same EIP-712 domain name and version as SmartAccount (v0.6): the helpers of v0.6 sign for v0.8 too.
  return Promise.all(signers.map((g) => signRecovery(t, account.address, g, { newOwner, executeAfter, nonce })));
}

describe("guardians (v0.8)", () => {
  it("are added and removed by authorized callers only, within the rules", async () => {
    const { account, guardians } = await guardedAccount(3);
    expect(await readV08(t, account.address, "getGuardians")).toEqual(guardians.map((g) => g.address));
    await ownerOpV08(t, account, callV08("removeGuardian", [guardians[0]!.address]));
    expect(await readV08(t, account.address, "isGuardian", [guardians[0]!.address])).toBe(false);

    await fund(t, account.owner.address);
    const owner = account.owner;
    await expect(call(owner, account, "addGuardian", [guardians[1]!.address])).rejects.toThrow(/AlreadyGuardian/);
    await expect(call(owner, account, "addGuardian", [owner.address])).rejects.toThrow(/InvalidGuardian/);
    await expect(call(owner, account, "addGuardian", [zeroAddress])).rejects.toThrow(/InvalidGuardian/);
    await expect(call(owner, account, "removeGuardian", [guardians[0]!.address])).rejects.toThrow(/NotGuardian/);
    await expect(call(guardians[1]!, account, "addGuardian", [randomAccount().address])).rejects.toThrow(/NotAuthorized/);
    for (let i = 0; i < 14; i++) await call(owner, account, "addGuardian", [randomAccount().address]);
    await expect(call(owner, account, "addGuardian", [randomAccount().address])).rejects.toThrow(/TooManyGuardians/);
  });
});

describe("recovery (v0.8)", () => {
  it("is started by a guardian and completed after the period with a strict majority of sorted guardian signatures", async () => {
    const { account, guardians } = await guardedAccount(3);
    const newOwner = randomAccount();
    const stranger = randomAccount();
    await fund(t, stranger.address);

    await expect(call(stranger, account, "startRecovery", [newOwner.address])).rejects.toThrow(/NotAuthorized/);
    await expect(call(guardians[0]!, account, "startRecovery", [guardians[1]!.address])).rejects.toThrow(/InvalidOwner/);
    // executeAfter counts from the block that started it, which later blocks of the shared chain may follow at once.
    const started = await blockTime(t, await call(guardians[0]!, account, "startRecovery", [newOwner.address]));
    const [pendingOwner, executeAfter, required] = await readV08(t, account.address, "getRecovery");
    expect([pendingOwner, executeAfter, required]).toEqual([newOwner.address, BigInt(started + RECOVERY_PERIOD), 2]);
    expect(await readV08(t, account.address, "recoveryHash")).toBe(
      hashTypedData({
        domain: accountDomain(t, account.address),
        types: { Recover: [{ name: "newOwner", type: "address" }, { name: "executeAfter", type: "uint64" }, { name: "nonce", type: "uint256" }] },
        primaryType: "Recover",
        message: { newOwner: newOwner.address, executeAfter, nonce: 0n },
      }),
    );

    const sorted = byAddress(guardians);
    await expect(call(stranger, account, "completeRecovery", [await recoverySignatures(account, sorted.slice(0, 2))])).rejects.toThrow(/RecoveryNotReady/);
    await increaseTime(t, RECOVERY_PERIOD);
    const [s0, s1] = await recoverySignatures(account, sorted);
    const [outsider] = await recoverySignatures(account, [stranger]);
    await expect(call(stranger, account, "completeRecovery", [[s0]])).rejects.toThrow(/NotEnoughGuardianSignatures/);
    await expect(call(stranger, account, "completeRecovery", [[s1, s0]])).rejects.toThrow(/GuardianSignaturesNotSorted/);
    await expect(call(stranger, account, "completeRecovery", [[s0, outsider]])).rejects.toThrow(/InvalidGuardianSignature/);
    await call(stranger, account, "completeRecovery", [[s0, s1]]);
    expect(await readV08(t, account.address, "owner")).toBe(newOwner.address);
    expect(await readV08(t, account.address, "recoveryNonce")).toBe(1n);

    const op = await buildOpV08(t, { sender: account.address, callData: executeV08(stranger.address, 1n) });
    await expect(handleOpsV08(t, [await signOpV08(t, op, account.owner)])).rejects.toThrow(/AA24 signature error/);
    await runOpV08(t, op, newOwner);
  });

  it("is canceled by an ownership change or the owner, and its signatures never count again", async () => {
    const { account, guardians } = await guardedAccount(1);
    const recoveryOwner = randomAccount();
    await call(guardians[0]!, account, "startRecovery", [recoveryOwner.address]);
    const stale = await recoverySignatures(account, guardians);
    const transferee = randomAccount();
    await fund(t, transferee.address);
    await ownerOpV08(t, account, callV08("transferOwnership", [transferee.address]));
    await call(transferee, account, "acceptOwnership", []);
    expect(await readV08(t, account.address, "getRecovery")).toEqual([zeroAddress, 0n, 0]);
    await increaseTime(t, RECOVERY_PERIOD);
    await expect(call(null, account, "completeRecovery", [stale])).rejects.toThrow(/NoActiveRecovery/);

    await call(guardians[0]!, account, "startRecovery", [recoveryOwner.address]);
    await expect(call(guardians[0]!, account, "cancelRecovery", [])).rejects.toThrow(/NotAuthorized/);
    await ownerOpV08(t, { address: account.address, owner: transferee }, callV08("cancelRecovery", []));
    expect(await readV08(t, account.address, "recoveryNonce")).toBe(2n);
    await call(guardians[0]!, account, "startRecovery", [recoveryOwner.address]);
    await increaseTime(t, RECOVERY_PERIOD);
    await expect(call(null, account, "completeRecovery", [stale])).rejects.toThrow(/InvalidGuardianSignature/);
    expect(await readV08(t, account.address, "owner")).toBe(transferee.address);
  });
});

describe("guardian-signed userOps (v0.8)", () => {
  it("may start and complete recovery through a sponsored op, nothing else, never paid by the account", async () => {
    const { account, guardians } = await guardedAccount(2);
    const guardian = guardians[0]!;
    const newOwner = randomAccount();
    const guardianOp = async (callData: Hex, sponsored = true) => {
      const op = await buildOpV08(t, { sender: account.address, callData });
      return signOpV08(t, sponsored ? await sponsorV08(t, op) : op, guardian);
    };
    for (const callData of [
      executeV08(guardian.address, 1n),
      callV08("transferOwnership", [guardian.address]),
      callV08("cancelRecovery", []),
      callV08("removeGuardian", [guardians[1]!.address]),
      callV08("registerSessionKey", [guardian.address, 0, 2 ** 40, 1, [], 0n]),
    ]) {
      await expect(handleOpsV08(t, [await guardianOp(callData)])).rejects.toThrow(/AA24 signature error/);
    }
    await expect(handleOpsV08(t, [await guardianOp(callV08("startRecovery", [newOwner.address]), false)])).rejects.toThrow(/AA24 signature error/);

    const balanceBefore = await t.publicClient.getBalance({ address: account.address });
    expect((await handleOpsV08(t, [await guardianOp(callV08("startRecovery", [newOwner.address]))])).results[0]!.success).toBe(true);
    await increaseTime(t, RECOVERY_PERIOD);
    const signatures = await recoverySignatures(account, byAddress(guardians));
    expect((await handleOpsV08(t, [await guardianOp(callV08("completeRecovery", [signatures]))])).results[0]!.success).toBe(true);
    expect(await readV08(t, account.address, "owner")).toBe(newOwner.address);
    expect(await t.publicClient.getBalance({ address: account.address })).toBe(balanceBefore);
  });

  it("may start recovery with the op that deploys the account (createAccountWithGuardian), without the owner", async () => {
    const owner = randomAccount();
    const guardian = randomAccount();
    const newOwner = randomAccount();
    const salt = generatePrivateKey();
    const sender = await t.publicClient.readContract({
      address: t.deployment.accountFactoryV08,
      abi: accountFactoryV8Abi,
      functionName: "getAddressWithGuardian",
      args: [owner.address, guardian.address, salt],
    });
    const op = await sponsorV08(
      t,
      await buildOpV08(t, { sender, factory: t.deployment.accountFactoryV08, factoryData: factoryDataV08(owner.address, salt, guardian.address), callData: callV08("startRecovery", [newOwner.address]) }),
    );
    expect((await handleOpsV08(t, [await signOpV08(t, op, guardian)])).results[0]!.success).toBe(true);
    expect(await readV08(t, sender, "owner")).toBe(owner.address);
    expect(await readV08(t, sender, "getGuardians")).toEqual([guardian.address]);
    expect((await readV08(t, sender, "getRecovery"))[0]).toBe(newOwner.address);
  });
});
