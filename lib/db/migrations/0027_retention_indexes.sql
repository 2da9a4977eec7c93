CREATE INDEX "oauth_signins_expires_at_index" ON "oauth_signins" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "player_credential_tokens_used_at_index" ON "player_credential_tokens" USING btree ("used_at");--> statement-breakpoint
CREATE INDEX "player_sessions_expires_at_index" ON "player_sessions" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "player_sessions_revoked_at_index" ON "player_sessions" USING btree ("revoked_at");--> statement-breakpoint
CREATE INDEX "request_logs_created_at_index" ON "request_logs" USING btree ("created_at");