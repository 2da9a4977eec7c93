import { Badge } from "@/components/badge";
import { Mono } from "@/components/code";
import { ActionForm, SubmitButton } from "@/components/form";
import { Table } from "@/components/table";
import { removeProviderAction, setProviderEnabledAction, type Scope } from "@/lib/dashboard/player-signin";
import { fieldLabel, PROVIDER_LABELS, SECRET_FIELDS } from "@/lib/dashboard/provider-fields";
import { CONFIGURABLE_PROVIDERS, type ProviderName } from "@/lib/iam/providers/types";

type Config = { provider: ProviderName; enabled: boolean } & Record<string, string | number | boolean>;

interface Method {
  id: string;
  label: string;
  builtIn?: string;
  config?: Config;
}

/** Always available with the publishable key: nothing to configure. */
const BUILT_IN: Method[] = [
  { id: "email", label: "Email and password", builtIn: "POST /iam/v1/auth/signup and /auth/login with the publishable key; passwords hashed, wrong-password lockout." },
  { id: "wallet", label: "Sign-In with Ethereum", builtIn: "POST /iam/v1/siwe/init, then /siwe/authenticate with the wallet's EIP-4361 signature, from the domains allowed below." },
];

function State({ method }: { method: Method }) {
  if (method.builtIn) return <Badge tone="green">always on</Badge>;
  if (!method.config) return <Badge tone="gray">not configured</Badge>;
  return method.config.enabled ? <Badge tone="green">on</Badge> : <Badge tone="amber">off</Badge>;
}

/** A configuration's settings as the API shows them: secrets as their masked hint only. */
function Settings({ method }: { method: Method }) {
  if (method.builtIn) return <p className="max-w-md whitespace-normal text-xs text-slate-600">{method.builtIn}</p>;
  if (!method.config) return <span className="text-slate-400">—</span>;
  const entries = Object.entries(method.config).filter(([name]) => !["id", "object", "provider", "enabled"].includes(name));
  if (entries.length === 0) return <span className="text-xs text-slate-500">public defaults</span>;
  return (
    <dl className="grid max-w-lg grid-cols-[auto_1fr] gap-x-3 gap-y-0.5 text-xs" data-testid={`settings-${method.id}`}>
      {entries.map(([name, value]) => (
        <div key={name} className="contents">
          <dt className="text-slate-500">{fieldLabel(name)}</dt>
          <dd className="min-w-0 whitespace-normal break-all">
            {SECRET_FIELDS.has(name) ? (
              <span className="font-mono" title="Secret: only its last four characters are ever shown">
                {String(value)} <span className="text-slate-400">(secret)</span>
              </span>
            ) : (
              <Mono value={String(value)} full={String(value).length <= 60} />
            )}
          </dd>
        </div>
      ))}
    </dl>
  );
}

/** Every way a player can sign in, built-in or configurable, with each provider's state and its On / Off and Remove. */
export function SignInMethods({ target, configs }: { target: Scope; configs: Partial<Record<ProviderName, Config>> }) {
  const methods: Method[] = [...BUILT_IN, ...CONFIGURABLE_PROVIDERS.map((p) => ({ id: p, label: PROVIDER_LABELS[p], config: configs[p] }))];
  return (
    <Table
      rows={methods}
      rowKey={(m) => m.id}
      columns={[
        {
          header: "Method",
          cell: (m) => (
            <span className="flex flex-col">
              <span className="font-medium">{m.label}</span>
              <code className="text-xs text-slate-500">{m.id}</code>
            </span>
          ),
        },
        { header: "State", cell: (m) => <span data-testid={`state-${m.id}`}><State method={m} /></span> },
        { header: "Settings", cell: (m) => <Settings method={m} /> },
        {
          header: "",
          cell: (m) =>
            m.config ? (
              <div className="flex items-start gap-2" data-testid={`actions-${m.id}`}>
                <ActionForm action={setProviderEnabledAction.bind(null, target, m.id, !m.config.enabled)} className="space-y-1">
                  <SubmitButton variant="secondary">{m.config.enabled ? "Turn off" : "Turn on"}</SubmitButton>
                </ActionForm>
                <ActionForm action={removeProviderAction.bind(null, target, m.id)} className="space-y-1">
                  <SubmitButton variant="danger" confirm={`Remove the ${m.label} configuration? Its players keep their identities, but cannot sign in with ${m.label} until it is configured again.`}>
                    Remove
                  </SubmitButton>
                </ActionForm>
              </div>
            ) : null,
        },
      ]}
    />
  );
}
