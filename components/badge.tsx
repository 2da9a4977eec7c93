import type { ReactNode } from "react";

const tones = {
  green: "bg-emerald-50 text-emerald-700 ring-emerald-600/20",
  red: "bg-rose-50 text-rose-700 ring-rose-600/20",
  amber: "bg-amber-50 text-amber-800 ring-amber-600/20",
  blue: "bg-sky-50 text-sky-700 ring-sky-600/20",
  gray: "bg-slate-100 text-slate-700 ring-slate-500/20",
} as const;

export function Badge({ tone = "gray", children }: { tone?: keyof typeof tones; children: ReactNode }) {
  return <span className={`inline-flex items-center rounded-full px-2 py-0.5 text-xs font-medium ring-1 ring-inset ${tones[tone]}`}>{children}</span>;
}

/**
 * An intent's state in words: pending → broadcast (on chain, waiting for its confirmations) →
 * successful / failed; or waiting for its owner's signature, or cancelled unsigned.
 */
export function intentState(intent: { status: string; confirmed: boolean }): { label: string; tone: keyof typeof tones } {
  switch (intent.status) {
    case "awaiting_signature":
      return { label: "awaiting signature", tone: "amber" };
    case "cancelled":
      return { label: "cancelled", tone: "gray" };
    case "successful":
      return intent.confirmed ? { label: "successful", tone: "green" } : { label: "broadcast", tone: "blue" };
    case "failed":
      return { label: "failed", tone: "red" };
    case "broadcast":
      return { label: "broadcast", tone: "blue" };
    default:
      return { label: "pending", tone: "gray" };
  }
}

export function PolicyState({ policy }: { policy: { deleted: boolean; enabled: boolean } }) {
  if (policy.deleted) return <Badge tone="red">deleted</Badge>;
  return policy.enabled ? <Badge tone="green">enabled</Badge> : <Badge tone="amber">disabled</Badge>;
}
