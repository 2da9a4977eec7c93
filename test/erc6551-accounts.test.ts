import Openfort from "@openfort/openfort-node";
import { getAddress, hashTypedData, maxUint256, parseEther, toHex, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount, type LocalAccount, type PrivateKeyAccount } from "viem/accounts";
import { beforeAll, describe, expect, it } from "vitest";
import { erc6551RegistryAbi, testNftAbi, testNftBytecode, tokenBoundAccountAbi } from "@/contracts/artifacts";
import { mintTestNft, TEST_NFT_ADDRESS } from "@/cli/nft";
import { accountSalt } from "@/lib/chain/accounts";
import { walletClient } from "@/lib/chain/clients";
import { serviceDeployment } from "@/lib/chain/contracts";
import { getDb } from "@/lib/db/client";
import { ownerKeyFor, ownerSigner } from "@/lib/keys/custodial";
import type { ProjectWithKeys } from "@/lib/projects/service";
import { openSigningLink } from "@/lib/signing/service";
import { call, expectError, newProject, waitForLanding } from "./helpers/api";
import { chainOf, clientOf, fundedWallet, mined } from "./helpers/chain";
import { routeServer } from "./helpers/sdk-server";

const CHAIN = 31337;
let project: ProjectWithKeys;
let key: string;
let nft: Address;
/** The NFT registered as a contract (con_), with a policy sponsoring its `mint`. */
let nftContract: { id: string };
let policy: { id: string };
let minter: Awaited<ReturnType<typeof fundedWallet>>;

const client = () => clientOf(CHAIN);
const randomKey = () => privateKeyToAccount(generatePrivateKey());
let nextTokenId = 1n;

async function mintTo(holder: Address, tokenId = nextTokenId++): Promise<bigint> {
  await mined(CHAIN, await minter.writeContract({ address: nft, abi: testNftAbi, functionName: "mint", args: [holder, tokenId] }));
  return tokenId;
}

/** `from` (given gas) moves the token to `to` on chain. */
async function transferToken(from: LocalAccount, to: Address, tokenId: bigint) {
  await client().request({ method: "anvil_setBalance" as never, params: [from.address, toHex(parseEther("1"))] as never });
  await mined(CHAIN, await walletClient(chainOf(CHAIN), from).writeContract({ address: nft, abi: testNftAbi, functionName: "transferFrom", args: [from.address, to, tokenId] }));
}

/** A sponsored intent minting a fresh NFT to `to` from the account. */
const mintIntent = (account: string, to: Address) =>
  call("POST", "/v1/transaction_intents", {
    key,
    json: { chainId: CHAIN, account, policy: policy.id, interactions: [{ contract: nftContract.id, functionName: "mint", functionArgs: [to, String(nextTokenId++)] }] },
  });

/** A policy sponsoring calls to the account itself (deployment, ownership actions). */
async function selfPolicy(): Promise<{ id: string }> {
  const { body } = await call("POST", "/v1/policies", { key, json: { name: "self", chainId: CHAIN, strategy: { sponsorSchema: "pay_for_user" } } });
  await call("POST", "/v1/policy_rules", { key, json: { policy: body.id, type: "account_functions" } });
  return body;
}

const holderOf = (tokenId: bigint) => client().readContract({ address: nft, abi: testNftAbi, functionName: "ownerOf", args: [tokenId] });

async function signAndLand(intent: { id: string; nextAction: { payload: { userOperationHash: Hex } } }, signer: PrivateKeyAccount) {
  const signature = await signer.signMessage({ message: { raw: intent.nextAction.payload.userOperationHash } });
  const res = await call("POST", `/v1/transaction_intents/${intent.id}/signature`, { key, json: { signature } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return waitForLanding(key, intent.id);
}

beforeAll(async () => {
  project = await newProject("token-bound accounts");
  key = project.keys.test.secret;
  minter = await fundedWallet(CHAIN);
  const hash = await minter.deployContract({ abi: testNftAbi, bytecode: testNftBytecode, args: ["Heroes", "HERO"] });
  nft = (await client().waitForTransactionReceipt({ hash })).contractAddress!;
  nftContract = (await call("POST", "/v1/contracts", { key, json: { name: "Heroes", chainId: CHAIN, address: nft, abi: testNftAbi } })).body;
  policy = (await call("POST", "/v1/policies", { key, json: { name: "mints", chainId: CHAIN, strategy: { sponsorSchema: "pay_for_user" } } })).body;
  const rule = await call("POST", "/v1/policy_rules", { key, json: { policy: policy.id, type: "contract_functions", contract: nftContract.id, functionName: "mint" } });
  expect(rule.status, JSON.stringify(rule.body)).toBe(200);
});

describe("ERC6551V1 accounts", () => {
  it("are controlled by the token's holder: its signature lands intents, and moving the token moves control", async () => {
    const [a, b] = [randomKey(), randomKey()];
    const tokenId = await mintTo(a.address);
    const created = await call("POST", "/v1/accounts", { key, json: { chainId: CHAIN, accountType: "ERC6551V1", tokenContract: nft.toLowerCase(), tokenId: Number(tokenId) } });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const account = created.body;
    const { tokenBoundRegistry, tokenBoundAccountImplementation } = serviceDeployment();
    const predicted = await client().readContract({
      address: tokenBoundRegistry,
      abi: erc6551RegistryAbi,
      functionName: "account",
      args: [tokenBoundAccountImplementation, accountSalt(account.player.id), BigInt(CHAIN), nft, tokenId],
    });
    expect(account).toMatchObject({
      object: "account",
      accountType: "ERC6551_v06",
      address: predicted,
      ownerAddress: a.address,
      custodial: false,
      deployed: false,
      tokenContract: getAddress(nft),
      tokenId: String(tokenId),
    });
    expect((await call("GET", `/v1/accounts/${account.id}`, { key })).body).toMatchObject({ tokenContract: getAddress(nft), tokenId: String(tokenId) });

    // The first intent waits for the holder and deploys the account through the registry.
    const receiver = randomKey().address;
    const first = await mintIntent(account.id, receiver);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body.nextAction).toMatchObject({ type: "sign_with_wallet" });
    expect(first.body.userOperation.initCode.slice(0, 42).toLowerCase()).toBe(tokenBoundRegistry.toLowerCase());
    // The signing page says what the holder signs: the registry deploying the account for the token, then the call.
    const page = await openSigningLink(await getDb(), new URL(first.body.nextAction.payload.signingUrl).searchParams.get("t")!, first.body.id);
    if (page.state !== "awaiting") throw new Error(JSON.stringify(page));
    expect(page.view.ownerAddress).toBe(a.address);
    expect(page.view.calls.map((c) => [c.kind, c.summary])).toEqual([
      ["deployment", `Deploys your token-bound account (${account.address}), controlled by whoever holds token ${tokenId} of Heroes (${getAddress(nft)})`],
      ["contract", "Calls mint on Heroes"],
    ]);
    expect(page.view.calls[0]).toMatchObject({ to: tokenBoundRegistry, functionName: "createAccount", attention: false });
    // Someone else's signature is refused before anything is sent.
    const stranger = await randomKey().signMessage({ message: { raw: first.body.nextAction.payload.userOperationHash } });
    expectError(await call("POST", `/v1/transaction_intents/${first.body.id}/signature`, { key, json: { signature: stranger } }), 400);
    expect((await signAndLand(first.body, a)).response.status).toBe(1);
    expect(await client().getCode({ address: account.address })).toMatch(/^0x363d3d373d3d3d363d73/);
    const firstMinted = BigInt(first.body.interactions[0].functionArgs[1]);
    expect(await holderOf(firstMinted)).toBe(receiver);

    // After deployment too, a signature by anyone but the holder is a 400.
    const later = await mintIntent(account.id, receiver);
    const byStranger = await randomKey().signMessage({ message: { raw: later.body.nextAction.payload.userOperationHash } });
    expectError(await call("POST", `/v1/transaction_intents/${later.body.id}/signature`, { key, json: { signature: byStranger } }), 400);
    expect((await signAndLand(later.body, a)).response.status).toBe(1);

    // A gives the token to B: A can no longer sign, B can.
    await transferToken(a, b.address, tokenId);
    const second = await mintIntent(account.id, receiver);
    expect(second.body.nextAction).toMatchObject({ type: "sign_with_wallet" });
    const byOld = await a.signMessage({ message: { raw: second.body.nextAction.payload.userOperationHash } });
    const refused = expectError(await call("POST", `/v1/transaction_intents/${second.body.id}/signature`, { key, json: { signature: byOld } }), 400);
    expect(refused.message).toContain(b.address);
    expect((await signAndLand(second.body, b)).response.status).toBe(1);

    const synced = await call("POST", `/v1/accounts/${account.id}/sync`, { key });
    expect(synced.body).toMatchObject({ ownerAddress: b.address, deployed: true, custodial: false });
    // Not custodial: the holder signs its payloads.
    expect(expectError(await call("POST", `/v1/accounts/${account.id}/sign_payload`, { key, json: TYPED }), 400).message).toContain(b.address);
  }, 90_000);

  it("is custodial while the player's key holds the token (form body, con_ id): the service signs intents and payloads", async () => {
    const { body: player } = await call("POST", "/v1/players", { key, json: { name: "holder" } });
    const ownerKey = await ownerKeyFor(await getDb(), { projectId: project.id, livemode: false }, player.id);
    const playerKey = ownerSigner(ownerKey);
    const tokenId = await mintTo(playerKey.address);
    const created = await call("POST", "/v1/accounts", {
      key,
      form: { chainId: String(CHAIN), player: player.id, accountType: "ERC6551V1", tokenContract: nftContract.id, tokenId: String(tokenId) },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const account = created.body;
    expect(account).toMatchObject({ accountType: "ERC6551_v06", ownerAddress: playerKey.address, custodial: true, tokenContract: getAddress(nft), tokenId: String(tokenId) });

    // Before deployment the payload signature is ERC-6492-wrapped with the registry call; verifiers accept it.
    const payload = TYPED;
    const signed = await call("POST", `/v1/accounts/${account.id}/sign_payload`, { key, json: payload });
    expect(signed.status, JSON.stringify(signed.body)).toBe(200);
    expect(await client().verifyTypedData({ address: account.address, ...viemTypedData(payload), signature: signed.body.signature })).toBe(true);

    // Custodial, so the service may deploy it on its own (a sponsored self-call).
    const deploy = await call("POST", `/v1/accounts/${account.id}/deploy`, { key, json: { policy: (await selfPolicy()).id } });
    expect(deploy.status, JSON.stringify(deploy.body)).toBe(200);
    expect(deploy.body.deployed).toBe(true);
    const intent = await mintIntent(account.id, randomKey().address);
    expect(intent.status, JSON.stringify(intent.body)).toBe(200);
    expect(intent.body.nextAction).toBeUndefined();
    expect(intent.body.userOperation.initCode).toBe("0x");
    expect((await waitForLanding(key, intent.body.id)).response.status).toBe(1);
    const deployedSig = (await call("POST", `/v1/accounts/${account.id}/sign_payload`, { key, json: payload })).body.signature as Hex;
    const hash = hashTypedData(viemTypedData(payload));
    expect(await client().readContract({ address: account.address, abi: tokenBoundAccountAbi, functionName: "isValidSignature", args: [hash, deployedSig] })).toBe("0x1626ba7e");

    // The player's key gives the token away: the service no longer signs, the new holder does.
    const c = randomKey();
    await transferToken(playerKey, c.address, tokenId);
    const next = await mintIntent(account.id, randomKey().address);
    expect(next.body.nextAction).toMatchObject({ type: "sign_with_wallet" });
    expect(expectError(await call("POST", `/v1/accounts/${account.id}/sign_payload`, { key, json: payload }), 400).message).toContain(c.address);
    expect((await signAndLand(next.body, c)).response.status).toBe(1);
    expect((await call("POST", `/v1/accounts/${account.id}/sync`, { key, form: {} })).body).toMatchObject({ ownerAddress: c.address, custodial: false });
  }, 90_000);

  it("refuse session keys, ownership transfer and recovery: the token decides who controls them", async () => {
    const holder = randomKey();
    const tokenId = await mintTo(holder.address);
    const { body: account } = await call("POST", "/v1/accounts", { key, json: { chainId: CHAIN, accountType: "ERC6551V1", tokenContract: nft, tokenId: tokenId.toString() } });
    const self = await selfPolicy();
    // Not custodial: the service cannot deploy it on its own.
    expect(expectError(await call("POST", `/v1/accounts/${account.id}/deploy`, { key, json: { policy: self.id } }), 400).message).toMatch(/not custodial/);
    const newOwnerAddress = randomKey().address;
    for (const action of ["request_transfer_ownership", "start_recovery"]) {
      const error = expectError(await call("POST", `/v1/accounts/${account.id}/${action}`, { key, json: { newOwnerAddress, policy: self.id } }), 400);
      expect(error.message).toMatch(/holds its token/);
    }
    expectError(await call("POST", `/v1/accounts/${account.id}/cancel_transfer_ownership`, { key, json: { policy: self.id } }), 400);
    expectError(await call("POST", `/v1/players/${account.player.id}/request_transfer_ownership`, { key, json: { chainId: CHAIN, newOwnerAddress, policy: self.id } }), 400);
    const now = Math.floor(Date.now() / 1000);
    const session = expectError(
      await call("POST", "/v1/sessions", { key, form: { address: randomKey().address, chainId: String(CHAIN), player: account.player.id, validAfter: String(now), validUntil: String(now + 3600), policy: self.id } }),
      400,
    );
    expect(session.message).toMatch(/no session keys/);
  });

  it("work with the CLI's development TestNFT (npm run cli -- dev mint-nft)", async () => {
    const holder = randomKey();
    const minted = await mintTestNft(chainOf(CHAIN), holder.address);
    expect(minted).toMatchObject({ chainId: CHAIN, tokenContract: TEST_NFT_ADDRESS, holder: holder.address });
    // Deployed once, at the same address; the next mint takes the next free id; a taken id is refused.
    const again = await mintTestNft(chainOf(CHAIN), holder.address);
    expect(again.tokenContract).toBe(TEST_NFT_ADDRESS);
    expect(BigInt(again.tokenId)).toBe(BigInt(minted.tokenId) + 1n);
    await expect(mintTestNft(chainOf(CHAIN), holder.address, BigInt(minted.tokenId))).rejects.toThrow(/exists already/);
    const res = await call("POST", "/v1/accounts", { key, form: { chainId: String(CHAIN), accountType: "ERC6551V1", tokenContract: minted.tokenContract, tokenId: minted.tokenId } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ ownerAddress: holder.address, tokenContract: TEST_NFT_ADDRESS, tokenId: minted.tokenId });
  });

  it("are created by the official SDK unchanged", async () => {
    const server = await routeServer();
    try {
      const openfort = new Openfort(key, server.url);
      const holder = randomKey();
      const tokenId = await mintTo(holder.address);
      const account = await openfort.accounts.create({ chainId: CHAIN, accountType: "ERC6551V1", tokenContract: nft, tokenId: Number(tokenId) });
      expect(account).toMatchObject({ accountType: "ERC6551_v06", ownerAddress: holder.address, custodial: false });
      // The SDK's model keeps only the fields it knows (tokenContract/tokenId are ours): the API's answer has them.
      expect((await call("GET", `/v1/accounts/${account.id}`, { key })).body).toMatchObject({ tokenContract: getAddress(nft), tokenId: String(tokenId) });
    } finally {
      await server.close();
    }
  });

  it("takes token ids up to uint256 as decimal strings", async () => {
    const holder = randomKey();
    const big = 2n ** 200n + 7n;
    await mintTo(holder.address, big);
    const res = await call("POST", "/v1/accounts", { key, json: { chainId: CHAIN, accountType: "ERC6551V1", tokenContract: nft, tokenId: big.toString() } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ tokenId: big.toString(), ownerAddress: holder.address });
    expect(await client().readContract({ address: serviceDeployment().tokenBoundRegistry, abi: erc6551RegistryAbi, functionName: "account", args: [serviceDeployment().tokenBoundAccountImplementation, accountSalt(res.body.player.id), BigInt(CHAIN), nft, big] })).toBe(res.body.address);
  });

  it("refuses a bad token with a 400 naming the parameter", async () => {
    const holder = randomKey();
    const tokenId = await mintTo(holder.address);
    const create = (body: Record<string, unknown>) => call("POST", "/v1/accounts", { key, json: { chainId: CHAIN, accountType: "ERC6551V1", ...body } });
    const detail = async (body: Record<string, unknown>, param: string, message?: RegExp) => {
      const error = expectError(await create(body), 400, "invalid_request_error");
      expect(error.details?.[param], JSON.stringify(error)).toBeDefined();
      if (message) expect(error.message).toMatch(message);
      return error;
    };
    await detail({ tokenId: 1 }, "tokenContract", /tokenContract is required/);
    await detail({ tokenContract: nft }, "tokenId", /tokenId is required/);
    const both = await detail({}, "tokenContract");
    expect(both.details?.tokenId).toBeDefined();
    await detail({ tokenContract: holder.address, tokenId: 1 }, "tokenContract", /no code/);
    // A contract that is not an ERC-721: the EntryPoint (no supportsInterface) and the registry.
    await detail({ tokenContract: serviceDeployment().entryPoint, tokenId: 1 }, "tokenContract", /not an ERC-721/);
    await detail({ tokenContract: serviceDeployment().tokenBoundRegistry, tokenId: 1 }, "tokenContract", /not an ERC-721/);
    await detail({ tokenContract: "0x1234", tokenId: 1 }, "tokenContract");
    await detail({ tokenContract: "con_doesnotexist", tokenId: 1 }, "tokenContract");
    await detail({ tokenContract: nft, tokenId: 999_999_999 }, "tokenId", /does not exist/);
    await detail({ tokenContract: nft, tokenId: -1 }, "tokenId");
    await detail({ tokenContract: nft, tokenId: 1.5 }, "tokenId");
    await detail({ tokenContract: nft, tokenId: "abc" }, "tokenId");
    await detail({ tokenContract: nft, tokenId: (maxUint256 + 1n).toString() }, "tokenId", /uint256/);
    await detail({ tokenContract: nft, tokenId: Number(tokenId), externalOwnerAddress: holder.address }, "externalOwnerAddress", /holds the token/);
    await detail({ tokenContract: nft, tokenId: Number(tokenId), defaultGuardian: true }, "defaultGuardian");
    // The token fields belong to this type only.
    const other = expectError(await call("POST", "/v1/accounts", { key, json: { chainId: CHAIN, tokenContract: nft, tokenId: 1 } }), 400);
    expect(other.details?.tokenContract).toBeDefined();
    // Form bodies get the same answers.
    const form = expectError(await call("POST", "/v1/accounts", { key, form: { chainId: String(CHAIN), accountType: "ERC6551V1", tokenContract: nft, tokenId: "999999999" } }), 400);
    expect(form.details?.tokenId).toBeDefined();
  });
});

/** EIP-712 data the tests have the service sign for an account. */
const TYPED = {
  domain: { name: "Game", version: "1", chainId: CHAIN },
  types: { Score: [{ name: "points", type: "uint256" }] },
  primaryType: "Score",
  value: { points: "42" },
} as const;

/** The same typed data as viem takes it (the API's `value` is viem's `message`). */
const viemTypedData = (payload: typeof TYPED) => ({
  domain: payload.domain,
  types: payload.types,
  primaryType: payload.primaryType,
  message: { points: BigInt(payload.value.points) },
});
