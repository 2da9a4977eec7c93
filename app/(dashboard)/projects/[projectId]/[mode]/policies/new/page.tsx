import { ChainSelect } from "@/components/chain-select";
import { ActionForm, SubmitButton, TextInput } from "@/components/form";
import { OutsideAccountsSelect, PaymasterSelect, StrategyFields } from "@/components/policy-fields";
import { Card, PageHeader } from "@/components/page";
import { submitOperation } from "@/lib/dashboard/actions";
import { scopeOf, type ScopeParams } from "@/lib/dashboard/context";
import { tokenContracts } from "@/lib/dashboard/contracts";
import { usablePaymasters } from "@/lib/dashboard/paymasters";

export const metadata = { title: "Create a policy" };

export default async function NewPolicyPage({ params }: { params: ScopeParams }) {
  const scope = await scopeOf(params);
  const create = submitOperation.bind(null, { projectId: scope.project.id, mode: scope.mode, operationId: "createPolicy", redirectTo: "/policies/{id}" });
  return (
    <>
      <PageHeader title="Create a policy" description="A new policy sponsors nothing until you add a rule to it, on the next page." />
      <Card>
        <ActionForm action={create}>
          <div className="grid gap-4 sm:grid-cols-2">
            <TextInput label="Name" name="name" required placeholder="Free mints" />
            <ChainSelect ctx={scope.ctx} />
          </div>
          <StrategyFields tokens={await tokenContracts(scope.ctx)} />
          <PaymasterSelect paymasters={await usablePaymasters(scope.ctx)} />
          <OutsideAccountsSelect />
          <SubmitButton>Create policy</SubmitButton>
        </ActionForm>
      </Card>
    </>
  );
}
