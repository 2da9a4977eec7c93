import { CopyButton } from "@/components/code";
import { Card, PageHeader } from "@/components/page";
import { Time } from "@/components/time";
import { scopeOf, type ScopeParams } from "@/lib/dashboard/context";
import { getDb } from "@/lib/db/client";
import { unixSeconds } from "@/lib/http/resource";
import { activeKeys } from "@/lib/projects/service";
import { KeyActions, RevokeKey } from "./roll";

export const metadata = { title: "API keys" };

export default async function KeysPage({ params }: { params: ScopeParams }) {
  const scope = await scopeOf(params);
  const keys = await activeKeys(await getDb(), scope.ctx);
  return (
    <>
      <PageHeader
        title="API keys"
        description="The publishable key is safe in your game's client. The secret key is for your servers only: it was shown once, when it was made; roll the keys if it is lost or leaked."
      />
      <Card title={`${scope.mode === "test" ? "Test" : "Live"} keys`}>
        <ul className="divide-y divide-slate-100">
          {keys.map((k) => (
            <li key={k.id} className="flex flex-col gap-1 py-3 sm:flex-row sm:items-center sm:gap-4">
              <span className="w-28 text-sm font-medium capitalize">{k.kind}</span>
              <code data-testid={`${k.kind}-key`} className="break-all font-mono text-xs">{k.publishableKey ?? k.hint}</code>
              {k.publishableKey ? <CopyButton value={k.publishableKey} /> : <RevokeKey projectId={scope.project.id} mode={scope.mode} keyId={k.id} hint={k.hint} />}
              <span className="text-xs text-slate-500 sm:ml-auto">
                created <Time seconds={unixSeconds(k.createdAt)} />
              </span>
            </li>
          ))}
        </ul>
      </Card>
      <Card title="New keys">
        <p className="mb-3 text-sm text-slate-600">
          Create another secret key to move your servers over one at a time, then revoke the old one. Rolling issues a new publishable and secret key for {scope.mode} mode and
          revokes all current ones immediately.
        </p>
        <KeyActions projectId={scope.project.id} mode={scope.mode} />
      </Card>
    </>
  );
}
