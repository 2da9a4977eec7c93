"use client";

import Link from "next/link";
import { usePathname, useRouter } from "next/navigation";
import { signOut } from "next-auth/react";

const SECTIONS = [
  ["", "Overview"],
  ["/keys", "API keys"],
  ["/players", "Players"],
  ["/sign-in", "Player sign-in"],
  ["/accounts", "Accounts"],
  ["/contracts", "Contracts"],
  ["/policies", "Policies"],
  ["/sponsorship", "Sponsorship"],
  ["/paymasters", "Paymasters"],
  ["/intents", "Transaction intents"],
  ["/reports", "Gas reports"],
  ["/webhooks", "Webhooks"],
  ["/subscriptions", "Subscriptions"],
  ["/events", "Events"],
  ["/logs", "Request log"],
  ["/team", "Team"],
] as const;

export function ProjectNav({ base }: { base: string }) {
  const pathname = usePathname();
  return (
    <nav aria-label="Sections" className="flex gap-1 overflow-x-auto md:flex-col md:overflow-visible">
      {SECTIONS.map(([suffix, label]) => {
        const href = base + suffix;
        const active = suffix === "" ? pathname === href : pathname === href || pathname.startsWith(href + "/");
        return (
          <Link
            key={href}
            href={href}
            aria-current={active ? "page" : undefined}
            className={`whitespace-nowrap rounded-md px-3 py-1.5 text-sm ${active ? "bg-indigo-50 font-medium text-indigo-700" : "text-slate-700 hover:bg-slate-100"}`}
          >
            {label}
          </Link>
        );
      })}
    </nav>
  );
}

/** Test and live data are separate; switching keeps the developer on the same section. */
export function ModeSwitch({ projectId, mode }: { projectId: string; mode: "test" | "live" }) {
  const pathname = usePathname();
  const prefix = `/projects/${projectId}/${mode}`;
  const section = pathname.startsWith(prefix) ? (pathname.slice(prefix.length).match(/^\/[^/]+/)?.[0] ?? "") : "";
  return (
    <div role="group" aria-label="Mode" className="inline-flex rounded-md border border-slate-300 bg-white p-0.5 text-xs font-medium">
      {(["test", "live"] as const).map((m) => (
        <Link
          key={m}
          href={`/projects/${projectId}/${m}${section}`}
          aria-pressed={m === mode}
          className={`rounded px-2.5 py-1 ${m === mode ? (m === "test" ? "bg-amber-100 text-amber-900" : "bg-emerald-100 text-emerald-900") : "text-slate-600 hover:bg-slate-100"}`}
        >
          {m === "test" ? "Test mode" : "Live mode"}
        </Link>
      ))}
    </div>
  );
}

export function ProjectSwitcher({ projects, current, mode }: { projects: { id: string; name: string }[]; current: string; mode: string }) {
  const router = useRouter();
  return (
    <select
      aria-label="Project"
      className="max-w-48 rounded-md border border-slate-300 bg-white px-2 py-1 text-sm"
      value={current}
      onChange={(e) => router.push(`/projects/${e.target.value}/${mode}`)}
    >
      {projects.map((p) => (
        <option key={p.id} value={p.id}>
          {p.name}
        </option>
      ))}
    </select>
  );
}

export function SignOutButton() {
  return (
    <button type="button" className="text-sm text-slate-600 hover:text-slate-900" onClick={() => signOut({ callbackUrl: "/login" })}>
      Sign out
    </button>
  );
}
