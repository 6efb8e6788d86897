-- The nodes list sorted by last save (GET .../nodes?sort=updated_at, the admin pages' "last
-- check-in"): an index in that order (ties by name), so that a page of 100,000 nodes is read
-- along it, not sorted whole. Re-runnable.
CREATE INDEX IF NOT EXISTS nodes_updated ON nodes (org_id, updated_at, name);
