import { Badge } from "@/components/badge";
import { CodeBlock } from "@/components/code";
import { Card, Definitions, EmptyState, ErrorMessage, PageHeader } from "@/components/page";
import { managedBeacons } from "@/lib/accounts/managed";
import { scopeOf, type ScopeParams } from "@/lib/dashboard/context";
import { upgradeManagedAction } from "@/lib/dashboard/managed";
import { getDb } from "@/lib/db/client";
import { UpgradeForm } from "./upgrade-form";

export const metadata = { title: "Managed accounts" };

export default async function ManagedAccountsPage({ params }: { params: ScopeParams }) {
  const scope = await scopeOf(params);
  const beacons = await managedBeacons(await getDb(), scope.ctx);
  return (
    <>
      <PageHeader
        title="Managed accounts"
        description={
          <>
            Accounts created with <code className="text-xs">accountType: &quot;ManagedV5&quot;</code> run the code their project&apos;s beacon names, one beacon per chain. Upgrading the beacon
            upgrades all of them in one transaction; no account can upgrade itself.
          </>
        }
      />
      {beacons.length === 0 && <EmptyState title={`No ${scope.mode} chain is configured`} />}
      {beacons.map((b) => (
        <Card key={b.chainId} title={`${b.chainName} (${b.chainId})`}>
          {"error" in b ? (
            <ErrorMessage>{b.error}</ErrorMessage>
          ) : (
            <div className="space-y-4">
              <Definitions
                items={[
                  ["Beacon", <code key="b" className="break-all text-xs">{b.beacon}</code>],
                  ["Deployed", b.deployed ? "yes" : "not yet (the first managed account's transaction deploys it)"],
                  [
                    "Implementation",
                    <span key="i" className="inline-flex flex-wrap items-center gap-2">
                      <code data-testid={`implementation-${b.chainId}`} className="break-all text-xs">{b.implementation}</code>
                      {b.original ? <Badge>SmartAccount</Badge> : <Badge tone="amber">upgraded</Badge>}
                    </span>,
                  ],
                  ["Managed accounts", String(b.accounts)],
                ]}
              />
              <UpgradeForm action={upgradeManagedAction.bind(null, { projectId: scope.project.id, mode: scope.mode, chainId: b.chainId })} chainId={b.chainId} />
              <details className="text-sm text-slate-600">
                <summary className="cursor-pointer">From the command line</summary>
                <CodeBlock code={`npm run cli -- accounts upgrade-managed --chain ${b.chainId} --implementation 0x… --project ${scope.project.id}`} />
              </details>
            </div>
          )}
        </Card>
      ))}
    </>
  );
}
