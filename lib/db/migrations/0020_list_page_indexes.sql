CREATE INDEX "accounts_project_id_livemode_created_at_id_index" ON "accounts" USING btree ("project_id","livemode","created_at","id");--> statement-breakpoint
CREATE INDEX "contracts_project_id_livemode_created_at_id_index" ON "contracts" USING btree ("project_id","livemode","created_at","id");--> statement-breakpoint
CREATE INDEX "developer_accounts_project_id_livemode_created_at_id_index" ON "developer_accounts" USING btree ("project_id","livemode","created_at","id");--> statement-breakpoint
CREATE INDEX "event_definitions_project_id_livemode_created_at_id_index" ON "event_definitions" USING btree ("project_id","livemode","created_at","id");--> statement-breakpoint
CREATE INDEX "paymasters_project_id_livemode_created_at_id_index" ON "paymasters" USING btree ("project_id","livemode","created_at","id");--> statement-breakpoint
CREATE INDEX "player_sessions_project_id_livemode_created_at_id_index" ON "player_sessions" USING btree ("project_id","livemode","created_at","id");--> statement-breakpoint
CREATE INDEX "player_token_keys_project_id_livemode_created_at_id_index" ON "player_token_keys" USING btree ("project_id","livemode","created_at","id");--> statement-breakpoint
CREATE INDEX "players_project_id_livemode_created_at_id_index" ON "players" USING btree ("project_id","livemode","created_at","id");--> statement-breakpoint
CREATE INDEX "policies_project_id_livemode_created_at_id_index" ON "policies" USING btree ("project_id","livemode","created_at","id");--> statement-breakpoint
CREATE INDEX "request_logs_project_id_livemode_created_at_id_index" ON "request_logs" USING btree ("project_id","livemode","created_at","id");--> statement-breakpoint
CREATE INDEX "subscriptions_project_id_livemode_created_at_id_index" ON "subscriptions" USING btree ("project_id","livemode","created_at","id");--> statement-breakpoint
CREATE INDEX "transaction_intents_project_id_livemode_created_at_id_index" ON "transaction_intents" USING btree ("project_id","livemode","created_at","id");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_project_id_livemode_created_at_id_index" ON "webhook_deliveries" USING btree ("project_id","livemode","created_at","id");--> statement-breakpoint
DROP INDEX "accounts_project_id_livemode_created_at_index";--> statement-breakpoint
DROP INDEX "contracts_project_id_livemode_created_at_index";--> statement-breakpoint
DROP INDEX "developer_accounts_project_id_livemode_created_at_index";--> statement-breakpoint
DROP INDEX "event_definitions_project_id_livemode_created_at_index";--> statement-breakpoint
DROP INDEX "paymasters_project_id_livemode_created_at_index";--> statement-breakpoint
DROP INDEX "player_sessions_project_id_livemode_created_at_index";--> statement-breakpoint
DROP INDEX "player_token_keys_project_id_livemode_created_at_index";--> statement-breakpoint
DROP INDEX "players_project_id_livemode_created_at_index";--> statement-breakpoint
DROP INDEX "policies_project_id_livemode_created_at_index";--> statement-breakpoint
DROP INDEX "request_logs_project_id_livemode_created_at_index";--> statement-breakpoint
DROP INDEX "subscriptions_project_id_livemode_created_at_index";--> statement-breakpoint
DROP INDEX "transaction_intents_project_id_livemode_created_at_index";--> statement-breakpoint
DROP INDEX "webhook_deliveries_project_id_livemode_created_at_index";
