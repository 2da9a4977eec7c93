CREATE TABLE "policies" (
	"id" text PRIMARY KEY NOT NULL,
	"project_id" text NOT NULL,
	"livemode" boolean NOT NULL,
	"name" text NOT NULL,
	"chain_id" integer NOT NULL,
	"sponsor_schema" text NOT NULL,
	"token_contract_id" text,
	"token_contract_amount" text,
	"enabled" boolean DEFAULT true NOT NULL,
	"deleted" boolean DEFAULT false NOT NULL,
	"created_at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (6) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "policy_rules" (
	"id" text PRIMARY KEY NOT NULL,
	"project_id" text NOT NULL,
	"livemode" boolean NOT NULL,
	"policy_id" text NOT NULL,
	"type" text NOT NULL,
	"contract_id" text,
	"function_name" text,
	"wildcard" boolean DEFAULT false NOT NULL,
	"gas_limit" text,
	"count_limit" integer,
	"time_interval_type" text,
	"time_interval_value" integer,
	"created_at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (6) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "policies" ADD CONSTRAINT "policies_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "policies" ADD CONSTRAINT "policies_token_contract_id_contracts_id_fk" FOREIGN KEY ("token_contract_id") REFERENCES "public"."contracts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "policy_rules" ADD CONSTRAINT "policy_rules_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "policy_rules" ADD CONSTRAINT "policy_rules_policy_id_policies_id_fk" FOREIGN KEY ("policy_id") REFERENCES "public"."policies"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "policy_rules" ADD CONSTRAINT "policy_rules_contract_id_contracts_id_fk" FOREIGN KEY ("contract_id") REFERENCES "public"."contracts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "policies_project_id_livemode_created_at_index" ON "policies" USING btree ("project_id","livemode","created_at");--> statement-breakpoint
CREATE INDEX "policy_rules_policy_id_created_at_index" ON "policy_rules" USING btree ("policy_id","created_at");