CREATE TABLE "accounts" (
	"id" text PRIMARY KEY NOT NULL,
	"project_id" text NOT NULL,
	"livemode" boolean NOT NULL,
	"player_id" text NOT NULL,
	"chain_id" integer NOT NULL,
	"address" text NOT NULL,
	"owner_address" text NOT NULL,
	"pending_owner_address" text,
	"custodial" boolean NOT NULL,
	"embedded_signer" boolean DEFAULT false NOT NULL,
	"account_type" text NOT NULL,
	"salt" text NOT NULL,
	"default_guardian" boolean DEFAULT false NOT NULL,
	"deployed" boolean DEFAULT false NOT NULL,
	"created_at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (6) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "owner_keys" (
	"id" text PRIMARY KEY NOT NULL,
	"project_id" text NOT NULL,
	"livemode" boolean NOT NULL,
	"player_id" text NOT NULL,
	"address" text NOT NULL,
	"encrypted_private_key" text NOT NULL,
	"created_at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "owner_keys_playerId_unique" UNIQUE("player_id")
);
--> statement-breakpoint
ALTER TABLE "accounts" ADD CONSTRAINT "accounts_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "accounts" ADD CONSTRAINT "accounts_player_id_players_id_fk" FOREIGN KEY ("player_id") REFERENCES "public"."players"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "owner_keys" ADD CONSTRAINT "owner_keys_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "owner_keys" ADD CONSTRAINT "owner_keys_player_id_players_id_fk" FOREIGN KEY ("player_id") REFERENCES "public"."players"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "accounts_player_chain_unique" ON "accounts" USING btree ("player_id","chain_id");--> statement-breakpoint
CREATE INDEX "accounts_project_id_livemode_created_at_index" ON "accounts" USING btree ("project_id","livemode","created_at");--> statement-breakpoint
CREATE INDEX "accounts_project_id_livemode_chain_id_address_index" ON "accounts" USING btree ("project_id","livemode","chain_id","address");