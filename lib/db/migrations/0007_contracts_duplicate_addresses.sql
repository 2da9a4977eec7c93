DROP INDEX "contracts_active_address_unique";--> statement-breakpoint
CREATE INDEX "contracts_address_idx" ON "contracts" USING btree ("project_id","livemode","chain_id","address");