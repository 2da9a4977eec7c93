CREATE TABLE "chain_cursors" (
	"name" text NOT NULL,
	"chain_id" integer NOT NULL,
	"next_block" bigint NOT NULL,
	"updated_at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "chain_cursors_name_chain_id_pk" PRIMARY KEY("name","chain_id")
);
--> statement-breakpoint
CREATE TABLE "sponsorship_balances" (
	"project_id" text NOT NULL,
	"livemode" boolean NOT NULL,
	"chain_id" integer NOT NULL,
	"credited" numeric(78, 0) DEFAULT '0' NOT NULL,
	"held" numeric(78, 0) DEFAULT '0' NOT NULL,
	"settled" numeric(78, 0) DEFAULT '0' NOT NULL,
	"created_at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "sponsorship_balances_project_id_livemode_chain_id_pk" PRIMARY KEY("project_id","livemode","chain_id")
);
--> statement-breakpoint
CREATE TABLE "sponsorship_declines" (
	"id" text PRIMARY KEY NOT NULL,
	"project_id" text NOT NULL,
	"livemode" boolean NOT NULL,
	"chain_id" integer,
	"policy_id" text,
	"rule_id" text,
	"code" text NOT NULL,
	"player_id" text,
	"account_id" text,
	"source" text NOT NULL,
	"created_at" timestamp (6) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "sponsorship_entries" (
	"id" text PRIMARY KEY NOT NULL,
	"project_id" text NOT NULL,
	"livemode" boolean NOT NULL,
	"chain_id" integer NOT NULL,
	"kind" text NOT NULL,
	"amount" numeric(78, 0) NOT NULL,
	"usd" numeric,
	"cause" text NOT NULL,
	"hold_id" text,
	"intent_id" text,
	"sponsored_operation_id" text,
	"policy_id" text,
	"player_id" text,
	"account_id" text,
	"reference" text,
	"note" text,
	"created_at" timestamp (6) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "sponsorship_holds" (
	"id" text PRIMARY KEY NOT NULL,
	"project_id" text NOT NULL,
	"livemode" boolean NOT NULL,
	"chain_id" integer NOT NULL,
	"status" text NOT NULL,
	"amount" numeric(78, 0) NOT NULL,
	"settled_amount" numeric(78, 0),
	"usd_price" numeric,
	"cause" text NOT NULL,
	"intent_id" text,
	"sponsored_operation_id" text,
	"policy_id" text,
	"player_id" text,
	"account_id" text,
	"expires_at" timestamp with time zone,
	"created_at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (6) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "policy_rules" ADD COLUMN "amount" text;--> statement-breakpoint
ALTER TABLE "policy_rules" ADD COLUMN "currency" text;--> statement-breakpoint
ALTER TABLE "policy_rules" ADD COLUMN "scope" text;--> statement-breakpoint
ALTER TABLE "policy_rules" ADD COLUMN "period" text;--> statement-breakpoint
ALTER TABLE "policy_rules" ADD COLUMN "starts_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "policy_rules" ADD COLUMN "ends_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "policy_rules" ADD COLUMN "max_fee_per_gas" text;--> statement-breakpoint
ALTER TABLE "policy_rules" ADD COLUMN "wait_seconds" integer;--> statement-breakpoint
ALTER TABLE "policy_rules" ADD COLUMN "url" text;--> statement-breakpoint
ALTER TABLE "policy_rules" ADD COLUMN "timeout_ms" integer;--> statement-breakpoint
ALTER TABLE "policy_rules" ADD COLUMN "on_error" text;--> statement-breakpoint
ALTER TABLE "policy_rules" ADD COLUMN "encrypted_secret" text;--> statement-breakpoint
ALTER TABLE "transaction_intents" ADD COLUMN "sponsorship_decline" jsonb;--> statement-breakpoint
ALTER TABLE "sponsorship_balances" ADD CONSTRAINT "sponsorship_balances_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sponsorship_declines" ADD CONSTRAINT "sponsorship_declines_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sponsorship_entries" ADD CONSTRAINT "sponsorship_entries_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sponsorship_holds" ADD CONSTRAINT "sponsorship_holds_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "sponsorship_balances_chain_id_index" ON "sponsorship_balances" USING btree ("chain_id");--> statement-breakpoint
CREATE INDEX "sponsorship_declines_project_id_livemode_created_at_index" ON "sponsorship_declines" USING btree ("project_id","livemode","created_at");--> statement-breakpoint
CREATE INDEX "sponsorship_declines_created_at_index" ON "sponsorship_declines" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "sponsorship_entries_project_id_livemode_created_at_id_index" ON "sponsorship_entries" USING btree ("project_id","livemode","created_at","id");--> statement-breakpoint
CREATE UNIQUE INDEX "sponsorship_entries_deposit_unique" ON "sponsorship_entries" USING btree ("chain_id","reference") WHERE cause = 'deposit';--> statement-breakpoint
CREATE INDEX "sponsorship_entries_hold_id_index" ON "sponsorship_entries" USING btree ("hold_id");--> statement-breakpoint
CREATE INDEX "sponsorship_entries_intent_id_index" ON "sponsorship_entries" USING btree ("intent_id");--> statement-breakpoint
CREATE INDEX "sponsorship_entries_created_at_index" ON "sponsorship_entries" USING btree ("created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "sponsorship_holds_intent_unique" ON "sponsorship_holds" USING btree ("intent_id");--> statement-breakpoint
CREATE UNIQUE INDEX "sponsorship_holds_operation_live" ON "sponsorship_holds" USING btree ("sponsored_operation_id") WHERE status = 'held';--> statement-breakpoint
CREATE INDEX "sponsorship_holds_policy_id_created_at_index" ON "sponsorship_holds" USING btree ("policy_id","created_at");--> statement-breakpoint
CREATE INDEX "sponsorship_holds_project_id_livemode_player_id_created_at_index" ON "sponsorship_holds" USING btree ("project_id","livemode","player_id","created_at");--> statement-breakpoint
CREATE INDEX "sponsorship_holds_project_id_livemode_account_id_created_at_index" ON "sponsorship_holds" USING btree ("project_id","livemode","account_id","created_at");--> statement-breakpoint
CREATE INDEX "sponsorship_holds_status_chain_id_index" ON "sponsorship_holds" USING btree ("status","chain_id");--> statement-breakpoint
CREATE INDEX "sponsorship_holds_created_at_index" ON "sponsorship_holds" USING btree ("created_at");