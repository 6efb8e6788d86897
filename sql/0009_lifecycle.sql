-- OSIS's life cycle on what exists (issue 12 item 5): labels on organizations and users,
-- organizations' external ids (OSIS's cd_tenant_ids: one organization per id), and `active`
-- on users, clients and tokens (a deactivated one is refused as if it did not exist).
CREATE TABLE organization_external_ids (
  external_id VARCHAR(255) NOT NULL PRIMARY KEY,
  org_id BIGINT NOT NULL,
  KEY organization_external_ids_org (org_id),
  CONSTRAINT organization_external_ids_org FOREIGN KEY (org_id) REFERENCES organizations (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin;
ALTER TABLE organizations ADD COLUMN labels LONGTEXT NULL;
ALTER TABLE principals ADD COLUMN labels LONGTEXT NULL, ADD COLUMN active TINYINT(1) NOT NULL DEFAULT 1;
ALTER TABLE api_tokens ADD COLUMN active TINYINT(1) NOT NULL DEFAULT 1;
