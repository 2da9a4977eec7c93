import { sql } from "drizzle-orm";
import type { Address } from "viem";
import { requireDeployment } from "@/lib/chain/contracts";
import { chainFor } from "@/lib/chain/registry";
import { getContract } from "@/lib/contracts/service";
import type { Queryable } from "@/lib/db/client";
import { getDeveloperAccount, tokenCollector } from "@/lib/developer-accounts/service";
import { badRequest, referenced } from "@/lib/errors";
import { developerSender } from "@/lib/intents/sender";
import { recordIntent, type IntentRow } from "@/lib/intents/service";
import type { ProjectContext } from "@/lib/tenant";
import { getPolicy } from "@/lib/policies/service";
import { policyTokenTotals, tokenBalance, transferCall } from "@/lib/policies/tokens";

/**
 * Sends tokens a fixed_rate / charge_custom_tokens policy collected from the collecting developer
 * account to another developer account: an intent of the collector, its gas sponsored as the
 * policy's own. Never more than the policy collected and has not yet withdrawn (checked under a
 * lock, so concurrent withdrawals cannot overdraw), nor more than the collector holds.
 */
export async function withdrawTokens(db: Queryable, ctx: ProjectContext, policyId: string, input: { account: string; amount: string }): Promise<IntentRow> {
  const policy = await getPolicy(db, ctx, policyId);
  if (policy.sponsorSchema === "pay_for_user" || !policy.tokenContractId) {
    throw badRequest(`Policy ${policy.id} uses pay_for_user and collects no tokens to withdraw.`, { policy: { value: policy.id, message: "collects no tokens" } });
  }
  const amount = BigInt(input.amount);
  if (amount === 0n) throw badRequest("amount must be more than 0.", { amount: { value: input.amount, message: "must be positive" } });
  const recipient = await referenced(getDeveloperAccount(db, ctx, input.account), "account", input.account);
  if (recipient.deleted) throw badRequest(`Developer account ${recipient.id} is deleted.`, { account: { value: recipient.id, message: "deleted" } });
  const chain = chainFor(ctx, policy.chainId);
  await requireDeployment(chain);
  const [collector, token] = await Promise.all([tokenCollector(db, ctx), getContract(db, ctx, policy.tokenContractId)]);
  if (collector.id === recipient.id) {
    throw badRequest(`Developer account ${recipient.id} is the one collecting the tokens; withdraw to another developer account.`, {
      account: { value: recipient.id, message: "is the collecting account" },
    });
  }
  const held = await tokenBalance(chain, token, collector.address as Address);
  if (amount > held) {
    throw badRequest(`The collecting developer account ${collector.id} holds ${held} of token ${token.id}, less than ${amount}.`, {
      amount: { value: input.amount, message: `more than the ${held} held` },
    });
  }
  const call = transferCall(token.address as Address, recipient.address as Address, amount);
  return recordIntent(db, ctx, chain, developerSender(collector, chain.chainId), {
    calls: [call],
    ruled: [],
    sponsor: { policy, rules: [], evaluate: false },
    cause: "withdrawal",
    interactions: [{ contract: token.id, functionName: "transfer", functionArgs: [recipient.address, amount.toString()], value: "0" }],
    optimistic: false,
    confirmationBlocks: 5,
    tokenWithdrawal: amount,
    check: async (tx) => {
      await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`withdraw:${policy.id}`}))`);
      const { collected, withdrawn } = await policyTokenTotals(tx, policy.id);
      if (amount > collected - withdrawn) {
        throw badRequest(`Policy ${policy.id} has ${collected - withdrawn} token units left to withdraw (collected ${collected}, withdrawn ${withdrawn}).`, {
          amount: { value: input.amount, message: `more than the ${collected - withdrawn} left` },
        });
      }
    },
  });
}
