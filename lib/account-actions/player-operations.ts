// The /v1/players/{id}/… ownership actions: the account actions on the player's account on a chain.
import { eq } from "drizzle-orm";
import { z } from "zod";
import type { Queryable } from "@/lib/db/client";
import { accounts } from "@/lib/db/schema";
import { inScope } from "@/lib/db/scope";
import { badRequest, missing } from "@/lib/errors";
import { addressField, chainIdField } from "@/lib/http/fields";
import { defineOperation } from "@/lib/http/operation";
import { getPlayer } from "@/lib/players/service";
import type { ProjectContext } from "@/lib/tenant";
import { relayIntent } from "@/lib/intents/dispatch";
import { presentIntent } from "@/lib/intents/present";
import { intentResponse } from "@/lib/intents/schema";
import type { IntentRow } from "@/lib/intents/service";
import * as actions from "./service";

/**
 * Ownership transfer by player id (the SDK's PlayersApi): the player's account on the chain, then exactly what
 * /v1/accounts/{id}/request_transfer_ownership and cancel_transfer_ownership do.
 */

const tag = "Players";
const policy = z.string({ error: "policy is required: the policy (pol_...) that pays, with an account_functions rule" }).startsWith("pol_", "Expected a policy id (pol_...)");
const chainId = chainIdField().describe("The chain of the player's account to act on.");
// The SDK's request type carries an optional `player`; when sent it must be the path's.
const player = z.string().optional().describe("The player (pla_...); optional, and when sent the same as the path's id.");

/** The player's account on the chain: 404 for an unknown player, and a 404 naming the chain when it has none there. */
export async function playerAccountId(db: Queryable, ctx: ProjectContext, playerId: string, chainId: number, bodyPlayer?: string): Promise<string> {
  if (bodyPlayer !== undefined && bodyPlayer !== playerId) {
    throw badRequest(`player ${bodyPlayer} in the body differs from the path's ${playerId}.`, { player: { value: bodyPlayer, message: "differs from the path's player" } });
  }
  const found = await getPlayer(db, ctx, playerId);
  const [account] = await db
    .select({ id: accounts.id })
    .from(accounts)
    .where(inScope(accounts, ctx, eq(accounts.playerId, found.id), eq(accounts.chainId, chainId)));
  if (!account) throw missing(`Player ${found.id} has no account on chain ${chainId}.`, { chainId: { value: chainId, message: "the player has no account on this chain" } });
  return account.id;
}

const playerAction = <T extends z.ZodObject>(
  operationId: string,
  action: string,
  summary: string,
  input: T,
  run: (db: Queryable, ctx: ProjectContext, accountId: string, input: z.output<T>) => Promise<IntentRow>,
) =>
  defineOperation({
    operationId,
    // The same chain work as the account's own ownership actions (an op built, simulated and relayed).
    cost: "chain",
    method: "POST",
    path: `/v1/players/{id}/${action}`,
    summary,
    tag,
    input,
    response: intentResponse,
    run: async ({ db, project, params, input, origin }) => {
      const accountId = await playerAccountId(db, project, params.id, input.chainId as number, input.player as string | undefined);
      const intent = await run(db, project, accountId, input);
      return presentIntent(db, project, await relayIntent(db, intent, false), undefined, origin);
    },
  });

export const requestTransferAccountOwnership = playerAction(
  "requestTransferAccountOwnership",
  "request_transfer_ownership",
  "Start a two-step ownership transfer of the player's account on a chain (the new owner then calls acceptOwnership on the account)",
  z.strictObject({ policy, chainId, newOwnerAddress: addressField(), player }),
  (db, ctx, accountId, input) => actions.requestOwnershipTransfer(db, ctx, accountId, input),
);

export const cancelTransferAccountOwnership = playerAction(
  "cancelTransferAccountOwnership",
  "cancel_transfer_ownership",
  "Cancel a pending ownership transfer of the player's account on a chain",
  z.strictObject({ policy, chainId, player }),
  (db, ctx, accountId, input) => actions.cancelOwnershipTransfer(db, ctx, accountId, input),
);

export const playerOwnershipOperations = [requestTransferAccountOwnership, cancelTransferAccountOwnership];
