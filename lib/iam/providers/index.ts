import { verifyOidcToken } from "./oidc";
import { verifyOpaqueToken } from "./opaque";
import { verifyTelegramData } from "./telegram";
import type { ProviderConfig, VerifiedIdentity, VerifyOptions } from "./types";

export * from "./types";
export { clearProviderCaches } from "./http";

/**
 * The identity a provider's token proves, by the provider's own means (see each family's file).
 * Throws TokenRejected (the token is not good for this configuration) or ProviderUnavailable.
 */
export async function verifyWithProvider(config: ProviderConfig, token: string, opts: VerifyOptions): Promise<VerifiedIdentity> {
  switch (config.provider) {
    case "telegramMiniApp":
    case "telegram":
      return verifyTelegramData(config, token);
    case "custom":
      // A custom provider is either an endpoint of the developer's that vouches for the token, or a JWT issuer.
      return config.settings.authenticationUrl ? verifyOpaqueToken(config, token, opts) : verifyOidcToken(config, token, opts);
    case "google":
    case "oidc":
    case "firebase":
    case "supabase":
      return verifyOidcToken(config, token, opts);
    default:
      return verifyOpaqueToken(config, token, opts);
  }
}
