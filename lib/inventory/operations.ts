import { listEnvelope } from "@/lib/http/list";
import { defineOperation } from "@/lib/http/operation";
import { accountListInput, accountNativeInput, inventoryListResponse, nativeInventoryResponse, playerListInput, playerNativeInput } from "./schema";
import * as inventory from "./service";

// The SDK's InventoriesApi. Each reads the chain (and the nft ones may index it first): they count as
// chain work in the per-project rate limit (`cost: "chain"`, lib/http/rate-limit.ts).
const tag = "Inventories";
const devOnly = " (for development: may be rate limited)";

export const getPlayerNativeInventory = defineOperation({
  operationId: "getPlayerNativeInventory",
  cost: "chain",
  method: "GET",
  path: "/v1/players/{id}/inventory/native",
  summary: `A player's native coin balance on a chain${devOnly}`,
  tag,
  input: playerNativeInput,
  response: nativeInventoryResponse,
  run: async ({ db, project, params, input, path }) => {
    const holder = await inventory.playerHolder(db, project, params.id, input.chainId);
    return { object: "inventory" as const, url: path, data: await inventory.nativeInventory(holder) };
  },
});

export const getPlayerCryptoCurrencyInventory = defineOperation({
  operationId: "getPlayerCryptoCurrencyInventory",
  cost: "chain",
  method: "GET",
  path: "/v1/players/{id}/inventory/cryptocurrency",
  summary: `A player's ERC-20 balances of the project's registered tokens on a chain${devOnly}`,
  tag,
  input: playerListInput,
  response: inventoryListResponse,
  run: async ({ db, project, params, input, path }) => {
    const holder = await inventory.playerHolder(db, project, params.id, input.chainId);
    const { items, total } = await inventory.cryptocurrencyInventory(db, project, holder, { ...input, contracts: input.contract, param: "contract" });
    return listEnvelope(path, input, items, total);
  },
});

export const getPlayerNftInventory = defineOperation({
  operationId: "getPlayerNftInventory",
  cost: "chain",
  method: "GET",
  path: "/v1/players/{id}/inventory/nft",
  summary: `A player's ERC-721 and ERC-1155 tokens of the project's registered contracts on a chain${devOnly}`,
  tag,
  input: playerListInput,
  response: inventoryListResponse,
  run: async ({ db, project, params, input, path }) => {
    const holder = await inventory.playerHolder(db, project, params.id, input.chainId);
    const { items, total } = await inventory.nftInventory(db, project, holder, { ...input, contracts: input.contract, param: "contract" });
    return listEnvelope(path, input, items, total);
  },
});

export const getAccountNativeInventory = defineOperation({
  operationId: "getAccountNativeInventory",
  cost: "chain",
  method: "GET",
  path: "/v1/accounts/{id}/inventory/native",
  summary: `An account's native coin balance${devOnly}`,
  tag,
  input: accountNativeInput,
  response: nativeInventoryResponse,
  run: async ({ db, project, params, path }) => {
    const holder = await inventory.accountHolder(db, project, params.id);
    return { object: "inventory" as const, url: path, data: await inventory.nativeInventory(holder) };
  },
});

export const getAccountCryptoCurrencyInventory = defineOperation({
  operationId: "getAccountCryptoCurrencyInventory",
  cost: "chain",
  method: "GET",
  path: "/v1/accounts/{id}/inventory/cryptocurrency",
  summary: `An account's ERC-20 balances of the project's registered tokens${devOnly}`,
  tag,
  input: accountListInput,
  response: inventoryListResponse,
  run: async ({ db, project, params, input, path }) => {
    const holder = await inventory.accountHolder(db, project, params.id);
    const { items, total } = await inventory.cryptocurrencyInventory(db, project, holder, { ...input, contracts: input.contractId, param: "contractId" });
    return listEnvelope(path, input, items, total);
  },
});

export const getAccountNftInventory = defineOperation({
  operationId: "getAccountNftInventory",
  cost: "chain",
  method: "GET",
  path: "/v1/accounts/{id}/inventory/nft",
  summary: `An account's ERC-721 and ERC-1155 tokens of the project's registered contracts${devOnly}`,
  tag,
  input: accountListInput,
  response: inventoryListResponse,
  run: async ({ db, project, params, input, path }) => {
    const holder = await inventory.accountHolder(db, project, params.id);
    const { items, total } = await inventory.nftInventory(db, project, holder, { ...input, contracts: input.contractId, param: "contractId" });
    return listEnvelope(path, input, items, total);
  },
});

export const inventoryOperations = [
  getPlayerNativeInventory,
  getPlayerCryptoCurrencyInventory,
  getPlayerNftInventory,
  getAccountNativeInventory,
  getAccountCryptoCurrencyInventory,
  getAccountNftInventory,
];
