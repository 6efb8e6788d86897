-- OpenID Connect sign-in (issue 52): identity providers (server-wide, the resource envelope's
-- columns without an organization; the client secret sealed with the keyring, never shown
-- again), who a provider's subject is here, the sign-ins under way (state, nonce and the PKCE
-- verifier kept server-side, one-time and short-lived, only the SHA-256 of the state as key;
-- a device sign-in's device code, kept for its polls), the one-time codes a finished sign-in
-- hands to the page or purserctl for its session token, and what a provider made: memberships
-- its mappings granted (taken back at the next sign-in when the groups no longer grant them)
-- and session tokens (gone with the provider).
-- Expand only, re-runnable.
CREATE TABLE IF NOT EXISTS identity_providers (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  name VARCHAR(63) NOT NULL,
  revision CHAR(16) NOT NULL,
  labels LONGTEXT NOT NULL,
  description TEXT NOT NULL,
  spec LONGTEXT NOT NULL,
  secret_key_id INT NOT NULL,
  client_secret VARBINARY(2048) NOT NULL,
  created_at DATETIME(6) NOT NULL,
  updated_at DATETIME(6) NOT NULL,
  UNIQUE KEY identity_providers_name (name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin;

CREATE TABLE IF NOT EXISTS user_external_ids (
  provider_id BIGINT NOT NULL,
  subject VARCHAR(255) NOT NULL,
  issuer VARCHAR(512) NOT NULL,
  principal_id BIGINT NOT NULL,
  created_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
  PRIMARY KEY (provider_id, subject),
  KEY user_external_ids_principal (principal_id),
  CONSTRAINT user_external_ids_provider FOREIGN KEY (provider_id) REFERENCES identity_providers (id) ON DELETE CASCADE,
  CONSTRAINT user_external_ids_principal FOREIGN KEY (principal_id) REFERENCES principals (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin;

CREATE TABLE IF NOT EXISTS oidc_logins (
  state_sha256 CHAR(64) NOT NULL PRIMARY KEY,
  provider_id BIGINT NOT NULL,
  nonce VARCHAR(64) NOT NULL,
  code_verifier VARCHAR(128) NOT NULL,
  return_to VARCHAR(512) NOT NULL,
  device_code VARCHAR(2048) NULL,
  expires_at DATETIME(6) NOT NULL,
  KEY oidc_logins_expires (expires_at),
  CONSTRAINT oidc_logins_provider FOREIGN KEY (provider_id) REFERENCES identity_providers (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin;

CREATE TABLE IF NOT EXISTS oidc_handoffs (
  code_sha256 CHAR(64) NOT NULL PRIMARY KEY,
  provider_id BIGINT NOT NULL,
  principal_id BIGINT NOT NULL,
  expires_at DATETIME(6) NOT NULL,
  KEY oidc_handoffs_expires (expires_at),
  CONSTRAINT oidc_handoffs_provider FOREIGN KEY (provider_id) REFERENCES identity_providers (id) ON DELETE CASCADE,
  CONSTRAINT oidc_handoffs_principal FOREIGN KEY (principal_id) REFERENCES principals (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin;

ALTER TABLE memberships ADD COLUMN IF NOT EXISTS provider_id BIGINT NULL;
ALTER TABLE api_tokens ADD COLUMN IF NOT EXISTS provider_id BIGINT NULL,
  ADD KEY IF NOT EXISTS api_tokens_provider (provider_id);
