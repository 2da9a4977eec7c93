import { eq, sql } from "drizzle-orm";
import { BaseError, encodeFunctionData, erc20Abi, type Address } from "viem";
import { onChain, publicClient } from "@/lib/chain/clients";
import type { ChainConfig } from "@/lib/chain/registry";
import type { AccountCall } from "@/lib/chain/userop";
import { getContract, type ContractRow } from "@/lib/contracts/service";
import type { Queryable } from "@/lib/db/client";
import { transactionIntents } from "@/lib/db/schema";
import { tokenCollector, type DeveloperAccountRow } from "@/lib/developer-accounts/service";
import { badRequest } from "@/lib/errors";
import type { ProjectContext } from "@/lib/tenant";
import type { PolicyRow } from "./service";

const WEI_PER_NATIVE = 10n ** 18n;
/** Changing the 32 amount bytes from zero to non-zero raises preVerificationGas by at most 12 gas each. */
const AMOUNT_BYTES_GAS = 32n * 12n;

/** The holder's balance of the policy's token; a 400 when the contract does not answer like an ERC-20. */
export async function tokenBalance(chain: ChainConfig, token: ContractRow, holder: Address): Promise<bigint> {
  try {
    return await onChain(chain, () => publicClient(chain).readContract({ address: token.address as Address, abi: erc20Abi, functionName: "balanceOf", args: [holder] }));
  } catch (err) {
    if (!(err instanceof BaseError)) throw err;
    throw badRequest(`Token contract ${token.id} (${token.address}) on chain ${chain.chainId} does not answer balanceOf like an ERC-20: ${err.shortMessage}`, {
      "strategy[tokenContract]": { value: token.id, message: "not an ERC-20 token" },
    });
  }
}

export const transferCall = (token: Address, to: Address, amount: bigint): AccountCall => ({
  to: token,
  value: 0n,
  data: encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [to, amount] }),
});

/**
 * What a fixed_rate or charge_custom_tokens policy charges the account, in the policy's token,
 * paid to the project's collecting developer account in the same batch as the intent's calls.
 * fixed_rate: `tokenContractAmount` per intent. charge_custom_tokens: the operation's maximum
 * gas cost at `tokenContractAmount` token base units per whole native coin (10^18 wei), rounded up.
 */
export interface TokenChargePlan {
  token: Address;
  collector: DeveloperAccountRow;
  /** The amount to put in the transfer while estimating gas (the real one needs the estimate). */
  estimateAmount: bigint;
  chargeFor: (maxCost: bigint, maxFeePerGas: bigint) => bigint;
}

export async function planTokenCharge(db: Queryable, ctx: ProjectContext, chain: ChainConfig, policy: PolicyRow, payer: Address): Promise<TokenChargePlan | null> {
  if (policy.sponsorSchema === "pay_for_user") return null;
  const contract = await getContract(db, ctx, policy.tokenContractId!);
  const token = contract.address as Address;
  const rate = BigInt(policy.tokenContractAmount!);
  const [collector, balance] = await Promise.all([tokenCollector(db, ctx), tokenBalance(chain, contract, payer)]);
  const short = (needed: bigint) =>
    badRequest(`Policy ${policy.id} charges ${needed} base units of token ${contract.id} (${token}) for this intent, but account ${payer} holds ${balance}.`, {
      policy: { value: policy.id, message: `the account holds ${balance} of the ${needed} token units the policy charges` },
    });
  if (policy.sponsorSchema === "fixed_rate") {
    if (balance < rate) throw short(rate);
    return { token, collector, estimateAmount: rate, chargeFor: () => rate };
  }
  if (balance === 0n) throw short(1n);
  return {
    token,
    collector,
    // Any amount the account holds simulates the transfer; the real charge replaces it after.
    estimateAmount: balance,
    chargeFor: (maxCost, maxFeePerGas) => {
      const charge = ((maxCost + AMOUNT_BYTES_GAS * maxFeePerGas) * rate + WEI_PER_NATIVE - 1n) / WEI_PER_NATIVE;
      if (charge > balance) throw short(charge);
      return charge;
    },
  };
}

/** Tokens collected under the policy (landed, successful intents) and sent out by its withdrawals (not failed). */
export async function policyTokenTotals(db: Queryable, policyId: string): Promise<{ collected: bigint; withdrawn: bigint }> {
  const [row] = await db
    .select({
      collected: sql<string>`coalesce(sum(${transactionIntents.tokenCharge}::numeric) filter (where ${transactionIntents.status} = 'successful'), 0)::text`,
      withdrawn: sql<string>`coalesce(sum(${transactionIntents.tokenWithdrawal}::numeric) filter (where ${transactionIntents.status} <> 'failed'), 0)::text`,
    })
    .from(transactionIntents)
    .where(eq(transactionIntents.policyId, policyId));
  return { collected: BigInt(row?.collected ?? "0"), withdrawn: BigInt(row?.withdrawn ?? "0") };
}
