import { ChainSelect } from "@/components/chain-select";
import { ActionForm, SubmitButton, TextArea, TextInput } from "@/components/form";
import { Card, PageHeader } from "@/components/page";
import { submitOperation } from "@/lib/dashboard/actions";
import { scopeOf, type ScopeParams } from "@/lib/dashboard/context";

export const metadata = { title: "Register a contract" };

export default async function NewContractPage({ params }: { params: ScopeParams }) {
  const scope = await scopeOf(params);
  const create = submitOperation.bind(null, { projectId: scope.project.id, mode: scope.mode, operationId: "createContract", redirectTo: "/contracts/{id}" });
  return (
    <>
      <PageHeader title="Register a contract" description="Paste the contract's ABI (the JSON array your compiler or block explorer gives): it is checked before it is stored." />
      <Card>
        <ActionForm action={create}>
          <div className="grid gap-4 sm:grid-cols-2">
            <TextInput label="Name" name="name" required placeholder="Game items" />
            <ChainSelect ctx={scope.ctx} />
          </div>
          <TextInput label="Address" name="address" required placeholder="0x…" className="block w-full rounded-md border border-slate-300 px-3 py-1.5 font-mono text-sm" />
          <input type="hidden" name="$json" value="abi" />
          <TextArea label="ABI" name="abi" required rows={10} placeholder='[{"type":"function","name":"mint","inputs":[{"name":"to","type":"address"}],"outputs":[],"stateMutability":"nonpayable"}]' />
          <SubmitButton>Register contract</SubmitButton>
        </ActionForm>
      </Card>
    </>
  );
}
