import Link from "next/link";
import { formatEther } from "viem";
import { CodeBlock, CopyButton, Mono } from "@/components/code";
import { IntentProgress } from "@/components/intent-progress";
import { buttonClass, Card, Definitions, PageHeader } from "@/components/page";
import { Table } from "@/components/table";
import { Time } from "@/components/time";
import { findChain } from "@/lib/chain/registry";
import { chainLabel } from "@/lib/dashboard/chains";
import { projectScope } from "@/lib/dashboard/context";
import { intentProgress } from "@/lib/dashboard/intents";
import { decodeLogs } from "@/lib/dashboard/logs";
import { found } from "@/lib/dashboard/operations";
import { signingLink } from "@/lib/dashboard/signing";
import { getDb } from "@/lib/db/client";
import { unixSeconds } from "@/lib/http/resource";
import { serializeIntent } from "@/lib/intent-records/serializer";
import { getIntent } from "@/lib/intents/service";
import { inUsd } from "@/lib/policies/reports";

export const metadata = { title: "Transaction intent" };

const json = (value: unknown) => JSON.stringify(value, null, 2);

export default async function IntentPage({ params }: { params: Promise<{ projectId: string; mode: string; id: string }> }) {
  const { projectId, mode, id } = await params;
  const scope = await projectScope(projectId, mode);
  const row = await found(getIntent(await getDb(), scope.ctx, id));
  const intent = serializeIntent(row);
  const chain = findChain(row.chainId);
  const symbol = chain?.nativeCurrency.symbol ?? "ETH";
  const fee = (wei: string | null) => {
    if (wei === null) return null;
    const usd = inUsd(row.chainId, BigInt(wei));
    return `${formatEther(BigInt(wei))} ${symbol}${usd === null ? "" : ` ($${usd})`}`;
  };
  const logs = intent.response?.logs ?? [];
  const decoded = await decodeLogs(scope.ctx, row.chainId, logs);
  const link = await signingLink(row);
  return (
    <>
      <PageHeader title="Transaction intent" description={<span className="font-mono">{row.id}</span>} actions={<IntentProgress projectId={scope.project.id} mode={scope.mode} initial={await intentProgress(scope.project.id, scope.mode, row.id)} />} />
      {row.status === "awaiting_signature" && (
        <Card title="Awaiting the owner's signature">
          <p className="text-sm text-slate-600">
            This account&apos;s owner holds its key: the intent is sent once the owner signs its userOperationHash. Send the owner this signing link (it works only while the intent awaits a signature, and expires{row.sponsored ? " with the sponsorship" : " in an hour"}), or have the owner sign the 32 bytes (personal_sign) and post the signature to{" "}
            <code className="text-xs">/v1/transaction_intents/{row.id}/signature</code>.
          </p>
          {link && (
            <div className="mt-3 flex flex-wrap items-center gap-2">
              <code data-testid="signing-link" className="min-w-0 flex-1 break-all rounded bg-slate-100 px-2 py-1 font-mono text-xs">
                {link}
              </code>
              <CopyButton value={link} label="Copy link" />
              {/* A plain anchor: the signing page is outside the dashboard, nothing to prefetch. */}
              <a className={buttonClass("secondary")} href={link} target="_blank" rel="noreferrer">
                Open signing page
              </a>
            </div>
          )}
        </Card>
      )}
      <Card title="Details">
        <Definitions
          items={[
            ["Chain", chainLabel(row.chainId)],
            ["Player", row.playerId ? <Link key="p" className="font-mono text-xs text-indigo-700 hover:underline" href={`${scope.base}/players/${row.playerId}`}>{row.playerId}</Link> : "— (a developer account)"],
            ["Account", row.accountId.startsWith("acc_") ? <Link key="a" className="font-mono text-xs text-indigo-700 hover:underline" href={`${scope.base}/accounts/${row.accountId}`}>{row.accountId}</Link> : <span key="a" className="font-mono text-xs">{row.accountId}</span>],
            ["Policy", row.policyId ? <Link key="pol" className="font-mono text-xs text-indigo-700 hover:underline" href={`${scope.base}/policies/${row.policyId}`}>{row.policyId}</Link> : "not sponsored: the account pays its gas"],
            ["userOperationHash", <span key="h" className="inline-flex flex-wrap items-center gap-2"><code className="break-all font-mono text-xs">{row.userOperationHash}</code><CopyButton value={row.userOperationHash} /></span>],
            ["Transaction", row.transactionHash ? <code key="t" className="break-all font-mono text-xs">{row.transactionHash}</code> : null],
            ["Block", row.blockNumber],
            ["Confirmations wanted", row.optimistic ? `${row.confirmationBlocks} (optimistic: answered before landing)` : row.confirmationBlocks],
            ["Gas used", row.gasUsed],
            ["Gas fee", fee(row.gasCost)],
            ["Most it could cost", fee(row.maxCost)],
            ...(row.tokenCharge ? ([["Token charge", `${row.tokenCharge} base units`]] as [string, string][]) : []),
            ["Error", row.error ? <span key="e" className="text-rose-700">{row.error}</span> : null],
            ["Created", <Time key="c" seconds={unixSeconds(row.createdAt)} />],
            ["Updated", <Time key="u" seconds={unixSeconds(row.updatedAt)} />],
          ]}
        />
      </Card>
      <Card title={`Interactions (${row.interactions.length})`}>
        <CodeBlock code={json(row.interactions)} />
      </Card>
      <Card title="userOperation">
        <CodeBlock code={json(row.userOperation)} />
      </Card>
      <Card title="Response">
        {intent.response ? <CodeBlock code={json({ ...intent.response, logs: undefined })} /> : <p className="text-sm text-slate-500">Not landed yet.</p>}
      </Card>
      <Card title={`Logs (${logs.length})`}>
        {logs.length === 0 ? (
          <p className="text-sm text-slate-500">No logs.</p>
        ) : (
          <div className="space-y-4">
            <Table
              rows={decoded.map((log, i) => ({ ...log, i }))}
              rowKey={(log) => String(log.i)}
              columns={[
                { header: "Emitted by", cell: (log) => (log.contract ? <Link className="text-indigo-700 hover:underline" href={`${scope.base}/contracts/${log.contract.id}`}>{log.contract.name}</Link> : <Mono value={log.address} />) },
                { header: "Event", cell: (log) => log.event ?? <span className="text-slate-400">not in a registered ABI</span> },
                { header: "Arguments", cell: (log) => (log.args ? <code className="whitespace-pre-wrap break-all text-xs">{log.args}</code> : "—"), className: "max-w-md" },
              ]}
            />
            <details>
              <summary className="cursor-pointer text-xs text-indigo-700">Raw logs</summary>
              <div className="mt-2">
                <CodeBlock code={json(logs)} />
              </div>
            </details>
          </div>
        )}
      </Card>
    </>
  );
}
