import { encodeFunctionData, erc20Abi, maxUint256, parseEther, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { accountFactoryAbi, smartAccountAbi, testTokenAbi, testTokenBytecode } from "@/contracts/artifacts";
import { serviceDeployment } from "@/lib/chain/contracts";
import { getDb } from "@/lib/db/client";
import { serviceAccount } from "@/lib/keys/service-keys";
import { describeOperation, type DecodeContext } from "@/lib/intents/operation-calls";
import { openSigningLink } from "@/lib/signing/service";
import { call, newProject, waitForLanding } from "./helpers/api";
import { clientOf, fundedWallet, mined } from "./helpers/chain";

const CHAIN = 31337;
const random = () => privateKeyToAccount(generatePrivateKey()).address;
const self = (functionName: string, args: unknown[] = []) => encodeFunctionData({ abi: smartAccountAbi, functionName, args } as never) as Hex;

describe("the signing page's calls, on an operation the service built", () => {
  let key: string;
  let token: { id: string; address: Address };
  let minter: Awaited<ReturnType<typeof fundedWallet>>;

  beforeAll(async () => {
    vi.stubEnv("RATE_LIMIT_PER_SECOND", "0");
    key = (await newProject("signing calls")).keys.test.secret;
    minter = await fundedWallet(CHAIN);
    const receipt = await mined(CHAIN, await minter.deployContract({ abi: testTokenAbi, bytecode: testTokenBytecode, args: ["Gold", "GOLD"] }));
    token = (await call("POST", "/v1/contracts", { key, json: { name: "Gold", chainId: CHAIN, address: receipt.contractAddress, abi: testTokenAbi } })).body;
  });

  it("show the deployment, the service made guardian and the token charge, none of which the developer declared; the op lands doing exactly that", async () => {
    const policy = (await call("POST", "/v1/policies", { key, json: { name: "gold for gas", chainId: CHAIN, strategy: { sponsorSchema: "fixed_rate", tokenContract: token.id, tokenContractAmount: parseEther("5").toString() } } })).body;
    await call("POST", "/v1/policy_rules", { key, json: { policy: policy.id, type: "contract_functions", contract: token.id, functionName: "mint" } });
    const owner = privateKeyToAccount(generatePrivateKey());
    const { body: account } = await call("POST", "/v1/accounts", { key, json: { chainId: CHAIN, externalOwnerAddress: owner.address, defaultGuardian: true } });
    await mined(CHAIN, await minter.writeContract({ address: token.address, abi: testTokenAbi, functionName: "mint", args: [account.address, parseEther("12")] }));
    const res = await call("POST", "/v1/transaction_intents", {
      key,
      json: { chainId: CHAIN, account: account.id, policy: policy.id, interactions: [{ contract: token.id, functionName: "mint", functionArgs: [account.address, "1000"] }] },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const intent = res.body;

    const page = await openSigningLink(await getDb(), new URL(intent.nextAction.payload.signingUrl).searchParams.get("t")!, intent.id);
    if (page.state !== "awaiting") throw new Error(JSON.stringify(page));
    const { body: developerAccounts } = await call("GET", "/v1/settings/developer_accounts", { key });
    const collector = developerAccounts.data[0].address as Address;
    const guardian = serviceAccount("guardian").address;
    expect(page.view.interactions).toHaveLength(1);
    // The factory deploys the account with the service as guardian: one step, said in words.
    expect(page.view.calls.map((c) => [c.kind, c.summary])).toEqual([
      ["deployment", `Deploys your account (${account.address}), owned by ${owner.address}, with the service (${guardian}) as guardian: it can help recover the account if you lose your key`],
      ["contract", "Calls mint on Gold"],
      ["token_charge", `Pays 5 GOLD to the project (${collector}) for gas`],
    ]);
    expect(page.view.calls[0]).toMatchObject({ to: serviceDeployment().accountFactory, functionName: "createAccountWithGuardian", attention: true, value: "0 ETH" });
    expect(JSON.parse(page.view.calls[0]!.args!).slice(0, 2)).toEqual([owner.address, guardian]);
    expect(page.view.calls[1]).toMatchObject({ to: token.address, contract: { id: token.id, name: "Gold" }, args: JSON.stringify([account.address, "1000"]) });
    expect(page.view.calls[2]).toMatchObject({ to: token.address, functionName: "transfer", args: JSON.stringify([collector, parseEther("5").toString()]), selector: "0xa9059cbb" });

    // Signed and landed, the op did what the page said.
    const signature = await owner.signMessage({ message: { raw: intent.userOperationHash as Hex } });
    expect((await call("POST", `/v1/transaction_intents/${intent.id}/signature`, { key, json: { signature } })).status).toBe(200);
    expect((await waitForLanding(key, intent.id)).response.status).toBe(1);
    const client = clientOf(CHAIN);
    expect(await client.readContract({ address: account.address, abi: smartAccountAbi, functionName: "isGuardian", args: [guardian] })).toBe(true);
    expect(await client.readContract({ address: token.address, abi: erc20Abi, functionName: "balanceOf", args: [collector] })).toBe(parseEther("5"));
  });
});

describe("decoding an operation", () => {
  const account = random();
  const ctx: DecodeContext = {
    account,
    symbol: "ETH",
    accountFactory: random(),
    serviceGuardian: random(),
    contracts: new Map(),
    projectAccounts: new Set(),
    tokens: new Map(),
    charge: null,
  };
  const batch = (calls: { to: Address; value?: bigint; data?: Hex }[]) =>
    encodeFunctionData({ abi: smartAccountAbi, functionName: "executeBatch", args: [calls.map((c) => c.to), calls.map((c) => c.value ?? 0n), calls.map((c) => c.data ?? "0x")] });

  it("never hides a call: unknown ones raw, native transfers, another guardian, session keys, approvals and a foreign factory in words", () => {
    const [stranger, target, spender, key] = [random(), random(), random(), random()];
    const unknown = "0xdeadbeef00000000000000000000000000000000000000000000000000000001" as Hex;
    const calls = describeOperation(ctx, {
      initCode: `${target}${encodeFunctionData({ abi: accountFactoryAbi, functionName: "createAccount", args: [stranger, `0x${"00".repeat(32)}`] }).slice(2)}` as Hex,
      callData: batch([
        { to: account, data: self("addGuardian", [stranger]) },
        { to: stranger, value: parseEther("0.5") },
        { to: target, value: 7n, data: unknown },
        { to: target, data: encodeFunctionData({ abi: erc20Abi, functionName: "approve", args: [spender, maxUint256] }) },
        { to: account, data: self("registerSessionKey", [key, 0, 1_800_000_000, 3, [target], 0n]) },
        { to: account, data: "0x12345678" },
      ]),
    });
    expect(calls.map((c) => [c.kind, c.summary])).toEqual([
      ["unknown", `Deploys your account through ${target}, which is not the service's account factory`],
      ["guardian", `Adds ${stranger} as a guardian of your account: it can help recover the account if you lose your key`],
      ["transfer", `Sends 0.5 ETH to ${stranger}`],
      ["unknown", `Calls an unknown function (selector 0xdeadbeef) on ${target}, sending 0.000000000000000007 ETH with it`],
      ["token", `Allows ${spender} to spend any amount of the token at ${target} from your account`],
      ["account", `Lets the session key ${key} sign for your account from now until 2027-01-15 08:00 UTC, at most 3 operations, calling only ${target}, only when a sponsor pays their fees`],
      ["unknown", "Calls an unknown function (selector 0x12345678) on your account"],
    ]);
    expect(calls[3]).toMatchObject({ to: target, value: "0.000000000000000007 ETH", selector: "0xdeadbeef", data: unknown, functionName: null });
    expect(calls[1]).toMatchObject({ to: account, functionName: "addGuardian", data: self("addGuardian", [stranger]) });
  });

  it("says which guardian our factory builds into the account it deploys", () => {
    const [owner, stranger] = [random(), random()];
    const salt = `0x${"00".repeat(32)}` as Hex;
    const deploy = (guardian: Address) =>
      `${ctx.accountFactory}${encodeFunctionData({ abi: accountFactoryAbi, functionName: "createAccountWithGuardian", args: [owner, guardian, salt] }).slice(2)}` as Hex;
    expect(describeOperation(ctx, { initCode: deploy(stranger), callData: "0x" })).toMatchObject([
      { kind: "deployment", attention: true, summary: `Deploys your account (${account}), owned by ${owner}, with ${stranger} as guardian: it can help recover the account if you lose your key` },
    ]);
    expect(describeOperation(ctx, { initCode: deploy(ctx.serviceGuardian), callData: "0x" })[0]!.summary).toContain(`with the service (${ctx.serviceGuardian}) as guardian`);
    const plain = `${ctx.accountFactory}${encodeFunctionData({ abi: accountFactoryAbi, functionName: "createAccount", args: [owner, salt] }).slice(2)}` as Hex;
    expect(describeOperation(ctx, { initCode: plain, callData: "0x" })).toMatchObject([{ kind: "deployment", attention: false, summary: `Deploys your account (${account}), owned by ${owner}` }]);
  });

  it("reads a direct call to the account, a batch the account would refuse and empty callData", () => {
    const newOwner = random();
    expect(describeOperation(ctx, { initCode: "0x", callData: self("startRecovery", [newOwner]) }).map((c) => c.summary)).toEqual([`Starts recovering your account to a new owner, ${newOwner}`]);
    const mismatched = encodeFunctionData({ abi: smartAccountAbi, functionName: "executeBatch", args: [[newOwner], [], ["0x"]] });
    expect(describeOperation(ctx, { initCode: "0x", callData: mismatched }).map((c) => c.summary)).toEqual(["Runs a batch of calls whose lists differ in length: your account will refuse it"]);
    expect(describeOperation(ctx, { initCode: "0x", callData: "0x" })).toEqual([]);
  });

  it("calls a token payment to the project a payment for gas only when it is the policy's charge", () => {
    const [tokenAddress, project] = [random(), random()];
    const transfer = (amount: bigint) => self("execute", [tokenAddress, 0n, encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [project, amount] })]);
    const known: DecodeContext = { ...ctx, projectAccounts: new Set([project.toLowerCase()]), tokens: new Map([[tokenAddress.toLowerCase(), { symbol: "USDC", decimals: 6 }]]), charge: { token: tokenAddress, amount: 2_500_000n } };
    expect(describeOperation(known, { initCode: "0x", callData: transfer(2_500_000n) })[0]).toMatchObject({ kind: "token_charge", summary: `Pays 2.5 USDC to the project (${project}) for gas` });
    expect(describeOperation(known, { initCode: "0x", callData: transfer(1n) })[0]).toMatchObject({ kind: "token", summary: `Pays 0.000001 USDC to the project (${project})` });
  });
});
