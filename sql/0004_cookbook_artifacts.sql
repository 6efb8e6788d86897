-- Cookbook artifacts and the sandboxes chef push uploads their files through. File contents
-- are addressed by their MD5 checksum (Chef's), once per organization.
CREATE TABLE file_contents (
  org_id BIGINT NOT NULL,
  checksum CHAR(32) NOT NULL,
  size BIGINT NOT NULL,
  content LONGBLOB NOT NULL,
  created_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
  PRIMARY KEY (org_id, checksum),
  CONSTRAINT file_contents_org FOREIGN KEY (org_id) REFERENCES organizations (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE sandboxes (
  id CHAR(32) NOT NULL PRIMARY KEY,
  org_id BIGINT NOT NULL,
  completed TINYINT(1) NOT NULL DEFAULT 0,
  created_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
  CONSTRAINT sandboxes_org FOREIGN KEY (org_id) REFERENCES organizations (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE sandbox_checksums (
  sandbox_id CHAR(32) NOT NULL,
  checksum CHAR(32) NOT NULL,
  PRIMARY KEY (sandbox_id, checksum),
  CONSTRAINT sandbox_checksums_sandbox FOREIGN KEY (sandbox_id) REFERENCES sandboxes (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE cookbook_artifacts (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  org_id BIGINT NOT NULL,
  name VARCHAR(255) NOT NULL,
  identifier VARCHAR(255) NOT NULL,
  version VARCHAR(255) NOT NULL,
  content_sha256 CHAR(64) NOT NULL,
  body LONGTEXT NOT NULL,
  created_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
  created_by VARCHAR(255) NOT NULL,
  UNIQUE KEY cookbook_artifacts_id (org_id, name, identifier),
  CONSTRAINT cookbook_artifacts_org FOREIGN KEY (org_id) REFERENCES organizations (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
