-- Identity: organizations, principals (users and clients), their keys and tokens, and
-- memberships (a principal's roles in an organization).
CREATE TABLE organizations (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  name VARCHAR(255) NOT NULL,
  full_name VARCHAR(1023) NOT NULL,
  guid CHAR(32) NOT NULL,
  created_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
  updated_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6),
  UNIQUE KEY organizations_name (name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- Users have org_id NULL and globally unique names; clients belong to one organization and
-- their names are unique in it. org_scope makes both one unique key.
CREATE TABLE principals (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  kind ENUM('user', 'client') NOT NULL,
  org_id BIGINT NULL,
  org_scope BIGINT AS (COALESCE(org_id, 0)) PERSISTENT,
  name VARCHAR(255) NOT NULL,
  display_name VARCHAR(1023) NOT NULL DEFAULT '',
  first_name VARCHAR(1023) NOT NULL DEFAULT '',
  last_name VARCHAR(1023) NOT NULL DEFAULT '',
  email VARCHAR(1023) NOT NULL DEFAULT '',
  validator TINYINT(1) NOT NULL DEFAULT 0,
  server_admin TINYINT(1) NOT NULL DEFAULT 0,
  created_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
  updated_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6),
  UNIQUE KEY principals_name (kind, org_scope, name),
  CONSTRAINT principals_org FOREIGN KEY (org_id) REFERENCES organizations (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- RSA public keys in PEM (Chef's keys API); expires_at NULL means "infinity".
CREATE TABLE principal_keys (
  principal_id BIGINT NOT NULL,
  name VARCHAR(255) NOT NULL,
  public_key TEXT NOT NULL,
  expires_at DATETIME NULL,
  created_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
  PRIMARY KEY (principal_id, name),
  CONSTRAINT principal_keys_principal FOREIGN KEY (principal_id) REFERENCES principals (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- Bearer tokens: only the SHA-256 of the token is kept.
CREATE TABLE api_tokens (
  id CHAR(16) NOT NULL PRIMARY KEY,
  principal_id BIGINT NOT NULL,
  token_sha256 CHAR(64) NOT NULL,
  description VARCHAR(1023) NOT NULL DEFAULT '',
  expires_at DATETIME NULL,
  last_used_at DATETIME NULL,
  created_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
  UNIQUE KEY api_tokens_hash (token_sha256),
  CONSTRAINT api_tokens_principal FOREIGN KEY (principal_id) REFERENCES principals (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE memberships (
  org_id BIGINT NOT NULL,
  principal_id BIGINT NOT NULL,
  role VARCHAR(64) NOT NULL,
  created_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
  PRIMARY KEY (org_id, principal_id, role),
  KEY memberships_principal (principal_id),
  CONSTRAINT memberships_org FOREIGN KEY (org_id) REFERENCES organizations (id) ON DELETE CASCADE,
  CONSTRAINT memberships_principal FOREIGN KEY (principal_id) REFERENCES principals (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
