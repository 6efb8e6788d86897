-- The document store (Deckhand-compatible): buckets, numbered revisions per organization,
-- document contents stored once, and each revision's membership rows pointing at them.
--
-- A revision is the set of rows in doc_revision_documents with its id: reading revision N
-- reads N's rows only (an index range), never the history before it. The filter columns
-- (schema, name, layer, abstract, bucket, encrypted) are copied into the membership rows so
-- that every filter of GET revisions/{id}/documents is an indexed query.

-- One row per organization: the lock writers take, and the next revision id (DELETE
-- revisions sets it back to 1).
CREATE TABLE doc_heads (
  org_id BIGINT NOT NULL PRIMARY KEY,
  next_revision BIGINT NOT NULL DEFAULT 1,
  CONSTRAINT doc_heads_org FOREIGN KEY (org_id) REFERENCES organizations (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE doc_buckets (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  org_id BIGINT NOT NULL,
  name VARCHAR(255) NOT NULL,
  UNIQUE KEY doc_buckets_name (org_id, name),
  CONSTRAINT doc_buckets_org FOREIGN KEY (org_id) REFERENCES organizations (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- buckets: the sorted JSON array of the bucket names the revision holds documents of.
CREATE TABLE doc_revisions (
  org_id BIGINT NOT NULL,
  id BIGINT NOT NULL,
  created_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
  created_by VARCHAR(255) NOT NULL,
  buckets TEXT NOT NULL,
  PRIMARY KEY (org_id, id),
  CONSTRAINT doc_revisions_org FOREIGN KEY (org_id) REFERENCES organizations (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- One row per distinct content of a document. content_sha256 covers the identity (schema,
-- layer, name), the metadata and the data in canonical form; for encrypted documents it is
-- random instead, so that the table holds nothing derived from a secret. data is compact JSON,
-- or for encrypted documents nonce || ciphertext || tag sealed under keyring slot key_id.
-- yaml is the document (schema, metadata, data) as the API sends it, emitted once when the
-- content is stored (contents never change), so that reads send it without re-encoding;
-- NULL for encrypted documents, whose data exists in clear only in memory.
CREATE TABLE doc_contents (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  org_id BIGINT NOT NULL,
  content_sha256 BINARY(32) NOT NULL,
  schema_name VARCHAR(255) NOT NULL,
  layer VARCHAR(255) NOT NULL,
  name VARCHAR(255) NOT NULL,
  encrypted TINYINT(1) NOT NULL DEFAULT 0,
  key_id INT NULL,
  metadata LONGTEXT NOT NULL,
  data LONGBLOB NOT NULL,
  yaml LONGTEXT NULL,
  created_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
  UNIQUE KEY doc_contents_sha (org_id, content_sha256),
  KEY doc_contents_key (encrypted, key_id),
  CONSTRAINT doc_contents_org FOREIGN KEY (org_id) REFERENCES organizations (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- metadata.labels of each content, for the AND-ed metadata.label filter.
CREATE TABLE doc_labels (
  content_id BIGINT NOT NULL,
  label_key VARCHAR(255) NOT NULL,
  label_value VARCHAR(1024) NOT NULL,
  PRIMARY KEY (content_id, label_key),
  KEY doc_labels_pair (label_key, label_value(191)),
  CONSTRAINT doc_labels_content FOREIGN KEY (content_id) REFERENCES doc_contents (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- since_revision: the revision from which this content has been in place without a break
-- (status.revision when the document is read).
CREATE TABLE doc_revision_documents (
  org_id BIGINT NOT NULL,
  revision_id BIGINT NOT NULL,
  content_id BIGINT NOT NULL,
  bucket_id BIGINT NOT NULL,
  since_revision BIGINT NOT NULL,
  schema_name VARCHAR(255) NOT NULL,
  layer VARCHAR(255) NOT NULL,
  name VARCHAR(255) NOT NULL,
  abstract TINYINT(1) NOT NULL,
  encrypted TINYINT(1) NOT NULL,
  PRIMARY KEY (org_id, revision_id, content_id),
  KEY doc_rd_schema (org_id, revision_id, schema_name, name),
  KEY doc_rd_name (org_id, revision_id, name),
  KEY doc_rd_layer (org_id, revision_id, layer),
  KEY doc_rd_abstract (org_id, revision_id, abstract),
  KEY doc_rd_bucket (org_id, revision_id, bucket_id),
  KEY doc_rd_content (content_id),
  CONSTRAINT doc_rd_fk_revision FOREIGN KEY (org_id, revision_id) REFERENCES doc_revisions (org_id, id) ON DELETE CASCADE,
  CONSTRAINT doc_rd_fk_content FOREIGN KEY (content_id) REFERENCES doc_contents (id) ON DELETE CASCADE,
  CONSTRAINT doc_rd_fk_bucket FOREIGN KEY (bucket_id) REFERENCES doc_buckets (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE doc_tags (
  org_id BIGINT NOT NULL,
  revision_id BIGINT NOT NULL,
  tag VARCHAR(255) NOT NULL,
  data TEXT NOT NULL,
  PRIMARY KEY (org_id, revision_id, tag),
  KEY doc_tags_tag (org_id, tag),
  CONSTRAINT doc_tags_revision FOREIGN KEY (org_id, revision_id) REFERENCES doc_revisions (org_id, id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- Validation results posted against a revision; entry_id counts from 0 per (revision, name).
CREATE TABLE doc_validations (
  org_id BIGINT NOT NULL,
  revision_id BIGINT NOT NULL,
  name VARCHAR(255) NOT NULL,
  entry_id INT NOT NULL,
  status VARCHAR(32) NOT NULL,
  validator TEXT NOT NULL,
  errors LONGTEXT NOT NULL,
  created_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
  PRIMARY KEY (org_id, revision_id, name, entry_id),
  CONSTRAINT doc_validations_revision FOREIGN KEY (org_id, revision_id) REFERENCES doc_revisions (org_id, id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
