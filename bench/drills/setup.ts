// What every drill starts from: a real anvil chain kept in a state file (so it can be restarted with its history),
// a production server (`next start`) on a fresh PostgreSQL database, a project made with the CLI, a sponsoring
// policy, players with custodial accounts, and subscriptions whose triggers point at a real HTTP receiver that
// checks each delivery's Standard Webhooks signature.
import crypto from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import postgres from "postgres";
import { Webhook } from "standardwebhooks";
import type { Hex } from "viem";
import { entryPointAbi } from "@/contracts/artifacts";
import { startAnvil, type AnvilNode } from "@/lib/chain/anvil";
import { publicClient } from "@/lib/chain/clients";
import { serviceDeployment } from "@/lib/chain/contracts";
import { prepareChain } from "@/lib/prepare-chains";
import { findChain, type ChainConfig } from "@/lib/chain/registry";
import { runCli, startServer, type RunningServer } from "../../test/helpers/server";
import { pool, sponsorshipCreditEnv } from "../lib";
import { DrillClient } from "./client";

export const CHAIN_ID = 31337;

/** The one call every intent makes: EntryPoint.depositTo(<its own account>) with no value, as the bench does. */
const DEPOSIT_ABI = entryPointAbi.filter((item) => item.type === "function" && item.name === "depositTo");

export interface DrillChain {
  chain: ChainConfig;
  pid: () => number;
  /** Stops anvil (SIGTERM: it writes its state file) and, `downMs` later, starts it again on the same port from that file. */
  restart(downMs?: number): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Chain 31337 on a free port, its state in `dir` as `npm start` keeps it in .data/ (lib/chain/anvil.ts), our
 * contracts deployed. One chain only: the drills need no second one, and it saves CPU on two cores. The server started
 * afterwards uses it (LOCAL_CHAINS, CHAIN_31337_RPC_URL) and shares the drill's master key, so both see the same
 * paymaster and service keys.
 */
export async function startDrillChain(dir: string): Promise<DrillChain> {
  process.env.KEY_ENCRYPTION_KEY ??= crypto.randomBytes(32).toString("hex");
  const stateFile = path.join(dir, `anvil-${CHAIN_ID}.json`);
  let node: AnvilNode = await startAnvil({ chainId: CHAIN_ID, port: 0, stateFile });
  const port = Number(new URL(node.rpcUrl).port);
  process.env.LOCAL_CHAINS = String(CHAIN_ID);
  process.env[`CHAIN_${CHAIN_ID}_RPC_URL`] = node.rpcUrl;
  const chain = findChain(CHAIN_ID)!;
  await prepareChain(chain);
  return {
    chain,
    pid: () => node.pid,
    async restart(downMs = 0) {
      await node.stop();
      await new Promise((resolve) => setTimeout(resolve, downMs));
      node = await startAnvil({ chainId: CHAIN_ID, port, stateFile });
    },
    stop: () => node.stop(),
  };
}

export const blockNumber = (chain: ChainConfig) => publicClient(chain).getBlockNumber({ cacheTime: 0 });

export const tempDir = (name: string) => fs.mkdtempSync(path.join(os.tmpdir(), `drill-${name}-`));

/** Short-lived queries on the server's own database (connections of the drill, not the server's). */
export async function query<T>(server: RunningServer, text: string, params: unknown[] = []): Promise<T[]> {
  const sql = postgres(server.env.DATABASE_URL!, { max: 1, onnotice: () => {} });
  try {
    return [...(await sql.unsafe(text, params as never[]))] as T[];
  } finally {
    await sql.end();
  }
}

export interface Player {
  id: string;
  account: string;
  address: Hex;
}

export interface Fixture {
  api: DrillClient;
  projectId: string;
  /** The project's test-mode publishable key (what a game ships to players). */
  publishable: string;
  contract: string;
  policy: string;
  players: Player[];
}

/** A project of its own (CLI), the EntryPoint registered, a pay_for_user policy for depositTo, `count` players with accounts. */
export async function setupProject(server: RunningServer, chain: ChainConfig, name: string, count: number): Promise<Fixture> {
  const created = JSON.parse(runCli(server, ["project", "create", "--name", name, "--json"]));
  const api = new DrillClient(server.url, created.keys.test.secret as string);
  const contract = await api.call<{ id: string }>("POST", "/v1/contracts", { name: "EntryPoint", chainId: chain.chainId, address: serviceDeployment().entryPoint, abi: DEPOSIT_ABI });
  const policy = await api.call<{ id: string }>("POST", "/v1/policies", { name, chainId: chain.chainId, strategy: { sponsorSchema: "pay_for_user" } });
  await api.call("POST", "/v1/policy_rules", { policy: policy.id, type: "contract_functions", contract: contract.id, functionName: "depositTo" });
  const players: Player[] = [];
  await pool(8, count, async (i) => {
    const player = await api.call<{ id: string }>("POST", "/v1/players", { name: `${name} ${i}` });
    const account = await api.call<{ id: string; address: Hex }>("POST", "/v1/accounts", { chainId: chain.chainId, player: player.id });
    players[i] = { id: player.id, account: account.id, address: account.address };
  });
  return { api, projectId: created.id as string, publishable: created.keys.test.publishable as string, contract: contract.id, policy: policy.id, players };
}

/** The body of a sponsored intent of `player` (idempotent POSTs need the very same body on every try). */
export const intentBody = (fixture: Fixture, player: Player, confirmationBlocks = 2) => ({
  chainId: CHAIN_ID,
  player: player.id,
  policy: fixture.policy,
  confirmationBlocks,
  interactions: [{ contract: fixture.contract, functionName: "depositTo", functionArgs: [player.account] }],
});

/** One delivery as the receiver got it. */
export interface Delivery {
  webhookId: string;
  topic: string;
  /** The intent the event is about (data.id). */
  objectId: string;
  at: number;
}

export interface Receiver {
  url: string;
  got: Delivery[];
  /** Requests whose signature did not verify with their trigger's secret (never expected). */
  forged: number;
  /** Stops listening (connection refused) and cuts open connections: a receiver that is down. */
  down(): Promise<void>;
  /** Listens again on the same port. */
  up(): Promise<void>;
  close(): Promise<void>;
}

/**
 * An HTTP receiver on a free port answering 200 to every POST under /<topic> whose Standard Webhooks signature checks
 * out with that topic's trigger secret (given once the subscriptions exist, `secrets`).
 */
export async function startReceiver(secrets: Map<string, string>): Promise<Receiver> {
  const receiver: Receiver = { url: "", got: [], forged: 0, down, up, close: down };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const topic = (req.url ?? "").slice(1);
      const secret = secrets.get(topic);
      try {
        if (!secret) throw new Error(`no trigger for ${topic}`);
        new Webhook(secret).verify(body, req.headers as Record<string, string>);
      } catch {
        receiver.forged++;
        res.writeHead(400).end("bad signature");
        return;
      }
      const event = JSON.parse(body) as { type: string; data: { id: string } };
      receiver.got.push({ webhookId: String(req.headers["webhook-id"]), topic: event.type, objectId: event.data.id, at: Date.now() });
      res.writeHead(200).end("ok");
    });
  });
  let port = 0;
  async function up() {
    await new Promise<void>((resolve, reject) => server.once("error", reject).listen(port, "127.0.0.1", () => resolve()));
    port = (server.address() as AddressInfo).port;
  }
  async function down() {
    if (!server.listening) return;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    await closed;
  }
  await up();
  receiver.url = `http://127.0.0.1:${port}`;
  return receiver;
}

/** One subscription per topic, its one trigger at <receiver>/<topic>; the trigger secrets go where the receiver reads them. */
export async function subscribe(fixture: Fixture, receiverUrl: string, topics: string[], secrets: Map<string, string>) {
  for (const topic of topics) {
    const subscription = await fixture.api.call<{ triggers: { secret: string }[] }>("POST", "/v1/subscriptions", {
      topic,
      triggers: [{ target: `${receiverUrl}/${topic}`, type: "webhook" }],
    });
    secrets.set(topic, subscription.triggers[0]!.secret);
  }
}

/**
 * Server, with its output kept in a file whatever happens. `finish(passed)` stops it and drops its database; after a
 * failed drill it only kills it and keeps the database, the evidence (function_runs, outbound_events, intents).
 */
export async function startDrillServer(name: string, env: Record<string, string>) {
  const server = await startServer({ ...sponsorshipCreditEnv(), ...env });
  const file = path.join(os.tmpdir(), `drill-${name}-${Date.now()}.log`);
  return {
    server,
    saveLog: () => {
      fs.writeFileSync(file, server.output());
      return file;
    },
    async finish(passed: boolean) {
      if (passed) return server.stop();
      await server.kill();
      const url = new URL(server.env.DATABASE_URL!);
      console.log(`  database kept for inspection: ${url.pathname.slice(1)} on ${url.host} (drop database "${url.pathname.slice(1)}" when done)`);
    },
  };
}
