import Link from "next/link";
import { formatEther } from "viem";
import type { FormState } from "@/lib/dashboard/form-state";
import type { SessionItem } from "@/lib/dashboard/sessions";
import type { SessionStatus } from "@/lib/sessions/state";
import { Badge } from "./badge";
import { ActionForm, Select, SubmitButton } from "./form";
import { Pagination, Table } from "./table";
import { Time } from "./time";

const STATUS: Record<SessionStatus, { label: string; tone: "green" | "red" | "amber" | "blue" | "gray" }> = {
  awaiting_signature: { label: "awaiting signature", tone: "amber" },
  registering: { label: "registering", tone: "blue" },
  failed: { label: "registration failed", tone: "red" },
  not_yet_valid: { label: "not valid yet", tone: "blue" },
  active: { label: "active", tone: "green" },
  revoking: { label: "revoking", tone: "amber" },
  expired: { label: "expired", tone: "gray" },
  used_up: { label: "used up", tone: "gray" },
  revoked: { label: "revoked", tone: "gray" },
  unknown: { label: "chain unreachable", tone: "amber" },
};

const short = (address: string) => `${address.slice(0, 8)}…${address.slice(-6)}`;

/**
 * A player's or an account's session keys: window, uses left and status as the chain has them, the registration
 * intent, and a Revoke button running the API's revoke (paid by the chosen policy, or by the account).
 */
export function SessionsTable({
  sessions,
  total,
  skip,
  limit,
  pageHref,
  base,
  policies,
  revoke,
}: {
  sessions: SessionItem[];
  total: number;
  skip: number;
  limit: number;
  pageHref: (skip: number) => string;
  base: string;
  policies: { id: string; name: string; chainId: number }[];
  revoke: (state: FormState, form: FormData) => Promise<FormState>;
}) {
  if (total === 0) {
    return <p className="text-sm text-slate-500">No session keys. Register one with POST /v1/sessions (address, chainId, player, validAfter, validUntil).</p>;
  }
  return (
    <>
      <Table
        rows={sessions}
        rowKey={(s) => s.id}
        columns={[
          { header: "Key", cell: (s) => <code className="font-mono text-xs" title={s.address}>{short(s.address)}</code> },
          { header: "Status", cell: (s) => <Badge tone={STATUS[s.status].tone}>{STATUS[s.status].label}</Badge> },
          {
            header: "Window",
            cell: (s) => (
              <span className="text-xs">
                <Time seconds={s.validAfter} /> → <Time seconds={s.validUntil} />
              </span>
            ),
          },
          { header: "Uses left", cell: (s) => (s.limit === null ? "unlimited" : `${s.usesLeft} of ${s.limit}`) },
          {
            header: "Fees",
            cell: (s) =>
              s.maxFeePerOp === null ? (
                <span className="text-xs text-slate-500">no cap recorded</span>
              ) : s.maxFeePerOp === "0" ? (
                <span className="text-xs" title="The account's validation refuses the key's operations unless a paymaster pays">sponsored only</span>
              ) : (
                <span className="text-xs" title={`${s.maxFeePerOp} wei: the most one operation the key signs may make the account pay`}>
                  ≤ {formatEther(BigInt(s.maxFeePerOp))} per op
                </span>
              ),
          },
          {
            header: "Whitelist",
            cell: (s) =>
              s.whitelist.length === 0 ? (
                <span className="text-xs text-slate-500">any contract</span>
              ) : (
                <span className="flex flex-col font-mono text-xs">
                  {s.whitelist.map((a) => (
                    <span key={a} title={a}>
                      {short(a)}
                    </span>
                  ))}
                </span>
              ),
          },
          {
            header: "Registration",
            cell: (s) =>
              s.registrationIntentId ? (
                <Link href={`${base}/intents/${s.registrationIntentId}`} className="font-mono text-xs text-indigo-700 hover:underline">
                  {s.registrationIntentId.slice(0, 12)}…
                </Link>
              ) : null,
          },
          { header: "Chain", cell: (s) => s.chainId },
          {
            header: "",
            cell: (s) =>
              s.revocable ? (
                <ActionForm action={revoke} className="flex items-end gap-2">
                  <input type="hidden" name="address" value={s.address} />
                  <input type="hidden" name="chainId" value={s.chainId} />
                  <input type="hidden" name="player" value={s.playerId} />
                  {s.status !== "awaiting_signature" && (
                    <Select
                      label="Paid by"
                      name="policy"
                      options={[["", "the account"], ...policies.filter((p) => p.chainId === s.chainId).map((p): [string, string] => [p.id, p.name])]}
                      hint="a policy needs an account_functions rule"
                    />
                  )}
                  <SubmitButton variant="danger" confirm={`Revoke session key ${s.address}?`}>
                    Revoke
                  </SubmitButton>
                </ActionForm>
              ) : null,
          },
        ]}
      />
      <Pagination total={total} skip={skip} limit={limit} href={pageHref} />
    </>
  );
}
