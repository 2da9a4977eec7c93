-- Every process caches API key lookups briefly (lib/db/invalidation.ts); a change to a key (a roll, a revocation),
-- by whatever writes it, tells every process listening to drop what it cached.
CREATE OR REPLACE FUNCTION notify_cache_invalidation() RETURNS trigger AS $$
BEGIN
  PERFORM pg_notify('cache_invalidation', TG_TABLE_NAME);
  RETURN NULL;
END
$$ LANGUAGE plpgsql;
--> statement-breakpoint
CREATE TRIGGER api_keys_cache_invalidation AFTER UPDATE OR DELETE ON api_keys FOR EACH STATEMENT EXECUTE FUNCTION notify_cache_invalidation();
