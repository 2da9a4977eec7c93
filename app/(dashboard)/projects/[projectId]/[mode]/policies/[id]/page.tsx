import { PolicyState } from "@/components/badge";
import { ActionForm, SubmitButton, TextInput } from "@/components/form";
import { RecentIntents } from "@/components/intent-list";
import { ButtonLink, Card, Definitions, PageHeader } from "@/components/page";
import { OutsideAccountsSelect, PaymasterSelect, StrategyFields } from "@/components/policy-fields";
import { RuleEditor } from "@/components/rule-editor";
import { BudgetSubjectForm, BudgetTable } from "@/components/sponsorship-budgets";
import { DryRunForm, type DryRunRule } from "@/components/sponsorship-dry-run";
import { Time } from "@/components/time";
import { findChain } from "@/lib/chain/registry";
import { submitOperation, type FormOperationId } from "@/lib/dashboard/actions";
import { chainLabel } from "@/lib/dashboard/chains";
import { projectScope } from "@/lib/dashboard/context";
import { readOperation } from "@/lib/dashboard/operations";
import { isToken, projectContracts } from "@/lib/dashboard/contracts";
import { usablePaymasters } from "@/lib/dashboard/paymasters";
import { budgetRows, budgetSubject } from "@/lib/dashboard/sponsorship";
import { evaluatePolicyAction } from "@/lib/dashboard/sponsorship-actions";
import { getDb } from "@/lib/db/client";
import { listIntents } from "@/lib/intents/service";
import { searchPlayers } from "@/lib/players/service";
import { getPolicy, listPolicyRules } from "@/lib/policies/operations";
import { describeRule, SPONSOR_SCHEMA_WORDS } from "@/lib/policies/purposes";

export const metadata = { title: "Policy" };

export default async function PolicyPage({
  params,
  searchParams,
}: {
  params: Promise<{ projectId: string; mode: string; id: string }>;
  searchParams: Promise<Record<string, string | undefined>>;
}) {
  const { projectId, mode, id } = await params;
  const subject = budgetSubject(await searchParams);
  const scope = await projectScope(projectId, mode);
  const policy = await readOperation(scope.ctx, getPolicy, {}, { id });
  const [rules, contracts, intents, paymasters, budgets, players] = await Promise.all([
    readOperation(scope.ctx, listPolicyRules, { policy: policy.id, limit: 100, order: "asc", expand: ["contract"] }),
    projectContracts(scope.ctx, policy.chainId),
    listIntents(await getDb(), scope.ctx, { policy: [policy.id], limit: 10, skip: 0 }),
    usablePaymasters(scope.ctx),
    budgetRows(await getDb(), scope.ctx, { policy: policy.id, ...subject }),
    searchPlayers(await getDb(), scope.ctx, { limit: 100, skip: 0 }),
  ]);
  const symbol = findChain(policy.chainId)?.nativeCurrency.symbol ?? "ETH";
  const target = { projectId: scope.project.id, mode: scope.mode, params: { id: policy.id } };
  const toggle = submitOperation.bind(null, { ...target, operationId: policy.enabled ? "disablePolicy" : "enablePolicy" });
  const update = submitOperation.bind(null, { ...target, operationId: "updatePolicy" });
  const remove = submitOperation.bind(null, { ...target, operationId: "deletePolicy", redirectTo: "/policies" });
  const addRule = submitOperation.bind(null, { projectId: scope.project.id, mode: scope.mode, operationId: "createPolicyRule" });
  const evaluate = evaluatePolicyAction.bind(null, { projectId: scope.project.id, mode: scope.mode, policyId: policy.id });
  // The dry run's checks name rules by id: each in words, with the unit of what remains of it.
  const dryRunRules = Object.fromEntries(
    rules.data.map((r): [string, DryRunRule] => [r.id, { words: describeRule(r, symbol), unit: r.type === "budget" && r.currency === "usd" ? "usd" : r.functionName === "count_per_interval" ? "count" : "wei" }]),
  );
  const rule = (ruleId: string, operationId: FormOperationId) => submitOperation.bind(null, { projectId: scope.project.id, mode: scope.mode, operationId, params: { id: ruleId } });
  return (
    <>
      <PageHeader
        title={policy.name}
        description={policy.id}
        actions={
          <>
            <ButtonLink variant="secondary" href={`${scope.base}/reports?policy=${policy.id}`}>
              Gas report
            </ButtonLink>
            {!policy.deleted && (
              <ActionForm action={toggle}>
                <SubmitButton variant={policy.enabled ? "secondary" : "primary"} confirm={policy.enabled ? "Disable this policy? Intents naming it are refused until it is enabled again." : undefined}>
                  {policy.enabled ? "Disable" : "Enable"}
                </SubmitButton>
              </ActionForm>
            )}
          </>
        }
      />
      <Card title="Details">
        <Definitions
          items={[
            ["State", <PolicyState key="s" policy={policy} />],
            ["Chain", chainLabel(policy.chainId)],
            ["Gas", SPONSOR_SCHEMA_WORDS[policy.strategy.sponsorSchema]],
            ...(policy.strategy.tokenContract
              ? ([
                  ["Token", <span key="t" className="font-mono text-xs">{policy.strategy.tokenContract}</span>],
                  ["Token amount", `${policy.strategy.tokenContractAmount} base units ${policy.strategy.sponsorSchema === "fixed_rate" ? "per transaction" : `per ${symbol}`}`],
                ] as [string, React.ReactNode][])
              : []),
            [
              "Paymaster",
              policy.paymaster ? (
                <a key="p" className="font-mono text-xs text-indigo-700 hover:underline" href={`${scope.base}/paymasters`}>
                  {policy.paymaster.id}
                </a>
              ) : (
                "This service's paymaster"
              ),
            ],
            ["ERC-7677 senders", policy.sponsorOutsideAccounts ? "Also outside accounts" : "Only this project's accounts"],
            ["Created", <Time key="c" seconds={policy.createdAt} />],
          ]}
        />
      </Card>
      <Card title={`Rules (${rules.total})`}>
        {rules.total === 0 ? (
          <p className="mb-4 rounded-md bg-amber-50 px-3 py-2 text-sm text-amber-900">This policy has no rules, so it sponsors nothing yet. Add a rule below saying which calls it pays for.</p>
        ) : (
          <ul className="mb-4 divide-y divide-slate-100">
            {rules.data.map((r) => (
              <li key={r.id} className="py-3">
                <div className="flex flex-wrap items-center gap-3">
                  <span className="text-sm">{describeRule(r, symbol)}</span>
                  <code className="text-xs text-slate-500">{r.type}</code>
                  {!policy.deleted && (
                    <ActionForm action={rule(r.id, "deletePolicyRule")} className="ml-auto">
                      <SubmitButton variant="secondary" confirm="Delete this rule?">
                        Delete rule
                      </SubmitButton>
                    </ActionForm>
                  )}
                </div>
                {!policy.deleted && (
                  <details className="mt-2">
                    <summary className="cursor-pointer text-xs text-indigo-700">Edit</summary>
                    <div className="mt-2 rounded-md border border-slate-200 p-3">
                      <RuleEditor action={rule(r.id, "updatePolicyRule")} contracts={contracts} rule={r} submitLabel="Save rule" symbol={symbol} />
                    </div>
                  </details>
                )}
              </li>
            ))}
          </ul>
        )}
        {!policy.deleted && (
          <div className="border-t border-slate-100 pt-4">
            <h3 className="mb-3 text-sm font-semibold">Add a rule</h3>
            <RuleEditor action={addRule} contracts={contracts} submitLabel="Add rule" fields={{ policy: policy.id }} symbol={symbol} />
          </div>
        )}
      </Card>
      {budgets.length > 0 && (
        <Card title="Budgets" actions={<a className="text-sm text-indigo-700 hover:underline" href={`${scope.base}/sponsorship`}>All budgets and the ledger</a>}>
          {budgets.some((r) => r.scope === "player" || r.scope === "account") && <BudgetSubjectForm player={subject.player} account={subject.account} />}
          <BudgetTable rows={budgets} base={scope.base} showPolicy={false} />
        </Card>
      )}
      {!policy.deleted && (
        <Card title="Dry run">
          <p className="mb-4 text-sm text-slate-600">
            Would this policy sponsor a transaction? Each check is evaluated as for a real intent (its calls resolved, its most cost estimated), but nothing is signed, held or recorded.
          </p>
          <DryRunForm
            action={evaluate}
            chainId={policy.chainId}
            symbol={symbol}
            contracts={contracts}
            players={players.rows.map((p) => ({ id: p.id, name: p.name || p.id }))}
            rules={dryRunRules}
            asksWebhooks={rules.data.some((r) => r.type === "approval_webhook")}
          />
        </Card>
      )}
      <Card title="Recent transaction intents" actions={<a className="text-sm text-indigo-700 hover:underline" href={`${scope.base}/intents?policy=${policy.id}`}>All of this policy&apos;s intents</a>}>
        <RecentIntents intents={intents.rows} base={scope.base} />
      </Card>
      {!policy.deleted && (
        <>
          <Card title="Edit">
            <ActionForm action={update}>
              <TextInput label="Name" name="name" required defaultValue={policy.name} />
              <StrategyFields tokens={contracts.filter(isToken)} defaults={policy.strategy} />
              <PaymasterSelect paymasters={paymasters} defaultValue={policy.paymaster?.id} />
              <OutsideAccountsSelect defaultValue={policy.sponsorOutsideAccounts} />
              <SubmitButton>Save policy</SubmitButton>
            </ActionForm>
          </Card>
          <Card title="Danger zone">
            <ActionForm action={remove}>
              <p className="text-sm text-slate-600">A deleted policy sponsors nothing; its intents and gas reports stay.</p>
              <SubmitButton variant="danger" confirm={`Delete policy ${policy.name}?`}>
                Delete policy
              </SubmitButton>
            </ActionForm>
          </Card>
        </>
      )}
    </>
  );
}
