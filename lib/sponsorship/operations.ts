import { serviceDeployment } from "@/lib/chain/contracts";
import { chainFor, supportedChains } from "@/lib/chain/registry";
import { listEnvelope } from "@/lib/http/list";
import { defineOperation } from "@/lib/http/operation";
import { listResponse } from "@/lib/http/resource";
import { usdPrice } from "./prices";
import { listEntries, projectBalances } from "./reads";
import { balancesResponse, entryResponse, listBalancesInput, listEntriesInput } from "./schema";
import { serializeBalance, serializeEntry } from "./serializer";

const tag = "Sponsorship";

export const listBalances = defineOperation({
  operationId: "getSponsorshipBalances",
  method: "GET",
  path: "/v1/sponsorship/balances",
  summary: "The project's sponsorship balance on each chain of the key's mode, and where to fund it",
  tag,
  input: listBalancesInput,
  response: balancesResponse,
  run: async ({ db, project, input, path }) => {
    const chains = input.chainId !== undefined ? [chainFor(project, input.chainId)] : supportedChains().filter((c) => c.livemode === project.livemode);
    // Prices first: a price may come from the chain, and no remote call runs inside the balances' transaction.
    const prices = await Promise.all(chains.map((chain) => usdPrice(chain)));
    const balances = await projectBalances(
      db,
      project,
      chains.map((c) => c.chainId),
    );
    const { entryPoint, paymaster } = serviceDeployment();
    const data = chains.map((chain, i) => serializeBalance(chain, balances[i]!, prices[i] ?? null, { entryPoint, paymaster }));
    return listEnvelope(path, {}, data, data.length);
  },
});

export const listLedger = defineOperation({
  operationId: "getSponsorshipLedger",
  method: "GET",
  path: "/v1/sponsorship/ledger",
  summary: "List the entries of the project's sponsorship ledger, newest first",
  tag,
  input: listEntriesInput,
  response: listResponse(entryResponse),
  run: async ({ db, project, input, path }) => {
    if (input.chainId !== undefined) chainFor(project, input.chainId);
    const { rows, total } = await listEntries(db, project, input);
    return listEnvelope(path, input, rows.map(serializeEntry), total);
  },
});

export const sponsorshipOperations = [listBalances, listLedger];
