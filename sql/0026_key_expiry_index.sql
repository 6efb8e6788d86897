-- GET /metrics' purser_key_next_expiry_timestamp_seconds (lib/auth/key_expiry.c) asks for
-- MIN(expires_at) over the live Chef keys (expires_at > UTC_TIMESTAMP()); without an index on
-- expires_at that reads every row of principal_keys at each scrape. With this one MariaDB reads
-- one index entry (EXPLAIN: "Select tables optimized away"; t/1001 holds it). Expand only: an
-- older purser-fcgi serves on it (docs/operator/upgrades.md; t/9008 rolls from the release
-- before it). Re-runnable; in place, without blocking reads or writes.
ALTER TABLE principal_keys ADD INDEX IF NOT EXISTS principal_keys_expires (expires_at),
  ALGORITHM=INPLACE, LOCK=NONE;
