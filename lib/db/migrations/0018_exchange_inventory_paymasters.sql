CREATE TABLE "exchange_settings" (
	"project_id" text NOT NULL,
	"livemode" boolean NOT NULL,
	"fee_basis_points" integer NOT NULL,
	"fee_recipient" text NOT NULL,
	"created_at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "exchange_settings_project_id_livemode_pk" PRIMARY KEY("project_id","livemode")
);
--> statement-breakpoint
CREATE TABLE "paymasters" (
	"id" text PRIMARY KEY NOT NULL,
	"project_id" text NOT NULL,
	"livemode" boolean NOT NULL,
	"name" text,
	"address" text NOT NULL,
	"url" text,
	"context" jsonb,
	"deleted" boolean DEFAULT false NOT NULL,
	"created_at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (6) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "token_index_cursors" (
	"chain_id" integer NOT NULL,
	"contract" text NOT NULL,
	"block_number" bigint,
	"block_hash" text,
	"updated_at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "token_index_cursors_chain_id_contract_pk" PRIMARY KEY("chain_id","contract")
);
--> statement-breakpoint
CREATE TABLE "token_transfers" (
	"chain_id" integer NOT NULL,
	"contract" text NOT NULL,
	"block_number" bigint NOT NULL,
	"block_hash" text NOT NULL,
	"log_index" integer NOT NULL,
	"batch_index" integer DEFAULT 0 NOT NULL,
	"transaction_hash" text NOT NULL,
	"standard" text NOT NULL,
	"from_address" text NOT NULL,
	"to_address" text NOT NULL,
	"token_id" text NOT NULL,
	"amount" text NOT NULL,
	"block_timestamp" bigint NOT NULL,
	CONSTRAINT "token_transfers_chain_id_block_number_log_index_batch_index_pk" PRIMARY KEY("chain_id","block_number","log_index","batch_index")
);
--> statement-breakpoint
ALTER TABLE "policies" ADD COLUMN "paymaster_id" text;--> statement-breakpoint
ALTER TABLE "exchange_settings" ADD CONSTRAINT "exchange_settings_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "paymasters" ADD CONSTRAINT "paymasters_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "paymasters_project_id_livemode_created_at_index" ON "paymasters" USING btree ("project_id","livemode","created_at");--> statement-breakpoint
CREATE INDEX "token_transfers_chain_id_to_address_contract_index" ON "token_transfers" USING btree ("chain_id","to_address","contract");--> statement-breakpoint
CREATE INDEX "token_transfers_chain_id_from_address_contract_index" ON "token_transfers" USING btree ("chain_id","from_address","contract");--> statement-breakpoint
ALTER TABLE "policies" ADD CONSTRAINT "policies_paymaster_id_paymasters_id_fk" FOREIGN KEY ("paymaster_id") REFERENCES "public"."paymasters"("id") ON DELETE no action ON UPDATE no action;