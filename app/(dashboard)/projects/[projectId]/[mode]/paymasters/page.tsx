import { Badge } from "@/components/badge";
import { CodeBlock, Mono } from "@/components/code";
import { ActionButton } from "@/components/action-button";
import { ActionForm, SubmitButton, TextArea, TextInput } from "@/components/form";
import { Card, EmptyState, PageHeader } from "@/components/page";
import { DeletedToggle, Pagination, pageHref, Table } from "@/components/table";
import { Time } from "@/components/time";
import { submitOperation } from "@/lib/dashboard/actions";
import { scopeOf, type ScopeParams } from "@/lib/dashboard/context";
import { apiBase } from "@/lib/dashboard/examples";
import { deletedParams, pageParams } from "@/lib/dashboard/paging";
import { checkPaymaster } from "@/lib/dashboard/paymaster-check";
import { getDb } from "@/lib/db/client";
import { serializePaymaster } from "@/lib/paymasters/serializer";
import { chainsWithCode, listPaymasters } from "@/lib/paymasters/service";
import { activeKeys } from "@/lib/projects/service";
import { serviceDeployment } from "@/lib/chain/contracts";

export const metadata = { title: "Paymasters" };

/** A context as the table shows it: cut to its start, in full on hover. */
const ContextCell = ({ json }: { json: string }) => (
  <code className="font-mono text-xs" title={json}>
    {json.length > 32 ? `${json.slice(0, 30)}…` : json}
  </code>
);

export default async function PaymastersPage({ params, searchParams }: { params: ScopeParams; searchParams: Promise<Record<string, string | undefined>> }) {
  const scope = await scopeOf(params);
  const query = await searchParams;
  const page = pageParams(query);
  const deleted = deletedParams(query);
  const db = await getDb();
  const [listed, keys, base] = await Promise.all([listPaymasters(db, scope.ctx, { ...page, ...deleted.filter }), activeKeys(db, scope.ctx), apiBase()]);
  // Registered before its contract is deployed, a paymaster shows where its address has code (none yet: no policy can use it).
  const deployedOn = await Promise.all(listed.rows.map((p) => chainsWithCode(scope.ctx, p.address)));
  const list = { total: listed.total, data: listed.rows.map((p, i) => ({ ...serializePaymaster(p), deployedOn: deployedOn[i]! })) };
  const publishable = keys.find((k) => k.kind === "publishable")?.publishableKey;
  const ourUrl = publishable ? `${base}/v1/paymaster_service/${publishable}` : null;
  const target = { projectId: scope.project.id, mode: scope.mode };
  const create = submitOperation.bind(null, { ...target, operationId: "createPaymaster" });
  const remove = (id: string) => submitOperation.bind(null, { ...target, operationId: "deletePaymaster", params: { id } });
  return (
    <>
      <PageHeader
        title="Paymasters"
        description="ERC-7677 paymaster services a policy can sponsor through instead of this service's own paymaster. The policy's rules are checked first; the service then signs the sponsorship."
      />
      <Card title="This service's paymaster over ERC-7677">
        <div className="space-y-2 text-sm text-slate-700">
          <p>
            Our VerifyingPaymaster (<span data-testid="our-paymaster-address"><Mono value={serviceDeployment().paymaster} full /></span>) answers pm_getPaymasterStubData and pm_getPaymasterData at this URL. The context names the policy whose
            rules decide: <code className="font-mono text-xs">{'{"policy":"pol_…"}'}</code>.
          </p>
          {ourUrl ? (
            <div data-testid="our-paymaster-url">
              <CodeBlock code={ourUrl} />
            </div>
          ) : <p className="text-slate-500">Create a publishable key under API keys to get its URL.</p>}
        </div>
      </Card>
      <DeletedToggle href={`${scope.base}/paymasters`} shown={deleted.shown} noun="paymasters" />
      {list.total === 0 ? (
        <EmptyState title="No paymasters registered">
          <p>Register an ERC-7677 service below (before or after its paymaster contract is deployed: a policy can choose it once it has code on the policy&apos;s chain).</p>
        </EmptyState>
      ) : (
        <>
          <Table
            rows={list.data}
            rowKey={(p) => p.id}
            columns={[
              { header: "Name", cell: (p) => p.name ?? p.id },
              {
                header: "Address",
                cell: (p) => (
                  <div className="flex flex-col items-start gap-1">
                    <Mono value={p.address} />
                    {p.deployedOn.length > 0 ? (
                      <span className="text-xs text-slate-500">code on {p.deployedOn.join(", ")}</span>
                    ) : (
                      <Badge tone="amber">no code at this address yet</Badge>
                    )}
                  </div>
                ),
              },
              { header: "Service", cell: (p) => (p.url ? <Mono value={p.url} /> : <span className="text-slate-400">no url</span>) },
              { header: "Context", cell: (p) => (p.context ? <ContextCell json={JSON.stringify(p.context)} /> : "—") },
              { header: "State", cell: (p) => (p.deleted ? <Badge tone="red">deleted</Badge> : <Badge tone="green">active</Badge>) },
              { header: "Created", cell: (p) => <Time seconds={p.createdAt} /> },
              {
                header: "Actions",
                cell: (p) =>
                  p.deleted ? null : (
                    <div className="flex flex-wrap items-start gap-2">
                      {/* Asks the paymaster's service which EntryPoints it serves (pm_supportedEntryPoints), through the outbound rule. */}
                      {p.url && (
                        <ActionButton action={checkPaymaster.bind(null, scope.project.id, scope.mode, p.id)} label="Check" pendingLabel="Checking…" className="flex w-48 flex-col items-start gap-1 whitespace-normal" />
                      )}
                      <ActionForm action={remove(p.id)}>
                        <SubmitButton variant="danger" confirm={`Delete paymaster ${p.name ?? p.id}?`}>
                          Delete
                        </SubmitButton>
                      </ActionForm>
                    </div>
                  ),
              },
            ]}
          />
          <Pagination total={list.total} {...page} href={pageHref(`${scope.base}/paymasters`, query)} />
        </>
      )}
      <Card title="Register a paymaster">
        <ActionForm action={create}>
          <div className="grid gap-4 sm:grid-cols-2">
            <TextInput label="Name" name="name" placeholder="My paymaster" />
            <TextInput label="Address" name="address" required placeholder="0x…" className="block w-full rounded-md border border-slate-300 px-3 py-1.5 font-mono text-sm" />
          </div>
          <TextInput label="Service URL" name="url" placeholder={ourUrl ?? "https://…"} hint={scope.mode === "live" ? "Live mode: https to a public address only." : "Test mode: http://localhost works too."} />
          <input type="hidden" name="$json" value="context" />
          <TextArea label="Context (JSON object, sent with every pm_ call)" name="context" rows={3} placeholder='{"policy":"pol_…"}' />
          <SubmitButton>Register paymaster</SubmitButton>
        </ActionForm>
      </Card>
    </>
  );
}
