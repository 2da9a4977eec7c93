CREATE TABLE "sessions" (
	"id" text PRIMARY KEY NOT NULL,
	"project_id" text NOT NULL,
	"livemode" boolean NOT NULL,
	"player_id" text NOT NULL,
	"account_id" text NOT NULL,
	"chain_id" integer NOT NULL,
	"address" text NOT NULL,
	"valid_after" bigint NOT NULL,
	"valid_until" bigint NOT NULL,
	"limit" bigint,
	"whitelist" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"registration_intent_id" text,
	"revocation_intent_id" text,
	"revoked_at" timestamp with time zone,
	"created_at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (6) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "sessions" ADD CONSTRAINT "sessions_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sessions" ADD CONSTRAINT "sessions_player_id_players_id_fk" FOREIGN KEY ("player_id") REFERENCES "public"."players"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sessions" ADD CONSTRAINT "sessions_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "sessions_project_id_livemode_player_id_created_at_index" ON "sessions" USING btree ("project_id","livemode","player_id","created_at");--> statement-breakpoint
CREATE INDEX "sessions_account_id_address_index" ON "sessions" USING btree ("account_id","address");