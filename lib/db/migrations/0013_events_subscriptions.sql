CREATE TABLE "event_definitions" (
	"id" text PRIMARY KEY NOT NULL,
	"project_id" text NOT NULL,
	"livemode" boolean NOT NULL,
	"name" text NOT NULL,
	"topic" text NOT NULL,
	"chain_id" integer,
	"contract_id" text,
	"function_name" text,
	"function_args" jsonb,
	"developer_account_id" text,
	"threshold" text,
	"number_of_blocks" integer DEFAULT 0 NOT NULL,
	"last_value" text,
	"last_block" bigint,
	"last_checked_at" timestamp with time zone,
	"last_error" text,
	"below_since_block" bigint,
	"fired_at" timestamp with time zone,
	"deleted" boolean DEFAULT false NOT NULL,
	"created_at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (6) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "outbound_events" (
	"id" text PRIMARY KEY NOT NULL,
	"project_id" text NOT NULL,
	"livemode" boolean NOT NULL,
	"topic" text NOT NULL,
	"object_id" text,
	"request_id" text,
	"body" text NOT NULL,
	"dedupe_key" text NOT NULL,
	"fanned_out_at" timestamp with time zone,
	"created_at" timestamp (6) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "subscriptions" (
	"id" text PRIMARY KEY NOT NULL,
	"project_id" text NOT NULL,
	"livemode" boolean NOT NULL,
	"topic" text NOT NULL,
	"deleted_at" timestamp with time zone,
	"created_at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (6) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "triggers" (
	"id" text PRIMARY KEY NOT NULL,
	"project_id" text NOT NULL,
	"livemode" boolean NOT NULL,
	"subscription_id" text NOT NULL,
	"type" text NOT NULL,
	"target" text NOT NULL,
	"encrypted_secret" text NOT NULL,
	"failing_since" timestamp with time zone,
	"disabled_at" timestamp with time zone,
	"disabled_reason" text,
	"deleted_at" timestamp with time zone,
	"created_at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (6) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "transaction_intents" ADD COLUMN "request_id" text;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD COLUMN "message_id" text;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD COLUMN "subscription_id" text;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD COLUMN "trigger_id" text;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD COLUMN "request_id" text;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD COLUMN "reason" text DEFAULT 'scheduled' NOT NULL;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD COLUMN "response_body" text;--> statement-breakpoint
ALTER TABLE "webhook_settings" ADD COLUMN "encrypted_secret" text;--> statement-breakpoint
ALTER TABLE "event_definitions" ADD CONSTRAINT "event_definitions_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "outbound_events" ADD CONSTRAINT "outbound_events_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "subscriptions" ADD CONSTRAINT "subscriptions_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "triggers" ADD CONSTRAINT "triggers_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "triggers" ADD CONSTRAINT "triggers_subscription_id_subscriptions_id_fk" FOREIGN KEY ("subscription_id") REFERENCES "public"."subscriptions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "event_definitions_project_id_livemode_created_at_index" ON "event_definitions" USING btree ("project_id","livemode","created_at");--> statement-breakpoint
CREATE INDEX "event_definitions_topic_deleted_index" ON "event_definitions" USING btree ("topic","deleted");--> statement-breakpoint
CREATE UNIQUE INDEX "outbound_events_project_id_dedupe_key_index" ON "outbound_events" USING btree ("project_id","dedupe_key");--> statement-breakpoint
CREATE INDEX "outbound_events_unfanned" ON "outbound_events" USING btree ("fanned_out_at","created_at");--> statement-breakpoint
CREATE INDEX "subscriptions_project_id_livemode_topic_index" ON "subscriptions" USING btree ("project_id","livemode","topic");--> statement-breakpoint
CREATE INDEX "subscriptions_project_id_livemode_created_at_index" ON "subscriptions" USING btree ("project_id","livemode","created_at");--> statement-breakpoint
CREATE INDEX "triggers_subscription_id_created_at_index" ON "triggers" USING btree ("subscription_id","created_at");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_message_id_index" ON "webhook_deliveries" USING btree ("message_id");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_trigger_id_created_at_index" ON "webhook_deliveries" USING btree ("trigger_id","created_at");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_project_id_livemode_object_id_index" ON "webhook_deliveries" USING btree ("project_id","livemode","object_id");