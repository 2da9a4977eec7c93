CREATE TABLE "developer_accounts" (
	"id" text PRIMARY KEY NOT NULL,
	"project_id" text NOT NULL,
	"livemode" boolean NOT NULL,
	"name" text,
	"address" text NOT NULL,
	"custodial" boolean NOT NULL,
	"owner_address" text,
	"encrypted_private_key" text,
	"salt" text,
	"deleted" boolean DEFAULT false NOT NULL,
	"created_at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (6) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "transaction_intents" DROP CONSTRAINT "transaction_intents_account_id_accounts_id_fk";
--> statement-breakpoint
ALTER TABLE "transaction_intents" ALTER COLUMN "player_id" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "transaction_intents" ADD COLUMN "token_charge" text;--> statement-breakpoint
ALTER TABLE "transaction_intents" ADD COLUMN "token_withdrawal" text;--> statement-breakpoint
ALTER TABLE "developer_accounts" ADD CONSTRAINT "developer_accounts_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "developer_accounts_project_id_livemode_created_at_index" ON "developer_accounts" USING btree ("project_id","livemode","created_at");