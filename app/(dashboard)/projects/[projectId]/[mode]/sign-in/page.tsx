import { Badge } from "@/components/badge";
import { CodeBlock, CopyButton } from "@/components/code";
import { Card, Definitions, ErrorMessage, PageHeader } from "@/components/page";
import { scopeOf, type ScopeParams } from "@/lib/dashboard/context";
import { apiBase } from "@/lib/dashboard/examples";
import { readOperation } from "@/lib/dashboard/operations";
import { configureProviderAction, configureSiweAction, rotateSigningKeyAction } from "@/lib/dashboard/player-signin";
import type { ProviderFields } from "@/lib/dashboard/provider-fields";
import { getDb } from "@/lib/db/client";
import { publicBaseUrl } from "@/lib/http/public-url";
import { callbackPath } from "@/lib/iam/google-signin";
import { configInput } from "@/lib/iam/provider-config";
import { listOAuthConfig } from "@/lib/iam/provider-operations";
import { getSiweSettingsOperation } from "@/lib/iam/siwe-operations";
import { CONFIGURABLE_PROVIDERS, type ProviderName } from "@/lib/iam/providers/types";
import { PLAYER_TOKEN_TTL_SECONDS, playerTokenIssuer, tokenJwks } from "@/lib/iam/tokens";
import { activeKeys } from "@/lib/projects/service";
import { SignInMethods } from "./methods";
import { SignedInPlayers } from "./players";
import { ProviderForm } from "./provider-form";
import { RotateKeyForm } from "./rotate-key";
import { SiweSettingsForm } from "./siwe-form";

export const metadata = { title: "Player sign-in" };

/** The fields each provider takes, read from the API's own configuration schema. */
const PROVIDER_FIELDS = Object.fromEntries(
  configInput.options.map((schema) => [schema.shape.provider.value, Object.keys(schema.shape).filter((f) => f !== "provider" && f !== "enabled")]),
) as ProviderFields;

/** 3600 → "1 hour"; anything else in the largest unit that divides it. */
function duration(seconds: number): string {
  for (const [unit, size] of [["day", 86_400], ["hour", 3600], ["minute", 60]] as const) {
    if (seconds % size === 0) return `${seconds / size} ${unit}${seconds === size ? "" : "s"}`;
  }
  return `${seconds} seconds`;
}

export default async function PlayerSignInPage({ params, searchParams }: { params: ScopeParams; searchParams: Promise<Record<string, string | undefined>> }) {
  const scope = await scopeOf(params);
  const query = await searchParams;
  const db = await getDb();
  const [keys, jwks, configs, base, siwe] = await Promise.all([
    activeKeys(db, scope.ctx),
    tokenJwks(db, scope.ctx),
    readOperation(scope.ctx, listOAuthConfig),
    apiBase(),
    readOperation(scope.ctx, getSiweSettingsOperation),
  ]);
  const publishableKey = keys.find((k) => k.kind === "publishable")?.publishableKey;
  const jwksUrl = publishableKey ? `${base}/iam/v1/${publishableKey}/jwks.json` : null;
  const target = { projectId: scope.project.id, mode: scope.mode };
  const byProvider = Object.fromEntries(configs.data.map((c) => [c.provider, c])) as Partial<Record<ProviderName, (typeof configs.data)[number]>>;
  // As signin_url makes it (PUBLIC_URL, or the listening address in production); "set PUBLIC_URL" when it has none.
  const googleCallbackUrl = publicBaseUrl(base) ? `${publicBaseUrl(base)}${callbackPath}` : `<PUBLIC_URL>${callbackPath} (set PUBLIC_URL on the server)`;

  return (
    <>
      <PageHeader
        title="Player sign-in"
        description={
          <>
            How your game&apos;s players sign in, in {scope.mode} mode. Every sign-in (sign-up, login, a provider&apos;s token, Sign-In with Ethereum) answers a player token: a
            short-lived JWT your game sends to your backend, which verifies it offline with the keys below.
          </>
        }
      />
      <Card title="Player tokens">
        <div className="space-y-4">
          <Definitions
            items={[
              [
                "JWKS URL",
                jwksUrl ? (
                  <span className="flex flex-wrap items-center gap-2">
                    <code className="break-all font-mono text-xs" data-testid="jwks-url">
                      {jwksUrl}
                    </code>
                    <CopyButton value={jwksUrl} />
                  </span>
                ) : (
                  <ErrorMessage>This mode has no publishable key: roll the keys (API keys).</ErrorMessage>
                ),
              ],
              ["Issuer (iss)", <code key="iss" className="font-mono text-xs">{playerTokenIssuer()}</code>],
              ["Audience (aud)", <code key="aud" className="font-mono text-xs">{scope.project.id}</code>],
              ["Lifetime", `${duration(PLAYER_TOKEN_TTL_SECONDS)} (ES256; then the game refreshes the session with its refresh token)`],
              [
                "Signing keys",
                <ul key="kids" className="space-y-1" data-testid="signing-keys">
                  {jwks.keys.map((k, i) => (
                    <li key={k.kid} className="flex flex-wrap items-center gap-2">
                      <code className="font-mono text-xs" data-testid={i === 0 ? "current-kid" : "retired-kid"}>
                        {k.kid}
                      </code>
                      {i === 0 ? <Badge tone="green">signing</Badge> : <Badge tone="gray">retired: verifies the tokens it signed until they expire</Badge>}
                    </li>
                  ))}
                </ul>,
              ],
            ]}
          />
          {jwksUrl && (
            <CodeBlock
              code={`import { createRemoteJWKSet, jwtVerify } from "jose";\n\nconst jwks = createRemoteJWKSet(new URL("${jwksUrl}"));\nconst { payload } = await jwtVerify(token, jwks, {\n  issuer: "${playerTokenIssuer()}",\n  audience: "${scope.project.id}",\n});\n// payload.sub is the player's id (pla_…), payload.sid its session`}
            />
          )}
          <RotateKeyForm
            action={rotateSigningKeyAction.bind(null, target)}
            confirm={`Rotate the ${scope.mode} signing key? New tokens are signed with a new key; tokens already issued keep verifying until they expire.`}
          >
            <p className="text-sm text-slate-600">
              Rotating signs new tokens with a new key at once. The old key stays in the JWKS for {duration(PLAYER_TOKEN_TTL_SECONDS)}, so tokens already issued keep verifying until they
              expire; verifiers that cache the JWKS fetch it again when they meet the new key id.
            </p>
          </RotateKeyForm>
        </div>
      </Card>
      <Card title="Sign-in methods">
        <SignInMethods target={target} configs={byProvider} />
      </Card>
      <Card title="Sign-In with Ethereum">
        <SiweSettingsForm action={configureSiweAction.bind(null, target)} settings={siwe} />
      </Card>
      <Card title="Configure a provider">
        <ProviderForm
          action={configureProviderAction.bind(null, target)}
          providers={CONFIGURABLE_PROVIDERS}
          fields={PROVIDER_FIELDS}
          configs={byProvider}
          googleCallbackUrl={googleCallbackUrl}
        />
      </Card>
      <SignedInPlayers scope={scope} query={query} publishableKey={publishableKey ?? undefined} />
    </>
  );
}
