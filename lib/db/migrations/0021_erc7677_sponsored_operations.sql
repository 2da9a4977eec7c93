CREATE TABLE "sponsored_operations" (
	"id" text PRIMARY KEY NOT NULL,
	"project_id" text NOT NULL,
	"livemode" boolean NOT NULL,
	"policy_id" text NOT NULL,
	"chain_id" integer NOT NULL,
	"player_id" text,
	"account_id" text,
	"sender" text NOT NULL,
	"nonce" text NOT NULL,
	"max_cost" text NOT NULL,
	"user_operation_hash" text NOT NULL,
	"created_at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (6) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "policies" ADD COLUMN "sponsor_outside_accounts" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "sponsored_operations" ADD CONSTRAINT "sponsored_operations_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sponsored_operations" ADD CONSTRAINT "sponsored_operations_policy_id_policies_id_fk" FOREIGN KEY ("policy_id") REFERENCES "public"."policies"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sponsored_operations" ADD CONSTRAINT "sponsored_operations_player_id_players_id_fk" FOREIGN KEY ("player_id") REFERENCES "public"."players"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "sponsored_operations_op_unique" ON "sponsored_operations" USING btree ("project_id","livemode","chain_id","sender","nonce");--> statement-breakpoint
CREATE INDEX "sponsored_operations_policy_id_player_id_created_at_index" ON "sponsored_operations" USING btree ("policy_id","player_id","created_at");--> statement-breakpoint
CREATE INDEX "sponsored_operations_policy_id_sender_created_at_index" ON "sponsored_operations" USING btree ("policy_id","sender","created_at");