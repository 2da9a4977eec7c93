CREATE TABLE "oauth_configs" (
	"id" text PRIMARY KEY NOT NULL,
	"project_id" text NOT NULL,
	"livemode" boolean NOT NULL,
	"provider" text NOT NULL,
	"enabled" boolean DEFAULT true NOT NULL,
	"client_id" text,
	"encrypted_secret" text,
	"base_url" text,
	"settings" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (6) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "oauth_signins" (
	"id" text PRIMARY KEY NOT NULL,
	"project_id" text NOT NULL,
	"livemode" boolean NOT NULL,
	"provider" text NOT NULL,
	"state_hash" text NOT NULL,
	"encrypted_verifier" text NOT NULL,
	"nonce" text NOT NULL,
	"redirect_to" text,
	"key_hash" text NOT NULL,
	"encrypted_result" text,
	"error" text,
	"expires_at" timestamp (6) with time zone NOT NULL,
	"completed_at" timestamp (6) with time zone,
	"collected_at" timestamp (6) with time zone,
	"created_at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "oauth_signins_stateHash_unique" UNIQUE("state_hash"),
	CONSTRAINT "oauth_signins_keyHash_unique" UNIQUE("key_hash")
);
--> statement-breakpoint
CREATE TABLE "player_identities" (
	"id" text PRIMARY KEY NOT NULL,
	"project_id" text NOT NULL,
	"livemode" boolean NOT NULL,
	"player_id" text NOT NULL,
	"provider" text NOT NULL,
	"external_user_id" text NOT NULL,
	"email" text,
	"password_hash" text,
	"email_verified_at" timestamp (6) with time zone,
	"disabled" boolean DEFAULT false NOT NULL,
	"created_at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (6) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "player_sessions" (
	"id" text PRIMARY KEY NOT NULL,
	"project_id" text NOT NULL,
	"livemode" boolean NOT NULL,
	"player_id" text NOT NULL,
	"provider" text NOT NULL,
	"refresh_hash" text NOT NULL,
	"generation" integer DEFAULT 0 NOT NULL,
	"expires_at" timestamp (6) with time zone NOT NULL,
	"revoked_at" timestamp (6) with time zone,
	"revoked_reason" text,
	"last_used_at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	"created_at" timestamp (6) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "player_token_keys" (
	"id" text PRIMARY KEY NOT NULL,
	"project_id" text NOT NULL,
	"livemode" boolean NOT NULL,
	"public_jwk" jsonb NOT NULL,
	"encrypted_private_jwk" text NOT NULL,
	"created_at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	"retired_at" timestamp (6) with time zone
);
--> statement-breakpoint
ALTER TABLE "oauth_configs" ADD CONSTRAINT "oauth_configs_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "oauth_signins" ADD CONSTRAINT "oauth_signins_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "player_identities" ADD CONSTRAINT "player_identities_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "player_identities" ADD CONSTRAINT "player_identities_player_id_players_id_fk" FOREIGN KEY ("player_id") REFERENCES "public"."players"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "player_sessions" ADD CONSTRAINT "player_sessions_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "player_sessions" ADD CONSTRAINT "player_sessions_player_id_players_id_fk" FOREIGN KEY ("player_id") REFERENCES "public"."players"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "player_token_keys" ADD CONSTRAINT "player_token_keys_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "oauth_configs_provider_unique" ON "oauth_configs" USING btree ("project_id","livemode","provider");--> statement-breakpoint
CREATE UNIQUE INDEX "player_identities_provider_user_unique" ON "player_identities" USING btree ("project_id","livemode","provider","external_user_id");--> statement-breakpoint
CREATE INDEX "player_identities_player_id_index" ON "player_identities" USING btree ("player_id");--> statement-breakpoint
CREATE INDEX "player_identities_project_id_livemode_email_index" ON "player_identities" USING btree ("project_id","livemode","email");--> statement-breakpoint
CREATE INDEX "player_sessions_player_id_index" ON "player_sessions" USING btree ("player_id");--> statement-breakpoint
CREATE INDEX "player_sessions_project_id_livemode_created_at_index" ON "player_sessions" USING btree ("project_id","livemode","created_at");--> statement-breakpoint
CREATE INDEX "player_token_keys_project_id_livemode_created_at_index" ON "player_token_keys" USING btree ("project_id","livemode","created_at");