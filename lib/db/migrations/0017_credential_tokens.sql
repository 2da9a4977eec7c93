CREATE TABLE "player_credential_tokens" (
	"token_hash" text PRIMARY KEY NOT NULL,
	"project_id" text NOT NULL,
	"livemode" boolean NOT NULL,
	"identity_id" text NOT NULL,
	"purpose" text NOT NULL,
	"expires_at" timestamp (6) with time zone NOT NULL,
	"used_at" timestamp (6) with time zone,
	"created_at" timestamp (6) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "player_credential_tokens" ADD CONSTRAINT "player_credential_tokens_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "player_credential_tokens" ADD CONSTRAINT "player_credential_tokens_identity_id_player_identities_id_fk" FOREIGN KEY ("identity_id") REFERENCES "public"."player_identities"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "player_credential_tokens_identity_id_purpose_index" ON "player_credential_tokens" USING btree ("identity_id","purpose");--> statement-breakpoint
CREATE INDEX "player_credential_tokens_expires_at_index" ON "player_credential_tokens" USING btree ("expires_at");