-- Stored answers become credential-scoped and sealed: the unscoped, plaintext ones (at most 24 hours of retries) are forgotten.
DELETE FROM "idempotency_keys";--> statement-breakpoint
ALTER TABLE "idempotency_keys" DROP CONSTRAINT "idempotency_keys_project_id_livemode_key_pk";--> statement-breakpoint
ALTER TABLE "idempotency_keys" ADD COLUMN "credential" text NOT NULL;--> statement-breakpoint
ALTER TABLE "idempotency_keys" ADD COLUMN "sealed_response" text;--> statement-breakpoint
ALTER TABLE "idempotency_keys" DROP COLUMN "response_body";--> statement-breakpoint
ALTER TABLE "idempotency_keys" ADD CONSTRAINT "idempotency_keys_project_id_livemode_credential_key_pk" PRIMARY KEY("project_id","livemode","credential","key");
