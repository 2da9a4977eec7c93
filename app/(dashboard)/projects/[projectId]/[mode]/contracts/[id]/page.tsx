import { Badge } from "@/components/badge";
import { CopyButton } from "@/components/code";
import { ActionForm, SubmitButton } from "@/components/form";
import { Card, Definitions, PageHeader } from "@/components/page";
import { Time } from "@/components/time";
import { getContract } from "@/lib/contracts/operations";
import { submitOperation } from "@/lib/dashboard/actions";
import { chainLabel } from "@/lib/dashboard/chains";
import { formFunction, functionSignature, type AbiEntry } from "@/lib/dashboard/contracts";
import { projectScope } from "@/lib/dashboard/context";
import { readOperation } from "@/lib/dashboard/operations";
import { ReadContractForm } from "./read-form";

export const metadata = { title: "Contract" };

export default async function ContractPage({ params }: { params: Promise<{ projectId: string; mode: string; id: string }> }) {
  const { projectId, mode, id } = await params;
  const scope = await projectScope(projectId, mode);
  const contract = await readOperation(scope.ctx, getContract, {}, { id });
  const functions = (contract.abi as AbiEntry[]).filter((e) => e.type === "function");
  const views = functions.filter((f) => f.stateMutability === "view" || f.stateMutability === "pure").map(formFunction);
  const target = { projectId: scope.project.id, mode: scope.mode, params: { id: contract.id } };
  const read = submitOperation.bind(null, { ...target, operationId: "readContract" });
  const remove = submitOperation.bind(null, { ...target, operationId: "deleteContract", redirectTo: "/contracts" });
  return (
    <>
      <PageHeader title={contract.name ?? contract.id} description={contract.id} />
      <Card title="Details">
        <Definitions
          items={[
            ["Address", <span key="a" className="inline-flex flex-wrap items-center gap-2"><code className="break-all font-mono text-xs">{contract.address}</code><CopyButton value={contract.address} /></span>],
            ["Chain", chainLabel(contract.chainId)],
            ["State", contract.deleted ? <Badge key="s" tone="red">deleted</Badge> : <Badge key="s" tone="green">active</Badge>],
            ["Created", <Time key="t" seconds={contract.createdAt} />],
          ]}
        />
      </Card>
      <Card title="Read a view function">
        {views.length === 0 ? <p className="text-sm text-slate-500">The ABI has no view or pure functions.</p> : <ReadContractForm action={read} functions={views} />}
      </Card>
      <Card title={`Functions (${functions.length})`}>
        <ul className="space-y-1 font-mono text-xs">
          {functions.map((f) => (
            <li key={functionSignature(f)} className="flex flex-wrap gap-2">
              <span className="break-all">{functionSignature(f)}</span>
              <span className="text-slate-500">{f.stateMutability}</span>
            </li>
          ))}
        </ul>
      </Card>
      {!contract.deleted && (
        <Card title="Danger zone">
          <ActionForm action={remove}>
            <p className="text-sm text-slate-600">Deleting hides the contract: new intents cannot call it; past intents keep their record.</p>
            <SubmitButton variant="danger" confirm={`Delete contract ${contract.name ?? contract.id}?`}>
              Delete contract
            </SubmitButton>
          </ActionForm>
        </Card>
      )}
    </>
  );
}
