import type { ReactNode } from "react";
import { Badge, intentState } from "@/components/badge";
import { Card, Definitions } from "@/components/page";
import { Time } from "@/components/time";
import { getDb } from "@/lib/db/client";
import { openSigningLink } from "@/lib/signing/service";
import { OperationCalls } from "./operation-calls";
import { SignPanel } from "./sign-panel";

// The token is the credential: keep it out of Referer headers and search engines.
export const metadata = { title: "Sign a transaction", referrer: "no-referrer", robots: { index: false, follow: false } };

function Shell({ title, children }: { title: string; children: ReactNode }) {
  return (
    <main className="mx-auto max-w-3xl px-4 py-10">
      <p className="mb-1 text-sm font-semibold text-indigo-700">Smart wallets</p>
      <h1 className="mb-6 text-2xl font-semibold tracking-tight">{title}</h1>
      {children}
    </main>
  );
}

/**
 * The signing page an account's owner opens from a link: no dashboard session, the link's token
 * names the intent. What will be executed, then the owner's wallet signs its userOperationHash.
 */
export default async function SignPage({ params, searchParams }: { params: Promise<{ id: string }>; searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const { id } = await params;
  const { t } = await searchParams;
  const token = typeof t === "string" ? t : undefined;
  const page = await openSigningLink(await getDb(), token, id);

  if (page.state === "invalid") {
    return (
      <Shell title="This signing link does not work">
        <Card>
          <p data-testid="sign-invalid" className="text-sm text-slate-700">
            {page.message}
          </p>
          <p className="mt-3 text-sm text-slate-500">Links are unguessable and expire; whoever sent you this one can send a fresh link while the transaction still awaits your signature.</p>
        </Card>
      </Shell>
    );
  }

  if (page.state === "not_awaiting") {
    const state = intentState(page.status);
    return (
      <Shell title="Nothing to sign">
        <Card>
          <p data-testid="sign-not-awaiting" className="text-sm text-slate-700">
            This transaction intent no longer awaits a signature.
          </p>
          <div className="mt-4">
            <Definitions
              items={[
                ["Intent", <span key="i" className="font-mono text-xs">{id}</span>],
                ["Status", <Badge key="s" tone={state.tone}>{state.label}</Badge>],
                ["Transaction", page.status.transactionHash ? <code key="t" className="break-all font-mono text-xs">{page.status.transactionHash}</code> : null],
                ["Error", page.status.error ? <span key="e" className="text-rose-700">{page.status.error}</span> : null],
              ]}
            />
          </div>
        </Card>
      </Shell>
    );
  }

  const { view } = page;
  return (
    <Shell title="Sign a transaction">
      <Card title="What will be executed">
        <Definitions
          items={[
            ["Chain", `${view.chainName} (${view.chainId})`],
            ["Smart account", <code key="a" className="break-all font-mono text-xs">{view.accountAddress}</code>],
            ["Owner (signs)", <code key="o" data-testid="sign-owner" className="break-all font-mono text-xs">{view.ownerAddress}</code>],
            ["Gas", view.policy ? `sponsored by the project (policy ${view.policy.name})` : "paid by the smart account"],
            ["Link expires", <Time key="x" seconds={view.expiresAt} />],
            ["userOperationHash", <code key="h" className="break-all font-mono text-xs">{view.userOperationHash}</code>],
          ]}
        />
        <OperationCalls calls={view.calls} interactions={view.interactions} />
      </Card>
      <Card title="Sign with your wallet">
        {view.authorization ? (
          // Browser wallets refuse to sign EIP-7702 delegations for web pages: said plainly, with what to sign elsewhere.
          <div className="space-y-2 text-sm" data-testid="sign-authorization">
            <p>
              This account is your own address ({view.ownerAddress}), and this first transaction also makes it a smart account (EIP-7702): your key must sign an
              authorization delegating it to {view.authorization.contractAddress} on chain {view.authorization.chainId} with nonce {view.authorization.nonce}.
            </p>
            <p>
              Browser wallets do not sign delegations for web pages. Sign it in the app that holds your key (for example an embedded wallet, with viem&apos;s
              signAuthorization) and send it with the signature of this operation. Once your address delegates, later transactions are signed here.
            </p>
          </div>
        ) : (
          <SignPanel
            intentId={view.intentId}
            token={token!}
            chain={{ id: view.chainId, name: view.chainName }}
            ownerAddress={view.ownerAddress}
            userOperationHash={view.userOperationHash}
            typedData={view.typedData}
          />
        )}
      </Card>
    </Shell>
  );
}
