import { formatUnits } from "viem";
import type { z } from "zod";
import { findChain } from "@/lib/chain/registry";
import { chainLabel } from "@/lib/dashboard/chains";
import { runOperation } from "@/lib/dashboard/operations";
import type { ListEnvelope } from "@/lib/http/list";
import type { Operation } from "@/lib/http/operation";
import {
  getAccountCryptoCurrencyInventory,
  getAccountNativeInventory,
  getAccountNftInventory,
  getPlayerCryptoCurrencyInventory,
  getPlayerNativeInventory,
  getPlayerNftInventory,
} from "@/lib/inventory/operations";
import type { InventoryItem } from "@/lib/inventory/schema";
import type { ProjectContext } from "@/lib/tenant";
import { Mono } from "./code";
import { ErrorMessage } from "./page";
import { Table } from "./table";
import { Time } from "./time";

/** Rows shown per list: the API's largest page. */
const SHOWN = 100;

type Subject = { player: string; chainId: number } | { account: string; chainId: number };

/**
 * What a player's account (or an account) holds on its chain, read through the public API's
 * inventory operations: native coin, ERC-20 balances and NFTs of the project's registered contracts.
 * A failed read (a chain that does not answer) shows its message in place of that list.
 */
export async function Inventory({ ctx, subject }: { ctx: ProjectContext; subject: Subject }) {
  const byPlayer = "player" in subject;
  const params = { id: byPlayer ? subject.player : subject.account };
  const query = { ...(byPlayer && { chainId: subject.chainId }), limit: SHOWN };
  const run = <R,>(op: Operation, input: Record<string, unknown>) => runOperation(ctx, op as Operation<z.ZodType, R>, input, params);
  const [native, tokens, nfts] = await Promise.all([
    run<{ data: InventoryItem }>(byPlayer ? getPlayerNativeInventory : getAccountNativeInventory, byPlayer ? { chainId: subject.chainId } : {}),
    run<ListEnvelope<InventoryItem>>(byPlayer ? getPlayerCryptoCurrencyInventory : getAccountCryptoCurrencyInventory, query),
    run<ListEnvelope<InventoryItem>>(byPlayer ? getPlayerNftInventory : getAccountNftInventory, query),
  ]);
  const currency = findChain(subject.chainId)?.nativeCurrency ?? { symbol: "ETH", decimals: 18 };
  const more = (list: ListEnvelope<InventoryItem>) =>
    list.total > list.data.length ? <p className="mt-1 text-xs text-slate-500">{list.total - list.data.length} more not shown (the API pages through all).</p> : null;
  return (
    <section className="space-y-3" data-testid={`inventory-${subject.chainId}`}>
      <h3 className="text-sm font-semibold text-slate-700">{chainLabel(subject.chainId)}</h3>
      <p className="text-sm">
        <span className="text-slate-500">Native: </span>
        {native.ok ? (
          <span className="font-mono" title={`${native.data.data.amount} wei`}>
            {formatUnits(BigInt(native.data.data.amount), currency.decimals)} {currency.symbol}
          </span>
        ) : (
          <ErrorMessage>{native.error.message}</ErrorMessage>
        )}
      </p>
      <div>
        <h4 className="mb-1 text-xs font-semibold uppercase tracking-wide text-slate-500">Tokens (ERC-20)</h4>
        {!tokens.ok ? (
          <ErrorMessage>{tokens.error.message}</ErrorMessage>
        ) : tokens.data.data.length === 0 ? (
          <p className="text-sm text-slate-500">No balance in the project&apos;s registered tokens on this chain.</p>
        ) : (
          <>
            <Table
              rows={tokens.data.data}
              rowKey={(t) => t.address!}
              columns={[
                { header: "Token", cell: (t) => <Mono value={t.address!} /> },
                { header: "Amount (base units)", cell: (t) => <span className="font-mono">{t.amount}</span> },
                { header: "Last transfer", cell: (t) => <Time seconds={t.lastTransferredAt} /> },
              ]}
            />
            {more(tokens.data)}
          </>
        )}
      </div>
      <div>
        <h4 className="mb-1 text-xs font-semibold uppercase tracking-wide text-slate-500">NFTs (ERC-721, ERC-1155)</h4>
        {!nfts.ok ? (
          <ErrorMessage>{nfts.error.message}</ErrorMessage>
        ) : nfts.data.data.length === 0 ? (
          <p className="text-sm text-slate-500">No NFT of the project&apos;s registered contracts on this chain.</p>
        ) : (
          <>
            <Table
              rows={nfts.data.data}
              rowKey={(n) => `${n.address}:${n.tokenId}`}
              columns={[
                { header: "Contract", cell: (n) => <Mono value={n.address!} /> },
                { header: "Standard", cell: (n) => n.assetType },
                { header: "Token id", cell: (n) => <span className="font-mono">{String(n.tokenId)}</span> },
                { header: "Amount", cell: (n) => <span className="font-mono">{n.amount}</span> },
                { header: "Last transfer", cell: (n) => <Time seconds={n.lastTransferredAt} /> },
              ]}
            />
            {more(nfts.data)}
          </>
        )}
      </div>
    </section>
  );
}
