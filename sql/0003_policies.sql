-- Policyfile API: policies, their immutable revisions (locks as received), policy groups, the
-- group -> policy -> revision pointers, and nodes.
CREATE TABLE policies (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  org_id BIGINT NOT NULL,
  name VARCHAR(255) NOT NULL,
  created_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
  UNIQUE KEY policies_name (org_id, name),
  CONSTRAINT policies_org FOREIGN KEY (org_id) REFERENCES organizations (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- body is the lock as received (compact JSON, key order kept, policy_group removed);
-- content_sha256 is over its canonical form (sorted keys), to tell identical uploads apart.
CREATE TABLE policy_revisions (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  policy_id BIGINT NOT NULL,
  revision_id VARCHAR(255) NOT NULL,
  content_sha256 CHAR(64) NOT NULL,
  body LONGTEXT NOT NULL,
  created_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
  created_by VARCHAR(255) NOT NULL,
  UNIQUE KEY policy_revisions_id (policy_id, revision_id),
  KEY policy_revisions_created (policy_id, created_at),
  CONSTRAINT policy_revisions_policy FOREIGN KEY (policy_id) REFERENCES policies (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE policy_groups (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  org_id BIGINT NOT NULL,
  name VARCHAR(255) NOT NULL,
  created_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
  UNIQUE KEY policy_groups_name (org_id, name),
  CONSTRAINT policy_groups_org FOREIGN KEY (org_id) REFERENCES organizations (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- One pointer per group and policy. Deleting a group, a policy or the revision removes it.
CREATE TABLE policy_group_pointers (
  group_id BIGINT NOT NULL,
  policy_id BIGINT NOT NULL,
  revision_pk BIGINT NOT NULL,
  updated_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6),
  updated_by VARCHAR(255) NOT NULL,
  PRIMARY KEY (group_id, policy_id),
  KEY policy_group_pointers_revision (revision_pk),
  CONSTRAINT pointers_group FOREIGN KEY (group_id) REFERENCES policy_groups (id) ON DELETE CASCADE,
  CONSTRAINT pointers_policy FOREIGN KEY (policy_id) REFERENCES policies (id) ON DELETE CASCADE,
  CONSTRAINT pointers_revision FOREIGN KEY (revision_pk) REFERENCES policy_revisions (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE nodes (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  org_id BIGINT NOT NULL,
  name VARCHAR(255) NOT NULL,
  policy_name VARCHAR(255) NULL,
  policy_group VARCHAR(255) NULL,
  body LONGTEXT NOT NULL,
  created_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
  updated_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6),
  UNIQUE KEY nodes_name (org_id, name),
  KEY nodes_policy (org_id, policy_group, policy_name),
  CONSTRAINT nodes_org FOREIGN KEY (org_id) REFERENCES organizations (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
