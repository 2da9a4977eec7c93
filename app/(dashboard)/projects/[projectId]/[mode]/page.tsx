import Link from "next/link";
import type { z } from "zod";
import { CodeBlock } from "@/components/code";
import { Card, PageHeader } from "@/components/page";
import { listContracts } from "@/lib/contracts/operations";
import { scopeOf, type ScopeParams } from "@/lib/dashboard/context";
import { apiBase, exampleKey } from "@/lib/dashboard/examples";
import { readOperation } from "@/lib/dashboard/operations";
import type { Operation } from "@/lib/http/operation";
import { listIntents } from "@/lib/intents/operations";
import { listPlayers } from "@/lib/players/operations";
import { listPolicies } from "@/lib/policies/operations";

/** A list operation, as far as the overview counts its resources. */
type Listed = Operation<z.ZodType, { total: number }>;

export default async function Overview({ params }: { params: ScopeParams }) {
  const scope = await scopeOf(params);
  const count = async (operation: Listed) => (await readOperation(scope.ctx, operation, { limit: 1 })).total;
  const [players, contracts, policies, intents] = await Promise.all([listPlayers, listContracts, listPolicies, listIntents].map(count));
  const [base, key] = await Promise.all([apiBase(), exampleKey(scope.ctx)]);
  const steps = [
    { done: players! > 0, title: "Create a player", href: "/players", code: `curl ${base}/v1/players -u ${key}: -d name=Alice` },
    { done: contracts! > 0, title: "Register a contract", href: "/contracts", code: `curl ${base}/v1/contracts -u ${key}: -d name=Game -d chainId=31337 -d address=0x…` },
    { done: policies! > 0, title: "Sponsor gas with a policy and a rule", href: "/policies", code: `curl ${base}/v1/policies -u ${key}: -d name=Starter -d chainId=31337 -d "strategy[sponsorSchema]=pay_for_user"` },
    { done: intents! > 0, title: "Send a transaction intent", href: "/intents", code: `curl ${base}/v1/transaction_intents -u ${key}: -d player=pla_… -d chainId=31337 -d policy=pol_… -d "interactions[0][contract]=con_…" -d "interactions[0][functionName]=mint" -d "interactions[0][functionArgs][0]=pla_…"` },
  ];
  const stats: [string, number, string][] = [
    ["Players", players!, "/players"],
    ["Contracts", contracts!, "/contracts"],
    ["Policies", policies!, "/policies"],
    ["Transaction intents", intents!, "/intents"],
  ];
  return (
    <>
      <PageHeader title={scope.project.name} description={`${scope.project.organizationName} · project ${scope.project.id} · ${scope.mode} mode`} />
      <div className="mb-6 grid grid-cols-2 gap-3 lg:grid-cols-4">
        {stats.map(([label, value, href]) => (
          <Link key={label} href={scope.base + href} className="rounded-lg border border-slate-200 bg-white p-4 shadow-sm hover:border-indigo-300">
            <p className="text-xs font-medium uppercase tracking-wide text-slate-500">{label}</p>
            <p className="mt-1 text-2xl font-semibold">{value}</p>
          </Link>
        ))}
      </div>
      <Card title="Get started">
        <ol className="space-y-5">
          {steps.map((s, i) => (
            <li key={s.title}>
              <p className="mb-2 text-sm font-medium">
                <span className={`mr-2 inline-flex h-5 w-5 items-center justify-center rounded-full text-xs ${s.done ? "bg-emerald-100 text-emerald-800" : "bg-slate-200"}`}>{s.done ? "✓" : i + 1}</span>
                <Link href={scope.base + s.href} className="hover:underline">{s.title}</Link>
              </p>
              <CodeBlock code={s.code} />
            </li>
          ))}
        </ol>
      </Card>
    </>
  );
}
