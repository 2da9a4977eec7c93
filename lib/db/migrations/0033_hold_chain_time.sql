DROP INDEX "sponsorship_holds_policy_id_created_at_index";--> statement-breakpoint
DROP INDEX "sponsorship_holds_project_id_livemode_player_id_created_at_index";--> statement-breakpoint
DROP INDEX "sponsorship_holds_project_id_livemode_account_id_created_at_index";--> statement-breakpoint
ALTER TABLE "sponsorship_holds" ADD COLUMN "chain_time" timestamp with time zone DEFAULT now() NOT NULL;--> statement-breakpoint
CREATE INDEX "sponsorship_holds_policy_id_chain_time_index" ON "sponsorship_holds" USING btree ("policy_id","chain_time");--> statement-breakpoint
CREATE INDEX "sponsorship_holds_project_id_livemode_player_id_chain_time_index" ON "sponsorship_holds" USING btree ("project_id","livemode","player_id","chain_time");--> statement-breakpoint
CREATE INDEX "sponsorship_holds_project_id_livemode_account_id_chain_time_index" ON "sponsorship_holds" USING btree ("project_id","livemode","account_id","chain_time");