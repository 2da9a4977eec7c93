import { InngestTestEngine } from "@inngest/test";
import { and, eq, sql } from "drizzle-orm";
import { encodeFunctionData, parseEther, toHex, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { entryPointAbi, smartAccountAbi, verifyingPaymasterAbi } from "@/contracts/artifacts";
import { accountFactoryCall, counterfactualAddress } from "@/lib/chain/accounts";
import { serviceDeployment } from "@/lib/chain/contracts";
import { getDb } from "@/lib/db/client";
import { chainCursors, sponsorshipEntries } from "@/lib/db/schema";
import { takeRemoteCallsInTransactions } from "@/lib/db/transaction-guard";
import type { ProjectWithKeys } from "@/lib/projects/service";
import { balanceOf, localCredit } from "@/lib/sponsorship/ledger";
import { followAll, followChain } from "@/lib/follower/follow";
import { DEPOSITS_CURSOR, type DepositOutcome } from "@/lib/sponsorship/deposits";
import { CRON_EVENT } from "@/inngest/runner";
import { PASSES_PER_RUN, watchSponsorship } from "@/inngest/functions/sponsorship";
import { call, newProject } from "./helpers/api";
import { chainOf, clientOf, fundedWallet, mined } from "./helpers/chain";
import { followed } from "./helpers/follow";

process.env.TRANSACTION_GUARD = "1"; // read when this process opens its database: remote calls inside transactions are recorded

/**
 * Developers fund their project's sponsorship by depositing to our paymaster on chain (EntryPoint.depositTo(paymaster))
 * from a verified developer account: the chain follower credits the deposit to that project once it has its confirmations,
 * exactly once whatever reads it again, and nothing for anyone else's deposit.
 */
let project: ProjectWithKeys;
const d = () => serviceDeployment();

/** An external developer account of `key`'s project and mode, added with its owner's signature; the owner funded on `chainIds`. */
async function developerAccount(key: string, privateKey: Hex = generatePrivateKey(), chainIds = [31337]) {
  const owner = privateKeyToAccount(privateKey);
  const { body } = await call("GET", "/v1/settings/developer_accounts/message_to_sign", { key, query: { address: owner.address } });
  const res = await call("POST", "/v1/settings/developer_accounts", { key, json: { address: owner.address, signature: await owner.signMessage({ message: body.message }) } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  for (const chainId of chainIds) await fundedWallet(chainId, privateKey);
  return { id: res.body.id as string, privateKey, address: owner.address };
}

/** EntryPoint.depositTo(paymaster) sent by `privateKey` itself: the reference the credit would carry and the block. */
async function deposit(privateKey: Hex, amount: bigint, chainId = 31337) {
  const wallet = await fundedWallet(chainId, privateKey);
  const hash = await wallet.writeContract({ address: d().entryPoint, abi: entryPointAbi, functionName: "depositTo", args: [d().paymaster], value: amount });
  return depositOf(chainId, hash);
}

async function depositOf(chainId: number, hash: Hex, { entryPoint, paymaster } = { entryPoint: d().entryPoint, paymaster: d().paymaster }) {
  const receipt = await mined(chainId, hash);
  const log = receipt.logs.find((l) => l.address.toLowerCase() === entryPoint.toLowerCase() && l.topics[1]?.toLowerCase().endsWith(paymaster.slice(2).toLowerCase()));
  expect(log, "a Deposited(paymaster) log").toBeDefined();
  return { reference: `${hash}:${log!.logIndex}`, blockNumber: Number(receipt.blockNumber) };
}

/** The deposit credits of the chain with this reference, whichever project. */
const creditsOf = async (chainId: number, reference: string) =>
  (await getDb())
    .select()
    .from(sponsorshipEntries)
    .where(and(eq(sponsorshipEntries.chainId, chainId), eq(sponsorshipEntries.reference, reference), eq(sponsorshipEntries.cause, "deposit")));

const outcomeOf = (outcomes: DepositOutcome[], reference: string) => outcomes.find((o) => o.reference === reference);

/** Follows the chain up to its head (several passes if a pass stops early): the deposits it read. */
const caughtUp = async (chainId = 31337): Promise<DepositOutcome[]> => (await followed(chainId)).deposits;

const mine = (chainId: number, blocks: number) => clientOf(chainId).request({ method: "anvil_mine" as never, params: [toHex(blocks)] as never });

beforeAll(async () => {
  project = await newProject("sponsorship deposits");
});
afterEach(() => {
  delete process.env.SPONSORSHIP_CONFIRMATIONS;
  expect(takeRemoteCallsInTransactions()).toEqual([]);
});

describe("developer deposits to our paymaster", () => {
  it("credits a verified developer account's deposit to its project once it has its confirmations, exactly once across restarts", async () => {
    const key = project.keys.test.secret;
    const ctx = { projectId: project.id, livemode: false };
    const developer = await developerAccount(key);
    const db = await getDb();
    const before = await balanceOf(db, ctx, 31337);
    expect(before.credited).toBe(localCredit());

    // Far more confirmations than the chain has on top of it: not credited yet, and the cursor stays before it.
    process.env.SPONSORSHIP_CONFIRMATIONS = "100000";
    const amount = parseEther("0.25");
    const { reference, blockNumber } = await deposit(developer.privateKey, amount);
    expect(outcomeOf(await caughtUp(), reference)).toBeUndefined();
    expect(await creditsOf(31337, reference)).toEqual([]);
    const [cursor] = await db.select().from(chainCursors).where(and(eq(chainCursors.name, DEPOSITS_CURSOR), eq(chainCursors.chainId, 31337)));
    expect(cursor!.nextBlock).toBeLessThanOrEqual(BigInt(blockNumber));

    // Three confirmations: its own block and two more.
    process.env.SPONSORSHIP_CONFIRMATIONS = "3";
    const head = Number(await clientOf(31337).getBlockNumber({ cacheTime: 0 }));
    if (head < blockNumber + 2) await mine(31337, blockNumber + 2 - head);
    expect(outcomeOf(await caughtUp(), reference)).toMatchObject({ outcome: "credited", projectId: project.id, developerAccountId: developer.id, amount: amount.toString(), from: developer.address.toLowerCase() });
    const credits = await creditsOf(31337, reference);
    expect(credits).toHaveLength(1);
    expect(credits[0]).toMatchObject({ projectId: project.id, livemode: false, kind: "credit", amount: amount.toString(), cause: "deposit" });
    expect((await balanceOf(db, ctx, 31337)).credited).toBe(localCredit() + amount);

    // Read again: by the next pass (nothing new), from a fresh cursor (a restart on a new database of cursors), and by
    // two instances at once (the background function of two processes): still one credit.
    await caughtUp();
    await db.delete(chainCursors).where(eq(chainCursors.name, DEPOSITS_CURSOR));
    expect(outcomeOf(await caughtUp(), reference)).toMatchObject({ outcome: "already", projectId: project.id });
    await db.delete(chainCursors).where(eq(chainCursors.name, DEPOSITS_CURSOR));
    const both = await Promise.all([followChain(db, chainOf(31337)), followChain(db, chainOf(31337))]);
    expect(both.flatMap((s) => s.deposits).filter((o) => o.reference === reference && o.outcome === "credited")).toEqual([]);
    expect(await creditsOf(31337, reference)).toHaveLength(1);
    expect((await balanceOf(db, ctx, 31337)).credited).toBe(localCredit() + amount);

    // The paymaster's own deposit() (it forwards its value to depositTo(itself)) from the developer is a deposit too.
    const wallet = await fundedWallet(31337, developer.privateKey);
    const viaPaymaster = await depositOf(31337, await wallet.writeContract({ address: d().paymaster, abi: verifyingPaymasterAbi, functionName: "deposit", value: parseEther("0.05") }));
    await mine(31337, 2);
    expect(outcomeOf(await caughtUp(), viaPaymaster.reference)).toMatchObject({ outcome: "credited", projectId: project.id });
    expect((await balanceOf(db, ctx, 31337)).credited).toBe(localCredit() + amount + parseEther("0.05"));

    // Our v0.8 paymaster at the v0.8 EntryPoint funds the same balance: depositTo(paymasterV08) and its deposit().
    const v08 = { entryPoint: d().entryPointV08, paymaster: d().paymasterV08 };
    const toEntryPointV08 = await depositOf(31337, await wallet.writeContract({ address: v08.entryPoint, abi: entryPointAbi, functionName: "depositTo", args: [v08.paymaster], value: parseEther("0.03") }), v08);
    const viaPaymasterV08 = await depositOf(31337, await wallet.writeContract({ address: v08.paymaster, abi: verifyingPaymasterAbi, functionName: "deposit", value: parseEther("0.02") }), v08);
    await mine(31337, 2);
    const outcomes = await caughtUp();
    expect(outcomeOf(outcomes, toEntryPointV08.reference)).toMatchObject({ outcome: "credited", projectId: project.id, amount: parseEther("0.03").toString() });
    expect(outcomeOf(outcomes, viaPaymasterV08.reference)).toMatchObject({ outcome: "credited", projectId: project.id, amount: parseEther("0.02").toString() });
    expect((await balanceOf(db, ctx, 31337)).credited).toBe(localCredit() + amount + parseEther("0.1"));

    // The background function's pass (every configured chain) finds nothing more to credit.
    const pass = await followAll(db);
    const local = pass.find((c) => c.chainId === 31337)!;
    expect(local).not.toHaveProperty("error");
    expect(await creditsOf(31337, reference)).toHaveLength(1);
  }, 60_000);

  it("credits nothing for an unverified address, a deleted developer account, an address of several projects, another mode's account, or a deposit not sent directly", async () => {
    const key = project.keys.test.secret;
    const db = await getDb();
    const amount = parseEther("0.01");

    // An address nobody added as a developer account.
    const stranger = generatePrivateKey();
    const unverified = await deposit(stranger, amount);

    // A developer account deleted before its deposit was read.
    const gone = await developerAccount(key);
    expect((await call("DELETE", `/v1/settings/developer_accounts/${gone.id}`, { key })).status).toBe(200);
    const deleted = await deposit(gone.privateKey, amount);

    // One address, verified by two projects: whose deposit it is cannot be told.
    const other = await newProject("sponsorship deposits, another project");
    const shared = await developerAccount(key);
    await developerAccount(other.keys.test.secret, shared.privateKey);
    const ambiguous = await deposit(shared.privateKey, amount);

    // A live-mode developer account depositing on a test chain: the chain's mode decides, and it has none in it.
    const live = await developerAccount(project.keys.live.secret, generatePrivateKey(), [31337, 31339]);
    const wrongMode = await deposit(live.privateKey, amount);

    // A verified developer's deposit made through its own smart account (execute(entryPoint, value, depositTo)):
    // the transaction is the developer's, but not a direct deposit call, so who paid is not what the chain shows.
    const viaContract = await developerAccount(key);
    const wallet = await fundedWallet(31337, viaContract.privateKey);
    const salt = toHex(1n, { size: 32 });
    const { factory, data } = accountFactoryCall(viaContract.address, salt);
    await mined(31337, await wallet.sendTransaction({ to: factory, data }));
    const smartAccount = counterfactualAddress(viaContract.address, salt) as Address;
    await clientOf(31337).request({ method: "anvil_setBalance" as never, params: [smartAccount, toHex(parseEther("1"))] as never });
    const depositCall = encodeFunctionData({ abi: entryPointAbi, functionName: "depositTo", args: [d().paymaster] });
    const indirect = await depositOf(
      31337,
      await wallet.writeContract({ address: smartAccount, abi: smartAccountAbi, functionName: "execute", args: [d().entryPoint, amount, depositCall] }),
    );

    const outcomes = await caughtUp();
    expect(outcomeOf(outcomes, unverified.reference)).toMatchObject({ outcome: "unverified", projectId: null });
    expect(outcomeOf(outcomes, deleted.reference)).toMatchObject({ outcome: "unverified", projectId: null });
    expect(outcomeOf(outcomes, ambiguous.reference)).toMatchObject({ outcome: "ambiguous", projectId: null });
    expect(outcomeOf(outcomes, wrongMode.reference)).toMatchObject({ outcome: "unverified", projectId: null });
    expect(outcomeOf(outcomes, indirect.reference)).toMatchObject({ outcome: "indirect", projectId: project.id });
    for (const { reference } of [unverified, deleted, ambiguous, wrongMode, indirect]) expect(await creditsOf(31337, reference), reference).toEqual([]);
    // The other project was credited nothing either: its balance is its local grant alone.
    expect((await balanceOf(db, { projectId: other.id, livemode: false }, 31337)).credited).toBe(localCredit());

    // The same live-mode account depositing on the live chain: credited to the live mode, which starts at zero.
    const onLive = await deposit(live.privateKey, amount, 31339);
    expect(outcomeOf(await caughtUp(31339), onLive.reference)).toMatchObject({ outcome: "credited", projectId: project.id, developerAccountId: live.id });
    expect(await creditsOf(31339, onLive.reference)).toMatchObject([{ projectId: project.id, livemode: true, amount: amount.toString() }]);
    expect((await balanceOf(db, { projectId: project.id, livemode: true }, 31339)).credited).toBe(amount);
    expect((await balanceOf(db, { projectId: project.id, livemode: true }, 31339)).available).toBe(amount);
    // Not credited anywhere after all, however often read.
    await db.execute(sql`delete from chain_cursors where name = ${DEPOSITS_CURSOR}`);
    await caughtUp();
    for (const { reference } of [unverified, deleted, ambiguous, wrongMode, indirect]) expect(await creditsOf(31337, reference), reference).toEqual([]);
  }, 60_000);

  it("is credited by the watch-sponsorship function, every configured chain read in each of its passes, each pass a step", async () => {
    const developer = await developerAccount(project.keys.test.secret);
    const amount = parseEther("0.02");
    const { reference } = await deposit(developer.privateKey, amount);
    const steps = Array.from({ length: PASSES_PER_RUN - 1 }, (_, i) => ({ id: `wait-${i}`, handler: () => null }));
    const { result, ctx } = await new InngestTestEngine({ function: watchSponsorship, events: [{ name: CRON_EVENT, data: { cron: "* * * * *" } }], steps }).execute();
    expect((ctx.step.run as unknown as { mock: { calls: unknown[][] } }).mock.calls.map((c) => c[0])).toEqual(Array.from({ length: PASSES_PER_RUN }, (_, i) => `pass-${i}`));
    expect((ctx.step.sleep as unknown as { mock: { calls: unknown[][] } }).mock.calls).toEqual(Array.from({ length: PASSES_PER_RUN - 1 }, (_, i) => [`wait-${i}`, "10s"]));
    expect(result).toMatchObject({ credited: expect.any(Number), errors: 0 });
    expect((result as { credited: number }).credited).toBeGreaterThanOrEqual(1);
    expect(await creditsOf(31337, reference)).toMatchObject([{ projectId: project.id, amount: amount.toString() }]);
    const cursors = await (await getDb()).select().from(chainCursors).where(eq(chainCursors.name, DEPOSITS_CURSOR));
    expect(cursors.map((c) => c.chainId).sort()).toEqual([31337, 31338, 31339]);
  }, 60_000);
});
