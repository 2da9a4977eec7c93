CREATE TABLE "forwarder_contracts" (
	"id" text PRIMARY KEY NOT NULL,
	"project_id" text NOT NULL,
	"livemode" boolean NOT NULL,
	"name" text,
	"chain_id" integer NOT NULL,
	"address" text NOT NULL,
	"created_at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (6) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "forwarder_contracts" ADD CONSTRAINT "forwarder_contracts_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "forwarder_contracts_project_id_livemode_created_at_id_index" ON "forwarder_contracts" USING btree ("project_id","livemode","created_at","id");