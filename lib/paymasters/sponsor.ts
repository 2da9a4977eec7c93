import type { Hex } from "viem";
import { serviceDeployment } from "@/lib/chain/contracts";
import { latestBlock } from "@/lib/chain/coalesce";
import type { ChainConfig } from "@/lib/chain/registry";
import { signPaymasterAndData, stubPaymasterAndData, type UserOp } from "@/lib/chain/userop";
import type { Queryable } from "@/lib/db/client";
import { badRequest } from "@/lib/errors";
import type { PolicyRow } from "@/lib/policies/service";
import type { ProjectContext } from "@/lib/tenant";
import { finalData, stubData, type ServiceCall } from "./client";
import { getPaymaster } from "./service";

/** How long our paymaster's signature stays valid: the window to sign (non-custodial) and land. */
export const SPONSORSHIP_SECONDS = 3600;

/**
 * Who signs a sponsored operation's paymasterAndData: our VerifyingPaymaster, or the ERC-7677 service of the
 * paymaster the policy names. The one seam between building an intent (estimation, rebuilds) and the paymaster.
 */
export interface PaymasterSponsor {
  /** paymasterAndData of the final length, for simulation before the op's gas is known. */
  stub(draft: UserOp): Promise<Hex>;
  /** The final paymasterAndData for `op` (its gas and fees final); the account signs after this. */
  sign(op: UserOp): Promise<Hex>;
  /** Signing asks a remote service: the policy's rules are checked before asking, not only when recording. */
  remote: boolean;
}

/**
 * The chain's time for our paymaster's stub and signature window, read once when the sponsor is made: a build reads the
 * latest block at that point anyway (the estimate, the sponsorship clock), so this is the same coalesced fetch
 * (lib/chain/coalesce.ts) rather than one more round trip before signing. A real block's time, never ahead of the chain;
 * at most a build older than a fresh read, which shortens the window by as much. A failed read is tried again when used.
 */
export function sponsorClock(chain: ChainConfig): () => Promise<number> {
  const read = () => latestBlock(chain).then((block) => Number(block.timestamp));
  let clock = read();
  clock.catch(() => {}); // awaited when used; not left unhandled if the build fails first
  return () => clock.catch(() => (clock = read()));
}

/** Our VerifyingPaymaster (serviceDeployment().paymaster), signed here with the paymaster signer's key. */
export function ourSponsor(chain: ChainConfig): PaymasterSponsor {
  const now = sponsorClock(chain);
  return {
    remote: false,
    stub: async () => stubPaymasterAndData(await now()),
    sign: async (op) => signPaymasterAndData(chain, op, { validUntil: (await now()) + SPONSORSHIP_SECONDS, validAfter: 0 }),
  };
}

/** An ERC-7677 service: pm_getPaymasterStubData for estimation, pm_getPaymasterData for the final data (skipped when the stub is final). */
export function serviceSponsor(call: ServiceCall): PaymasterSponsor {
  let final: Hex | null = null;
  return {
    remote: true,
    async stub(draft) {
      const { paymasterAndData, isFinal } = await stubData(call, draft);
      final = isFinal ? paymasterAndData : null;
      return paymasterAndData;
    },
    sign: async (op) => final ?? finalData(call, op),
  };
}

/**
 * The sponsor of the policy's intents: the ERC-7677 service of the paymaster it names, else ours. Errors name
 * `policy`, the parameter that chose the paymaster.
 */
export async function sponsorOf(db: Queryable, ctx: ProjectContext, chain: ChainConfig, policy: PolicyRow): Promise<PaymasterSponsor> {
  if (!policy.paymasterId) return ourSponsor(chain);
  const paymaster = await getPaymaster(db, ctx, policy.paymasterId);
  const who = `Paymaster ${paymaster.id} of policy ${policy.id}`;
  if (!paymaster.url || paymaster.deleted) {
    throw badRequest(`${who} cannot sponsor: it ${paymaster.deleted ? "is deleted" : "has no url"}.`, {
      policy: { value: policy.id, message: `its paymaster ${paymaster.id} ${paymaster.deleted ? "is deleted" : "has no url"}` },
    });
  }
  return serviceSponsor({
    url: paymaster.url,
    livemode: ctx.livemode,
    chainId: chain.chainId,
    entryPoint: serviceDeployment().entryPoint,
    context: paymaster.context,
    who,
    param: "policy",
    paramValue: policy.id,
  });
}
