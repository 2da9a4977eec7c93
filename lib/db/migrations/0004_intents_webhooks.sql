CREATE TABLE "transaction_intents" (
	"id" text PRIMARY KEY NOT NULL,
	"project_id" text NOT NULL,
	"livemode" boolean NOT NULL,
	"chain_id" integer NOT NULL,
	"player_id" text NOT NULL,
	"account_id" text NOT NULL,
	"policy_id" text,
	"status" text NOT NULL,
	"sponsored" boolean NOT NULL,
	"interactions" jsonb NOT NULL,
	"user_operation" jsonb NOT NULL,
	"user_operation_hash" text NOT NULL,
	"max_cost" text NOT NULL,
	"optimistic" boolean DEFAULT false NOT NULL,
	"confirmation_blocks" integer DEFAULT 5 NOT NULL,
	"transaction_hash" text,
	"block_number" integer,
	"gas_used" text,
	"gas_cost" text,
	"response" jsonb,
	"confirmed_at" timestamp with time zone,
	"error" text,
	"created_at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "transaction_intents_userOperationHash_unique" UNIQUE("user_operation_hash")
);
--> statement-breakpoint
CREATE TABLE "webhook_deliveries" (
	"id" text PRIMARY KEY NOT NULL,
	"project_id" text NOT NULL,
	"livemode" boolean NOT NULL,
	"topic" text NOT NULL,
	"url" text NOT NULL,
	"object_id" text,
	"attempt" integer NOT NULL,
	"status" text NOT NULL,
	"response_status" integer,
	"error" text,
	"duration_ms" integer NOT NULL,
	"created_at" timestamp (6) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "webhook_settings" (
	"project_id" text NOT NULL,
	"livemode" boolean NOT NULL,
	"url" text NOT NULL,
	"created_at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "webhook_settings_project_id_livemode_pk" PRIMARY KEY("project_id","livemode")
);
--> statement-breakpoint
ALTER TABLE "transaction_intents" ADD CONSTRAINT "transaction_intents_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "transaction_intents" ADD CONSTRAINT "transaction_intents_player_id_players_id_fk" FOREIGN KEY ("player_id") REFERENCES "public"."players"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "transaction_intents" ADD CONSTRAINT "transaction_intents_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "transaction_intents" ADD CONSTRAINT "transaction_intents_policy_id_policies_id_fk" FOREIGN KEY ("policy_id") REFERENCES "public"."policies"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_settings" ADD CONSTRAINT "webhook_settings_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "transaction_intents_project_id_livemode_created_at_index" ON "transaction_intents" USING btree ("project_id","livemode","created_at");--> statement-breakpoint
CREATE INDEX "transaction_intents_policy_id_player_id_created_at_index" ON "transaction_intents" USING btree ("policy_id","player_id","created_at");--> statement-breakpoint
CREATE INDEX "transaction_intents_account_id_created_at_index" ON "transaction_intents" USING btree ("account_id","created_at");--> statement-breakpoint
CREATE INDEX "transaction_intents_player_id_created_at_index" ON "transaction_intents" USING btree ("player_id","created_at");--> statement-breakpoint
CREATE INDEX "transaction_intents_status_updated_at_index" ON "transaction_intents" USING btree ("status","updated_at");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_project_id_livemode_created_at_index" ON "webhook_deliveries" USING btree ("project_id","livemode","created_at");