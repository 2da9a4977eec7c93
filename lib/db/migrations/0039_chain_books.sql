CREATE TABLE "chain_landings" (
	"id" text PRIMARY KEY NOT NULL,
	"chain_id" integer NOT NULL,
	"entry_point" text NOT NULL,
	"paymaster" text NOT NULL,
	"user_operation_hash" text NOT NULL,
	"sender" text NOT NULL,
	"nonce" numeric(78, 0) NOT NULL,
	"success" boolean NOT NULL,
	"actual_gas_cost" numeric(78, 0) NOT NULL,
	"actual_gas_used" numeric(78, 0) NOT NULL,
	"transaction_hash" text NOT NULL,
	"block_number" bigint NOT NULL,
	"block_hash" text NOT NULL,
	"log_index" integer NOT NULL,
	"project_id" text,
	"livemode" boolean,
	"signature_id" text,
	"hold_id" text,
	"intent_id" text,
	"status" text DEFAULT 'seen' NOT NULL,
	"created_at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (6) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "paymaster_signatures" (
	"id" text PRIMARY KEY NOT NULL,
	"project_id" text NOT NULL,
	"livemode" boolean NOT NULL,
	"chain_id" integer NOT NULL,
	"entry_point" text NOT NULL,
	"paymaster" text NOT NULL,
	"sender" text NOT NULL,
	"nonce" numeric(78, 0) NOT NULL,
	"user_operation_hash" text NOT NULL,
	"max_cost" numeric(78, 0) NOT NULL,
	"valid_until" timestamp with time zone NOT NULL,
	"hold_id" text NOT NULL,
	"intent_id" text,
	"sponsored_operation_id" text,
	"status" text DEFAULT 'live' NOT NULL,
	"created_at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (6) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "sponsorship_reconciliations" (
	"id" text PRIMARY KEY NOT NULL,
	"chain_id" integer NOT NULL,
	"entry_point" text NOT NULL,
	"paymaster" text NOT NULL,
	"from_block" bigint NOT NULL,
	"to_block" bigint NOT NULL,
	"chain_wei" numeric(78, 0) NOT NULL,
	"settled_wei" numeric(78, 0) NOT NULL,
	"unattributed_wei" numeric(78, 0) NOT NULL,
	"unattributed_events" integer NOT NULL,
	"mismatch_wei" numeric(78, 0) NOT NULL,
	"stale_holds" integer NOT NULL,
	"stale_held_wei" numeric(78, 0) NOT NULL,
	"created_at" timestamp (6) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
DROP INDEX "sponsorship_entries_deposit_unique";--> statement-breakpoint
ALTER TABLE "chain_cursors" ADD COLUMN "block_hash" text;--> statement-breakpoint
ALTER TABLE "sponsorship_entries" ADD COLUMN "landing_id" text;--> statement-breakpoint
ALTER TABLE "sponsorship_entries" ADD COLUMN "block_number" bigint;--> statement-breakpoint
ALTER TABLE "sponsorship_entries" ADD COLUMN "block_hash" text;--> statement-breakpoint
ALTER TABLE "sponsorship_entries" ADD COLUMN "reverses" text;--> statement-breakpoint
ALTER TABLE "transaction_intents" ADD COLUMN "block_hash" text;--> statement-breakpoint
ALTER TABLE "paymaster_signatures" ADD CONSTRAINT "paymaster_signatures_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "chain_landings_log_unique" ON "chain_landings" USING btree ("chain_id","block_hash","log_index");--> statement-breakpoint
CREATE INDEX "chain_landings_chain_id_status_block_number_index" ON "chain_landings" USING btree ("chain_id","status","block_number");--> statement-breakpoint
CREATE INDEX "chain_landings_chain_id_user_operation_hash_index" ON "chain_landings" USING btree ("chain_id","user_operation_hash");--> statement-breakpoint
CREATE INDEX "chain_landings_hold_id_index" ON "chain_landings" USING btree ("hold_id");--> statement-breakpoint
CREATE INDEX "chain_landings_created_at_index" ON "chain_landings" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "paymaster_signatures_chain_id_user_operation_hash_index" ON "paymaster_signatures" USING btree ("chain_id","user_operation_hash");--> statement-breakpoint
CREATE INDEX "paymaster_signatures_chain_id_sender_nonce_index" ON "paymaster_signatures" USING btree ("chain_id","sender","nonce");--> statement-breakpoint
CREATE INDEX "paymaster_signatures_hold_id_index" ON "paymaster_signatures" USING btree ("hold_id");--> statement-breakpoint
CREATE INDEX "paymaster_signatures_created_at_index" ON "paymaster_signatures" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "sponsorship_reconciliations_chain_id_created_at_index" ON "sponsorship_reconciliations" USING btree ("chain_id","created_at");--> statement-breakpoint
CREATE INDEX "sponsorship_reconciliations_created_at_index" ON "sponsorship_reconciliations" USING btree ("created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "sponsorship_entries_landing_settled_once" ON "sponsorship_entries" USING btree ("landing_id") WHERE kind = 'settle';--> statement-breakpoint
CREATE UNIQUE INDEX "sponsorship_entries_reversed_once" ON "sponsorship_entries" USING btree ("reverses");--> statement-breakpoint
CREATE INDEX "sponsorship_entries_chain_id_block_number_index" ON "sponsorship_entries" USING btree ("chain_id","block_number");--> statement-breakpoint
CREATE UNIQUE INDEX "sponsorship_entries_deposit_unique" ON "sponsorship_entries" USING btree ("chain_id","reference",coalesce("block_hash", '')) WHERE cause = 'deposit' and kind = 'credit';--> statement-breakpoint
-- Holds from before signature records: their signatures expire an hour after they were held (SPONSORSHIP_SECONDS), and the chain follower releases them then.
UPDATE "sponsorship_holds" SET "expires_at" = "created_at" + interval '1 hour' WHERE "status" = 'held' AND "expires_at" IS NULL;--> statement-breakpoint
-- The chain follower reads our paymasters' UserOperationEvents from where the ERC-7677 landings watcher had read to.
INSERT INTO "chain_cursors" ("name", "chain_id", "next_block") SELECT 'follower', "chain_id", "next_block" FROM "chain_cursors" WHERE "name" = 'sponsorship-erc7677' ON CONFLICT DO NOTHING;
