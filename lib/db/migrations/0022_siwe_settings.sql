CREATE TABLE "siwe_settings" (
	"project_id" text NOT NULL,
	"livemode" boolean NOT NULL,
	"domains" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"uris" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"created_at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "siwe_settings_project_id_livemode_pk" PRIMARY KEY("project_id","livemode")
);
--> statement-breakpoint
ALTER TABLE "siwe_settings" ADD CONSTRAINT "siwe_settings_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;