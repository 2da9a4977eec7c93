CREATE TABLE "function_runs" (
	"id" text PRIMARY KEY NOT NULL,
	"function_id" text NOT NULL,
	"event_id" text NOT NULL,
	"event" jsonb NOT NULL,
	"status" text DEFAULT 'queued' NOT NULL,
	"attempt" integer DEFAULT 0 NOT NULL,
	"steps" jsonb NOT NULL,
	"run_at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	"locked_until" timestamp (6) with time zone,
	"output" jsonb,
	"error" text,
	"created_at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (6) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX "function_runs_function_event_unique" ON "function_runs" USING btree ("function_id","event_id");--> statement-breakpoint
CREATE INDEX "function_runs_due" ON "function_runs" USING btree ("status","run_at");