import { eq, inArray, sql } from "drizzle-orm";
import { concat, decodeFunctionData, erc20Abi, isAddressEqual, type Address, type Hex } from "viem";
import { publicClient } from "@/lib/chain/clients";
import { serviceDeployment } from "@/lib/chain/contracts";
import { findChain, type ChainConfig } from "@/lib/chain/registry";
import { isEip7702Factory } from "@/lib/chain/userop";
import { isStoredV08 } from "@/lib/intent-records/versioned-op";
import { registeredContractsAt } from "@/lib/contracts/service";
import type { Queryable } from "@/lib/db/client";
import { contracts, developerAccounts } from "@/lib/db/schema";
import { inScope } from "@/lib/db/scope";
import type { IntentRow } from "@/lib/intents/service";
import { serviceAccount } from "@/lib/keys/service-keys";
import type { PolicyRow } from "@/lib/policies/service";
import type { ProjectContext } from "@/lib/tenant";
import { accountCalls, describeOperation, type DecodedCall, type KnownContract, type RawCall, type TokenInfo } from "@/lib/intents/operation-calls";

const lower = (list: Iterable<string>) => [...new Set([...list].map((a) => a.toLowerCase()))];

/** The addresses an ERC-20 call names (recipient, spender, from), and whether it is one. */
function erc20Parties(call: RawCall): Address[] | null {
  try {
    const decoded = decodeFunctionData({ abi: erc20Abi, data: call.data });
    if (decoded.functionName === "transfer" || decoded.functionName === "approve") return [decoded.args[0]];
    if (decoded.functionName === "transferFrom") return [decoded.args[0], decoded.args[1]];
  } catch {
    // not an ERC-20 call
  }
  return null;
}

/** The project's registrations at the addresses, as the decoder knows contracts. */
async function registeredAt(db: Queryable, ctx: ProjectContext, chainId: number, addresses: string[]): Promise<Map<string, KnownContract[]>> {
  const rows = await registeredContractsAt(db, ctx, chainId, addresses);
  return new Map([...rows].map(([address, list]) => [address, list.map((row) => ({ id: row.id, name: row.name ?? row.id, abi: row.abi }))]));
}

/** Which of `addresses` are the project's developer accounts (the token collector among them), deleted ones included. */
async function projectAccountsAmong(db: Queryable, ctx: ProjectContext, addresses: string[]): Promise<Set<string>> {
  if (addresses.length === 0) return new Set();
  const rows = await db
    .select({ address: developerAccounts.address })
    .from(developerAccounts)
    .where(inScope(developerAccounts, ctx, inArray(sql<string>`lower(${developerAccounts.address})`, addresses)));
  return new Set(rows.map((r) => r.address.toLowerCase()));
}

/** Symbol and decimals of each token, as its contract answers; a token that does not answer is shown in base units. */
async function tokenInfo(chain: ChainConfig | undefined, tokens: string[]): Promise<Map<string, TokenInfo>> {
  const by = new Map<string, TokenInfo>();
  if (!chain) return by;
  const client = publicClient(chain);
  await Promise.all(
    tokens.map(async (token) => {
      try {
        const address = token as Address;
        const [symbol, decimals] = await Promise.all([
          client.readContract({ address, abi: erc20Abi, functionName: "symbol" }),
          client.readContract({ address, abi: erc20Abi, functionName: "decimals" }),
        ]);
        by.set(token, { symbol, decimals });
      } catch {
        // not an ERC-20 that answers, or the node is down: amounts stay in base units
      }
    }),
  );
  return by;
}

/** The token and amount the intent's policy charged for the gas (fixed_rate, charge_custom_tokens). */
async function chargeOf(db: Queryable, intent: IntentRow, policy: PolicyRow | null): Promise<{ token: Address; amount: bigint } | null> {
  if (!policy?.tokenContractId || intent.tokenCharge === null) return null;
  // Deleted or not, the policy's token is the one charged.
  const [token] = await db.select({ address: contracts.address }).from(contracts).where(eq(contracts.id, policy.tokenContractId));
  return token ? { token: token.address as Address, amount: BigInt(intent.tokenCharge) } : null;
}

/**
 * The op's deployment as v0.6's initCode: a v0.8 op's factory ++ factoryData (its EIP-7702 marker deploys nothing: the
 * EOA delegates, which the page says apart).
 */
function initCodeOf(op: Record<string, string>): Hex {
  if (!isStoredV08(op)) return (op.initCode ?? "0x") as Hex;
  if (!op.factory || isEip7702Factory(op.factory as Hex)) return "0x";
  return concat([op.factory as Hex, (op.factoryData ?? "0x") as Hex]);
}

/**
 * Every step of the intent's userOperation as it is stored, decoded against the project's
 * registered contracts, our account's ABI and ERC-20, for the owner to read before signing it.
 */
export async function decodeIntentOperation(db: Queryable, ctx: ProjectContext, intent: IntentRow, policy: PolicyRow | null): Promise<DecodedCall[]> {
  const op = intent.userOperation;
  const sender = op.sender as Address;
  const chain = findChain(intent.chainId);
  const calls = accountCalls(sender, (op.callData ?? "0x") as Hex).filter((c) => !isAddressEqual(c.to, sender));
  const erc20 = calls.map((c) => ({ call: c, parties: erc20Parties(c) })).filter((c) => c.parties !== null);
  const parties = [...erc20.flatMap((c) => c.parties!), ...calls.filter((c) => c.data === "0x").map((c) => c.to)];
  const [registered, projectAccounts, tokens, charge] = await Promise.all([
    registeredAt(db, ctx, intent.chainId, lower(calls.map((c) => c.to))),
    projectAccountsAmong(db, ctx, lower(parties)),
    tokenInfo(chain, lower(erc20.map((c) => c.call.to))),
    chargeOf(db, intent, policy),
  ]);
  return describeOperation(
    {
      account: sender,
      symbol: chain?.nativeCurrency.symbol ?? "ETH",
      // v0.8 accounts deploy through AccountFactoryV8 (the same createAccount ABI).
      accountFactory: isStoredV08(op) ? serviceDeployment().accountFactoryV08 : serviceDeployment().accountFactory,
      tokenBoundRegistry: serviceDeployment().tokenBoundRegistry,
      managedAccountFactory: serviceDeployment().managedAccountFactory,
      serviceGuardian: serviceAccount("guardian").address,
      contracts: registered,
      projectAccounts,
      tokens,
      charge,
    },
    { initCode: initCodeOf(op), callData: (op.callData ?? "0x") as Hex },
  );
}
