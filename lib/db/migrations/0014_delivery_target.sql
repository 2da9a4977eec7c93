-- Earlier rows: a trigger's attempt names it; the rest went to the project webhook (a test to a
-- bare URL cannot be told apart there and counts as the webhook's).
ALTER TABLE "webhook_deliveries" ADD COLUMN "target" text;--> statement-breakpoint
UPDATE "webhook_deliveries" SET "target" = coalesce("trigger_id", 'webhook');--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ALTER COLUMN "target" SET NOT NULL;
