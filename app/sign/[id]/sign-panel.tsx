"use client";

import { QueryClient, QueryClientProvider, useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { isAddressEqual, type Address, type Hex } from "viem";
import { createConfig, createStorage, custom, injected, noopStorage, useConnect, useConnection, useConnectors, useDisconnect, useSignMessage, useSignTypedData, WagmiProvider } from "wagmi";
import { Badge, intentState } from "@/components/badge";
import { buttonClass } from "@/components/page";
import type { SigningStatus } from "@/lib/signing/service";

interface SignPanelProps {
  intentId: string;
  token: string;
  chain: { id: number; name: string };
  ownerAddress: string;
  userOperationHash: Hex;
  /** EntryPoint v0.8: the op's EIP-712 typed data, signed with eth_signTypedData_v4 (its digest is the userOperationHash). */
  typedData?: Record<string, unknown>;
}

/**
 * The browser wallet: wagmi with the injected connector (and the wallets that announce
 * themselves, EIP-6963). The page only asks for a personal_sign, so no RPC is ever needed here:
 * the chain's node URL (which may hold a provider's key) never reaches the browser.
 */
function walletConfig(chain: SignPanelProps["chain"]) {
  const noRpc = custom({
    request: async () => {
      throw new Error("The signing page reads nothing from the chain.");
    },
  });
  return createConfig({
    chains: [{ id: chain.id, name: chain.name, nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 }, rpcUrls: { default: { http: [] } } }],
    connectors: [injected()],
    transports: { [chain.id]: noRpc },
    // Nothing remembered between visits: the link is used once. (A no-op storage rather than
    // none: with ssr, wagmi rehydrates its store on mount.)
    storage: createStorage({ storage: noopStorage }),
    ssr: true,
  });
}

export function SignPanel(props: SignPanelProps) {
  const [config] = useState(() => walletConfig(props.chain));
  const [queryClient] = useState(() => new QueryClient({ defaultOptions: { queries: { retry: 2, refetchOnWindowFocus: false } } }));
  return (
    <WagmiProvider config={config} reconnectOnMount={false}>
      <QueryClientProvider client={queryClient}>
        <Signer {...props} />
      </QueryClientProvider>
    </WagmiProvider>
  );
}

/** The API's JSON error envelope, or a generic message. */
async function errorMessage(res: Response): Promise<string> {
  const body = (await res.json().catch(() => null)) as { error?: { message?: string } } | null;
  return body?.error?.message ?? `The service answered ${res.status}.`;
}

function walletError(err: unknown): string {
  const e = err as { shortMessage?: string; message?: string; name?: string };
  if (e?.name === "ProviderNotFoundError") return "No browser wallet found. Install one (or open this page in your wallet's browser) and try again.";
  if (e?.name === "UserRejectedRequestError") return "The request was rejected in the wallet.";
  return e?.shortMessage ?? e?.message ?? "The wallet could not complete the request.";
}

/** The typed data as JSON carries uint256 fields as decimal strings: the wallet call wants numbers. */
function typedDataForWallet(typed: Record<string, unknown>) {
  const message = typed.message as Record<string, unknown>;
  return { ...typed, message: { ...message, nonce: BigInt(message.nonce as string), preVerificationGas: BigInt(message.preVerificationGas as string) } };
}

function Signer({ intentId, token, ownerAddress, userOperationHash, typedData }: SignPanelProps) {
  const connection = useConnection();
  const connectors = useConnectors();
  const connect = useConnect();
  const disconnect = useDisconnect();
  const sign = useSignMessage();
  const signTyped = useSignTypedData();
  const [submitting, setSubmitting] = useState(false);
  const [submitted, setSubmitted] = useState<SigningStatus | null>(null);
  const [problem, setProblem] = useState<string | null>(null);

  const status = useQuery({
    queryKey: ["signing-status", intentId],
    queryFn: async (): Promise<SigningStatus> => {
      const res = await fetch(`/sign/${encodeURIComponent(intentId)}/status?t=${encodeURIComponent(token)}`, { cache: "no-store" });
      if (!res.ok) throw new Error(await errorMessage(res));
      return res.json();
    },
    enabled: submitted !== null,
    initialData: submitted ?? undefined,
    refetchInterval: (query) => (query.state.data?.final ? false : 1000),
  });

  const address = connection.address;
  const isOwner = address !== undefined && isAddressEqual(address, ownerAddress as Address);

  async function signAndSubmit() {
    setProblem(null);
    setSubmitting(true);
    try {
      let signature: Hex;
      try {
        // v0.8 accounts check a raw signature of the hash: the typed data's signature is exactly that.
        signature = typedData
          ? await signTyped.mutateAsync(typedDataForWallet(typedData) as unknown as Parameters<typeof signTyped.mutateAsync>[0])
          : await sign.mutateAsync({ message: { raw: userOperationHash } });
      } catch (err) {
        setProblem(walletError(err));
        return;
      }
      const res = await fetch(`/sign/${encodeURIComponent(intentId)}/signature`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ token, signature }),
      });
      if (!res.ok) {
        setProblem(await errorMessage(res));
        return;
      }
      setSubmitted((await res.json()) as SigningStatus);
    } catch {
      setProblem("Could not reach the service: check your connection and try again.");
    } finally {
      setSubmitting(false);
    }
  }

  if (submitted) {
    const current = status.data ?? submitted;
    const state = intentState(current);
    return (
      <div className="space-y-3 text-sm">
        <p>Signed and sent. This page follows the transaction until it is final.</p>
        <p className="flex items-center gap-2">
          Status{" "}
          <span data-testid="sign-status">
            <Badge tone={state.tone}>{state.label}</Badge>
          </span>
          {!current.final && <span className="text-xs text-slate-500">updating live</span>}
        </p>
        {current.transactionHash && (
          <p>
            Transaction <code data-testid="sign-transaction" className="break-all font-mono text-xs">{current.transactionHash}</code>
          </p>
        )}
        {current.error && <p className="text-rose-700">{current.error}</p>}
        {status.error && <p className="text-amber-700">{status.error.message}</p>}
      </div>
    );
  }

  return (
    <div className="space-y-4 text-sm">
      {connection.status !== "connected" ? (
        <div className="flex flex-wrap gap-2">
          {connectors.map((connector) => (
            <button
              key={connector.uid}
              type="button"
              className={buttonClass()}
              disabled={connect.isPending}
              onClick={() => {
                setProblem(null);
                connect.mutate({ connector }, { onError: (err) => setProblem(walletError(err)) });
              }}
            >
              {connector.type === "injected" && connector.id === "injected" ? "Connect wallet" : `Connect ${connector.name}`}
            </button>
          ))}
        </div>
      ) : (
        <>
          <p className="flex flex-wrap items-center gap-2">
            Connected: <code data-testid="sign-connected" className="break-all font-mono text-xs">{address}</code>
            <button type="button" className={buttonClass("secondary")} onClick={() => disconnect.mutate()}>
              Disconnect
            </button>
          </p>
          {isOwner ? (
            <button type="button" className={buttonClass()} disabled={submitting} onClick={signAndSubmit}>
              {submitting ? "Signing…" : "Sign and send"}
            </button>
          ) : (
            <p role="alert" data-testid="sign-wrong-wallet" className="rounded-md bg-amber-50 p-3 text-amber-800">
              This wallet ({address}) is not the owner of this account. Switch your wallet to the owner, {ownerAddress}, to sign.
            </p>
          )}
        </>
      )}
      {problem && (
        <p role="alert" data-testid="sign-problem" className="rounded-md bg-rose-50 p-3 text-rose-700">
          {problem}
        </p>
      )}
    </div>
  );
}
