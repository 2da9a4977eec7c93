import crypto from "node:crypto";
import { decrypt, encrypt } from "@/lib/keys/encryption";

/**
 * What the official SDK's `constructWebhookEvent` checks: hex HMAC-SHA256 of the raw body, keyed
 * by the secret key with its first "sk_" and "test_" and every "-" removed (exactly its rule).
 */
export function webhookSignature(secretKey: string, body: string): string {
  const key = secretKey.replace("sk_", "").replace("test_", "").replace(/-/g, "");
  return crypto.createHmac("sha256", key).update(body, "utf8").digest("hex");
}

/** A Standard Webhooks signing secret: `whsec_` and 24 random bytes in base64. */
export const newSigningSecret = () => `whsec_${crypto.randomBytes(24).toString("base64")}`;

/**
 * The Standard Webhooks signature (https://www.standardwebhooks.com): `v1,` and the base64
 * HMAC-SHA256 of `{id}.{timestamp}.{body}` keyed by the secret's base64-decoded bytes. The
 * timestamp is signed too, so a receiver can refuse an old request replayed.
 */
export function standardSignature(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64");
  return `v1,${crypto.createHmac("sha256", key).update(`${id}.${timestamp}.${body}`, "utf8").digest("base64")}`;
}

/**
 * The Standard Webhooks headers of one request: `webhook-id`, `webhook-timestamp` (Unix seconds) and, with a secret,
 * `webhook-signature` over both and the body. Webhook deliveries and approval-webhook calls sign with this.
 */
export function standardHeaders(messageId: string, body: string, signingSecret: string | null, now = Date.now()): Record<string, string> {
  const timestamp = Math.floor(now / 1000);
  return {
    "webhook-id": messageId,
    "webhook-timestamp": String(timestamp),
    ...(signingSecret ? { "webhook-signature": standardSignature(signingSecret, messageId, timestamp, body) } : {}),
  };
}

/** A signing secret sealed for storage: bound to its owner (the project webhook's mode, a trigger, or an approval_webhook rule) so it cannot be moved. */
export const signingSecretAad = (owner: string) => `signing-secret:${owner}`;
export const sealSigningSecret = (secret: string, owner: string) => encrypt(secret, signingSecretAad(owner));
export const openSigningSecret = (sealed: string, owner: string) => decrypt(sealed, signingSecretAad(owner));

/** The sealing owner of a mode's project webhook secret. */
export const webhookSecretOwner = (ctx: { projectId: string; livemode: boolean }) => `webhook:${ctx.projectId}:${ctx.livemode ? "live" : "test"}`;
