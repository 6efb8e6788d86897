-- The resource convention for organizations, users, clients and tokens (issue 35 item 3), and
-- Teleport's sub_kind and expiry on every kind (docs/inventory.md). Each of those rows gets an
-- opaque revision (its ETag: a write changes it), a sub_kind, and users, clients and tokens an
-- expiry (tokens had one: expires_at); tokens get labels and updated_at. Rows already there get
-- a revision each; a row inserted without one gets a random one from the default. It may run
-- again over its own result (IF NOT EXISTS), as t/5002 does when it replays 0015 onwards.
ALTER TABLE organizations
  ADD COLUMN IF NOT EXISTS revision CHAR(16) NOT NULL DEFAULT (LEFT(MD5(RAND()), 16)),
  ADD COLUMN IF NOT EXISTS sub_kind VARCHAR(63) NULL,
  ADD KEY IF NOT EXISTS organizations_created (created_at, name),
  ADD KEY IF NOT EXISTS organizations_full_name (full_name(255), name);
UPDATE organizations SET revision = LEFT(MD5(CONCAT(RAND(), id, name)), 16);

ALTER TABLE principals
  ADD COLUMN IF NOT EXISTS revision CHAR(16) NOT NULL DEFAULT (LEFT(MD5(RAND()), 16)),
  ADD COLUMN IF NOT EXISTS sub_kind VARCHAR(63) NULL,
  ADD COLUMN IF NOT EXISTS expires_at DATETIME(6) NULL,
  ADD KEY IF NOT EXISTS principals_created (kind, org_scope, created_at, name),
  ADD KEY IF NOT EXISTS principals_display (kind, org_scope, display_name(255), name),
  ADD KEY IF NOT EXISTS principals_expires (kind, org_scope, expires_at);
UPDATE principals SET revision = LEFT(MD5(CONCAT(RAND(), id, name)), 16);

ALTER TABLE api_tokens
  ADD COLUMN IF NOT EXISTS revision CHAR(16) NOT NULL DEFAULT (LEFT(MD5(RAND()), 16)),
  ADD COLUMN IF NOT EXISTS sub_kind VARCHAR(63) NULL,
  ADD COLUMN IF NOT EXISTS labels LONGTEXT NULL,
  ADD COLUMN IF NOT EXISTS updated_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
  ADD KEY IF NOT EXISTS api_tokens_created (principal_id, created_at, id),
  ADD KEY IF NOT EXISTS api_tokens_expires (principal_id, expires_at);
UPDATE api_tokens SET revision = LEFT(MD5(CONCAT(RAND(), id)), 16), updated_at = created_at;

-- Clusters (and every kind the resources table holds): sub_kind and expiry; an expired one is
-- found by organization, kind and time.
ALTER TABLE resources
  ADD COLUMN IF NOT EXISTS sub_kind VARCHAR(63) NULL,
  ADD COLUMN IF NOT EXISTS expires_at DATETIME(6) NULL,
  ADD KEY IF NOT EXISTS resources_expires (org_id, kind, expires_at);
