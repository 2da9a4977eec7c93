"use client";

import { useState } from "react";

export function CopyButton({ value, label = "Copy" }: { value: string; label?: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <button
      type="button"
      className="rounded border border-slate-300 bg-white px-2 py-0.5 text-xs text-slate-700 hover:bg-slate-50"
      onClick={async () => {
        await navigator.clipboard?.writeText(value).catch(() => {});
        setCopied(true);
        setTimeout(() => setCopied(false), 1500);
      }}
    >
      {copied ? "Copied" : label}
    </button>
  );
}

export function CodeBlock({ code }: { code: string }) {
  return (
    <div className="relative">
      <pre className="overflow-x-auto rounded-md bg-slate-900 p-3 pr-16 text-xs leading-relaxed text-slate-100">
        <code>{code}</code>
      </pre>
      <div className="absolute right-2 top-2">
        <CopyButton value={code} />
      </div>
    </div>
  );
}

/** A long value (address, hash, key) shortened for tables, in full on hover and when copied. */
export function Mono({ value, full = false }: { value: string; full?: boolean }) {
  const shown = full || value.length <= 20 ? value : `${value.slice(0, 10)}…${value.slice(-6)}`;
  return (
    <span className="inline-flex items-center gap-1 font-mono text-xs" title={value}>
      <span className="break-all">{shown}</span>
    </span>
  );
}
