-- Secret keys are now sealed bound to project, mode and key id (lib/projects/sealed-keys.ts). Those sealed
-- before, with the project id alone, are marked: they still open that way until resealed bound at start.
UPDATE "api_keys" SET "encrypted_secret" = 'project-bound:' || "encrypted_secret" WHERE "encrypted_secret" IS NOT NULL AND "encrypted_secret" NOT LIKE 'project-bound:%';
