// The chain drill's load: every kind of sponsored operation at once, each a loop of its own until stopped.
//   custodial   intents of custodial v0.6 accounts (the service signs and relays)
//   custodialV8 intents of custodial Upgradeable_v08 accounts (EntryPoint v0.8, our v0.8 paymaster)
//   owner       intents of owner-held accounts that the owner signs and lands itself (EntryPoint.handleOps from a
//               wallet of its own), never through the service
//   rpc         ERC-7677 (pm_getPaymasterData at /rpc/{chainId}?apiKey=pk_…), then eth_sendUserOperation there
//   outside     ERC-7677 the same way, landed by an outside handleOps; one in three asks twice for the same nonce
//               (a cheaper second signature) and lands the first
import { encodeFunctionData, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { entryPointAbi, smartAccountAbi } from "@/contracts/artifacts";
import { accountFactoryCall, accountSalt } from "@/lib/chain/accounts";
import { publicClient, walletClient } from "@/lib/chain/clients";
import { serviceDeployment } from "@/lib/chain/contracts";
import { userOperationEvent } from "@/lib/chain/paid-ops";
import type { ChainConfig } from "@/lib/chain/registry";
import { estimateUserOperation, signUserOperation, toEntryPointOp, userOperationHash, type UserOp } from "@/lib/chain/userop";
import { deserializeUserOp, serializeUserOp } from "@/lib/intent-records/userop-json";
import { sleep } from "../lib";
import type { Fixture } from "./setup";

export type LoadKind = "custodial" | "custodialV8" | "owner" | "rpc" | "outside";

export interface Load {
  /** Intents the API answered, with their kind. */
  intents: Map<string, LoadKind>;
  /** ERC-7677 ops signed (by hash), whether sent (to /rpc or by handleOps), and the re-asked second signatures never sent. */
  signed: Map<Hex, LoadKind>;
  reasked: number;
  /** Refusals by kind and reason (402 declines during a fee spike, -32602 under the fee floor, …). */
  refusals: Map<string, number>;
  /** The senders whose every op is an intent's (the ledger check's), and the ERC-7677 senders. */
  intentSenders: Hex[];
  erc7677Senders: Hex[];
  stop(): Promise<void>;
}

interface LoadContext {
  server: string;
  publishable: string;
  chain: ChainConfig;
  fixture: Fixture;
  /** A policy sponsoring any call (ERC-7677 ops call the owner's own address). */
  openPolicy: string;
}

const d = () => serviceDeployment();
const depositTo = (fixture: Fixture, accountId: string) => ({ contract: fixture.contract, functionName: "depositTo", functionArgs: [accountId] });

/** A JSON-RPC call to the service's bundler and paymaster endpoint for the chain, with the publishable key. */
async function rpc(ctx: LoadContext, method: string, params: unknown[]): Promise<{ result?: unknown; error?: { code: number; message: string } }> {
  for (let attempt = 0; ; attempt++) {
    try {
      const res = await fetch(`${ctx.server}/rpc/${ctx.chain.chainId}?apiKey=${ctx.publishable}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
      });
      const body = (await res.json()) as { result?: unknown; error?: { code: number; message: string } };
      // The chain did not answer (an injected fault): the client asks again, as a wallet would.
      if (body.error?.code === -32002 && attempt < 5) {
        await sleep(300);
        continue;
      }
      return body;
    } catch (err) {
      if (attempt >= 5) return { error: { code: -1, message: (err as Error).message } };
      await sleep(300);
    }
  }
}

/** A wallet of nobody's (funded on the node directly) that lands ops by EntryPoint.handleOps. */
async function outsideWallet(chain: ChainConfig) {
  const account = privateKeyToAccount(generatePrivateKey());
  await publicClient(chain).request({ method: "anvil_setBalance" as never, params: [account.address, "0x56bc75e2d63100000"] as never });
  return walletClient(chain, account);
}

/** Sends handleOps with one op and waits for it to be mined (a gas limit of its own: no simulation on a node that may reorg under it). */
async function handleOps(chain: ChainConfig, wallet: Awaited<ReturnType<typeof outsideWallet>>, op: UserOp): Promise<boolean> {
  try {
    const hash = await wallet.writeContract({ address: d().entryPoint, abi: entryPointAbi, functionName: "handleOps", args: [[toEntryPointOp(op)], wallet.account.address], gas: 3_000_000n, chain: null });
    const receipt = await publicClient(chain).waitForTransactionReceipt({ hash, timeout: 20_000, pollingInterval: 250 });
    return receipt.status === "success";
  } catch {
    return false; // dropped, reorged, reverted: the drill's verdict reads the chain, not this
  }
}

/** Until the op's UserOperationEvent is on chain (or 20 s): the next op of the same account may then run after it. */
async function landed(chain: ChainConfig, hash: Hex): Promise<boolean> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    const logs = await publicClient(chain)
      .getLogs({ address: d().entryPoint, event: userOperationEvent, args: { userOpHash: hash }, fromBlock: 0n })
      .catch(() => []);
    if (logs.length) return true;
    await sleep(500);
  }
  return false;
}

/** An owner-held account of the project (POST /v1/accounts with externalOwnerAddress): its owner key, id, address and first op's initCode. */
async function ownerAccount(ctx: LoadContext) {
  const owner = privateKeyToAccount(generatePrivateKey());
  const created = await ctx.fixture.api.call<{ id: string; address: Hex; player: { id: string } }>("POST", "/v1/accounts", { chainId: ctx.chain.chainId, externalOwnerAddress: owner.address });
  return { owner, id: created.id, address: created.address, initCode: accountFactoryCall(owner.address, accountSalt(created.player.id)).initCode };
}

/** An ERC-7677 op of `account` (built by this client, as viem would), sponsored by pm_getPaymasterData; null when refused. */
async function sponsored(ctx: LoadContext, load: Load, kind: LoadKind, account: { owner: PrivateKeyAccount; address: Hex; initCode: Hex }, deployed: boolean): Promise<{ op: UserOp; ask: (o: UserOp) => Promise<UserOp | null> } | null> {
  const callData = encodeFunctionData({ abi: smartAccountAbi, functionName: "execute", args: [account.owner.address, 0n, "0x"] });
  let built: UserOp;
  try {
    ({ op: built } = await estimateUserOperation(ctx.chain, {
      sender: account.address,
      initCode: deployed ? "0x" : account.initCode,
      callData,
      sponsored: true,
      nonceKey: deployed ? BigInt(Math.floor(Math.random() * 2 ** 48)) : 0n,
    }));
  } catch {
    return null;
  }
  const ask = async (o: UserOp): Promise<UserOp | null> => {
    const answer = await rpc(ctx, "pm_getPaymasterData", [serializeUserOp({ ...o, paymasterAndData: "0x", signature: "0x" }), d().entryPoint, `0x${ctx.chain.chainId.toString(16)}`, { policy: ctx.openPolicy }]);
    if (!answer.result) {
      const why = `${kind}: ${answer.error?.code ?? "?"} ${(answer.error?.message ?? "").replace(/0x[0-9a-f]+|\d{4,}/gi, "…").slice(0, 90)}`;
      load.refusals.set(why, (load.refusals.get(why) ?? 0) + 1);
      return null;
    }
    const signed = await signUserOperation(ctx.chain, { ...o, paymasterAndData: (answer.result as { paymasterAndData: Hex }).paymasterAndData }, account.owner);
    load.signed.set(userOperationHash(ctx.chain, signed).toLowerCase() as Hex, kind);
    return signed;
  };
  return { op: built, ask };
}

/** Starts every kind of load, `perKind` loops of each. */
export async function startLoad(ctx: LoadContext, perKind: number): Promise<Load> {
  const load: Load = { intents: new Map(), signed: new Map(), reasked: 0, refusals: new Map(), intentSenders: [], erc7677Senders: [], stop: async () => {} };
  let stopping = false;
  const refuse = (kind: LoadKind, why: string) => load.refusals.set(`${kind}: ${why}`, (load.refusals.get(`${kind}: ${why}`) ?? 0) + 1);
  const pause = () => sleep(500 + Math.random() * 1_500);
  const { fixture, chain } = ctx;
  load.intentSenders.push(...fixture.players.map((p) => p.address));

  // Custodial v0.8 players.
  const v08: { id: string; account: string; address: Hex }[] = [];
  for (let i = 0; i < perKind; i++) {
    const player = await fixture.api.call<{ id: string }>("POST", "/v1/players", { name: `v0.8 ${i}` });
    const account = await fixture.api.call<{ id: string; address: Hex }>("POST", "/v1/accounts", { chainId: chain.chainId, player: player.id, accountType: "UpgradeableV8" });
    v08.push({ id: player.id, account: account.id, address: account.address });
  }
  load.intentSenders.push(...v08.map((p) => p.address));

  const intent = async (kind: LoadKind, body: Record<string, unknown>) => {
    const answer = await fixture.api.postIdempotent<{ id: string; userOperationHash: Hex; nextAction?: { payload: { userOperation: Record<string, string> } } }>("/v1/transaction_intents", body);
    if (answer) load.intents.set(answer.id, kind);
    else refuse(kind, "refused by the API (see the drill client's refusals)");
    return answer;
  };

  const loops: Promise<void>[] = [];
  for (let i = 0; i < perKind; i++) {
    loops.push(
      (async () => {
        for (let n = i; !stopping; n++) {
          const player = fixture.players[n % fixture.players.length]!;
          await intent("custodial", { chainId: chain.chainId, player: player.id, policy: fixture.policy, confirmationBlocks: 2, interactions: [depositTo(fixture, player.account)] });
          await pause();
        }
      })(),
      (async () => {
        const player = v08[i]!;
        while (!stopping) {
          await intent("custodialV8", { chainId: chain.chainId, account: player.account, policy: fixture.policy, confirmationBlocks: 2, interactions: [depositTo(fixture, player.account)] });
          await pause();
        }
      })(),
      (async () => {
        const account = await ownerAccount(ctx);
        load.intentSenders.push(account.address);
        const wallet = await outsideWallet(chain);
        while (!stopping) {
          const created = await intent("owner", { chainId: chain.chainId, account: account.id, policy: fixture.policy, confirmationBlocks: 2, interactions: [depositTo(fixture, account.id)] });
          if (created?.nextAction) {
            const op = deserializeUserOp(created.nextAction.payload.userOperation);
            await handleOps(chain, wallet, { ...op, signature: await account.owner.signMessage({ message: { raw: created.userOperationHash } }) });
          }
          await pause();
        }
      })(),
      (async () => {
        const account = await ownerAccount(ctx);
        load.erc7677Senders.push(account.address);
        let deployed = false;
        while (!stopping) {
          const made = await sponsored(ctx, load, "rpc", account, deployed);
          const signed = made && (await made.ask(made.op));
          if (signed) {
            const sent = await rpc(ctx, "eth_sendUserOperation", [serializeUserOp(signed), d().entryPoint]);
            if (sent.result) deployed = (await landed(chain, sent.result as Hex)) || deployed;
            else refuse("rpc", `eth_sendUserOperation ${sent.error?.code}`);
          }
          await pause();
        }
      })(),
      (async () => {
        const account = await ownerAccount(ctx);
        load.erc7677Senders.push(account.address);
        const wallet = await outsideWallet(chain);
        let deployed = false;
        for (let n = 0; !stopping; n++) {
          const made = await sponsored(ctx, load, "outside", account, deployed);
          const first = made && (await made.ask(made.op));
          if (first) {
            // One in three: a second, cheaper signature for the same sender and nonce, never sent.
            if (n % 3 === 2 && (await made.ask({ ...made.op, maxPriorityFeePerGas: made.op.maxPriorityFeePerGas > 1n ? made.op.maxPriorityFeePerGas - 1n : 1n }))) load.reasked++;
            deployed = (await handleOps(chain, wallet, first)) || deployed;
          }
          await pause();
        }
      })(),
    );
  }
  load.stop = async () => {
    stopping = true;
    await Promise.all(loops);
  };
  return load;
}
