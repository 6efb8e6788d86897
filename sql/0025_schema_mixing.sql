-- Which releases may serve on one database during a rolling upgrade (docs/operator/upgrades.md):
-- each applied migration says whether it contracts the schema (drops or rewrites what an older
-- binary reads or writes). A binary made for schema N serves on a newer schema when no
-- migration after N contracts it (lib/store/migrate.c, migrate_serves); a migration file marks
-- itself with a line `-- purser: contract`. Of those before this one, 0019 contracts
-- (doc_revision_documents' rows rewritten, its key rebuilt, a table dropped). Expand only: a
-- binary that does not know the column records its migrations as before.
ALTER TABLE schema_migrations ADD COLUMN IF NOT EXISTS contract TINYINT(1) NOT NULL DEFAULT 0;
UPDATE schema_migrations SET contract = 1 WHERE version = 19;
