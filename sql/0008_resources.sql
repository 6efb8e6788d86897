-- The resource convention (docs/inventory.md): one table for every kind that follows it, its
-- labels (for selectors), and the inventory's dynamic facts history and bootstrap tokens.
-- labels, annotations and spec are compact JSON as the client wrote them (checked), status what
-- the server computes (JSON, or NULL for none): kept apart so that a page is written out from
-- them without parsing. revision is opaque (random) and changes on every write. title is the
-- kind's own sort field besides name (clusters: spec.display_name), cut to 255 characters.
CREATE TABLE resources (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  org_id BIGINT NOT NULL,
  kind VARCHAR(63) NOT NULL,
  name VARCHAR(255) NOT NULL,
  revision CHAR(16) NOT NULL,
  title VARCHAR(255) NOT NULL DEFAULT '',
  labels LONGTEXT NOT NULL,
  annotations LONGTEXT NOT NULL,
  description TEXT NOT NULL,
  spec LONGTEXT NOT NULL,
  status LONGTEXT NULL,
  created_at DATETIME(6) NOT NULL,
  updated_at DATETIME(6) NOT NULL,
  UNIQUE KEY resources_name (org_id, kind, name),
  KEY resources_created (org_id, kind, created_at, name),
  KEY resources_title (org_id, kind, title, name),
  CONSTRAINT resources_org FOREIGN KEY (org_id) REFERENCES organizations (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin;

-- One row per label; org_id, kind and name repeat the resource's so that an equality selector
-- walks labels_select in name order (keyset pages that do not scan the table).
CREATE TABLE resource_labels (
  resource_id BIGINT NOT NULL,
  org_id BIGINT NOT NULL,
  kind VARCHAR(63) NOT NULL,
  name VARCHAR(255) NOT NULL,
  lkey VARCHAR(317) NOT NULL,
  lvalue VARCHAR(63) NOT NULL,
  PRIMARY KEY (resource_id, lkey),
  KEY labels_select (org_id, kind, lkey, lvalue, name),
  CONSTRAINT resource_labels_resource FOREIGN KEY (resource_id) REFERENCES resources (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin;

-- Each dynamic facts report of a cluster, newest last; inventory.facts_versions bounds them.
CREATE TABLE cluster_facts (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  resource_id BIGINT NOT NULL,
  facts LONGTEXT NOT NULL,
  author VARCHAR(255) NOT NULL,
  created_at DATETIME(6) NOT NULL,
  KEY cluster_facts_order (resource_id, id),
  CONSTRAINT cluster_facts_resource FOREIGN KEY (resource_id) REFERENCES resources (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin;

-- A cluster's single-use bootstrap token, stored only as its SHA-256.
CREATE TABLE bootstrap_tokens (
  resource_id BIGINT NOT NULL PRIMARY KEY,
  token_sha256 CHAR(64) NOT NULL,
  expires_at DATETIME(6) NOT NULL,
  used_at DATETIME(6) NULL,
  UNIQUE KEY bootstrap_tokens_hash (token_sha256),
  CONSTRAINT bootstrap_tokens_resource FOREIGN KEY (resource_id) REFERENCES resources (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin;
