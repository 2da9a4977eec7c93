ALTER TABLE "accounts" ADD COLUMN "token_contract" text;--> statement-breakpoint
ALTER TABLE "accounts" ADD COLUMN "token_id" text;--> statement-breakpoint
ALTER TABLE "transaction_intents" ADD COLUMN "session_id" text;