import type { DecodedCall } from "@/lib/intents/operation-calls";
import type { SigningInteraction } from "@/lib/signing/service";

const KIND_LABEL: Record<DecodedCall["kind"], string> = {
  deployment: "Account deployment",
  guardian: "New guardian",
  token_charge: "Gas paid in tokens",
  account: "Your account's settings",
  token: "Token",
  transfer: "Transfer",
  contract: "Contract call",
  unknown: "Unknown call",
};

function Raw({ label, children }: { label: string; children: string }) {
  return (
    <p className="mt-1 break-all font-mono text-xs text-slate-600">
      {label} {children}
    </p>
  );
}

function Call({ call }: { call: DecodedCall }) {
  const decoded = call.functionName !== null;
  return (
    <li data-testid="sign-call" data-kind={call.kind} className={`rounded-md border p-3 text-sm ${call.attention ? "border-amber-300 bg-amber-50" : "border-slate-200"}`}>
      <p className="text-xs font-semibold uppercase tracking-wide text-slate-500">{KIND_LABEL[call.kind]}</p>
      <p className="mt-1 font-medium">{call.summary}</p>
      <Raw label="to">{call.contract ? `${call.to} (${call.contract.name})` : call.to}</Raw>
      {call.functionName && <Raw label="function">{call.functionName}</Raw>}
      {call.args && <Raw label="arguments">{call.args}</Raw>}
      <p className="mt-1 text-xs text-slate-600">value {call.value}</p>
      {call.selector && <Raw label="selector">{call.selector}</Raw>}
      {/* Undecoded calls show their data outright; decoded ones keep it one click away, never hidden. */}
      {call.data !== "0x" &&
        (decoded ? (
          <details className="mt-1 text-xs text-slate-600">
            <summary className="cursor-pointer">Raw data</summary>
            <p className="mt-1 break-all font-mono">{call.data}</p>
          </details>
        ) : (
          <Raw label="data">{call.data}</Raw>
        ))}
    </li>
  );
}

/**
 * What the owner's signature authorizes: every step of the userOperation, read from the op
 * itself. The developer's declared interactions follow for comparison only.
 */
export function OperationCalls({ calls, interactions }: { calls: DecodedCall[]; interactions: SigningInteraction[] }) {
  return (
    <>
      <h3 className="mb-2 mt-6 text-sm font-semibold">What you sign ({calls.length === 1 ? "1 step" : `${calls.length} steps`})</h3>
      {calls.length === 0 ? (
        <p className="text-sm text-slate-600">The operation calls nothing.</p>
      ) : (
        <ol className="space-y-3" data-testid="sign-calls">
          {calls.map((call, i) => (
            <Call key={i} call={call} />
          ))}
        </ol>
      )}
      <details className="mt-4 text-sm" data-testid="sign-interactions">
        <summary className="cursor-pointer text-slate-600">As the developer described it ({interactions.length === 1 ? "1 interaction" : `${interactions.length} interactions`})</summary>
        <p className="mt-2 text-xs text-slate-500">For comparison only: the steps above, read from the operation itself, are what your signature authorizes.</p>
        <ul className="mt-2 space-y-1">
          {interactions.map((call, i) => (
            <li key={i} className="break-all font-mono text-xs text-slate-600">
              {call.functionName ?? (call.data ? "raw call" : "transfer")}
              {call.contract && ` on ${call.contract.name}`} to {call.to}
              {call.args && ` ${call.args}`} value {call.value}
            </li>
          ))}
        </ul>
      </details>
    </>
  );
}
