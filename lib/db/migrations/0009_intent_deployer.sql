ALTER TABLE "transaction_intents" ADD COLUMN "deploys_account" boolean DEFAULT false NOT NULL;--> statement-breakpoint
-- Live intents recorded before: the earliest one carrying its account's initCode is that account's deployer.
UPDATE "transaction_intents" SET "deploys_account" = true WHERE "id" IN (SELECT DISTINCT ON ("chain_id", "account_id") "id" FROM "transaction_intents" WHERE "status" IN ('awaiting_signature', 'pending') AND "user_operation"->>'initCode' <> '0x' ORDER BY "chain_id", "account_id", "created_at", "id");--> statement-breakpoint
CREATE UNIQUE INDEX "transaction_intents_one_deployer" ON "transaction_intents" USING btree ("chain_id","account_id") WHERE "transaction_intents"."deploys_account" and "transaction_intents"."status" in ('awaiting_signature', 'pending');
