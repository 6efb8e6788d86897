-- A document's row holds an interval of revisions (issue 36): revision_id is the first
-- revision that holds it, until_revision the first that does not (9223372036854775807 while
-- the newest does), so a revision that changes k documents adds k rows and closes k, whatever
-- the site's size. Revision N's documents are the rows with revision_id <= N < until_revision:
-- the primary key's range until_revision > N, which for the newest revision is the open rows
-- alone. since_revision keeps its meaning (status.revision).
--
-- The history already stored (a row per document per revision) is converted in place, one
-- revision at a time in order, each in a transaction of its own: the open rows that revision r
-- does not hold close at r, r's rows that continue an open row go, and its others open. A row
-- not yet converted has until_revision 0; doc_rd_converted records each organization's last
-- converted revision, so that a conversion interrupted goes on where it stopped. Progress is
-- a result row (purser migrate prints it) every twentieth of the revisions. Run again over the
-- new layout (a replay of the migrations), it changes nothing.
BEGIN NOT ATOMIC
  DECLARE total, done, step BIGINT DEFAULT 0;
  IF NOT EXISTS (SELECT 1 FROM information_schema.columns WHERE table_schema = DATABASE()
                 AND table_name = 'doc_revision_documents' AND column_name = 'until_revision') THEN
    ALTER TABLE doc_revision_documents
      ADD COLUMN until_revision BIGINT NOT NULL DEFAULT 0 AFTER revision_id,
      ADD KEY doc_rd_revision (org_id, revision_id),
      ADD KEY doc_rd_until (org_id, until_revision);
    CREATE TABLE IF NOT EXISTS doc_rd_converted (
      org_id BIGINT NOT NULL PRIMARY KEY,
      revision_id BIGINT NOT NULL
    ) ENGINE=InnoDB;
  END IF;
  IF EXISTS (SELECT 1 FROM information_schema.statistics WHERE table_schema = DATABASE()
             AND table_name = 'doc_revision_documents' AND index_name = 'doc_rd_until') THEN
    SELECT COUNT(*) INTO total FROM doc_revisions v LEFT JOIN doc_rd_converted c
      ON c.org_id = v.org_id WHERE c.revision_id IS NULL OR v.id > c.revision_id;
    SET step = GREATEST(1, CEIL(total / 20));
    FOR r IN (SELECT v.org_id, v.id FROM doc_revisions v LEFT JOIN doc_rd_converted c
                ON c.org_id = v.org_id WHERE c.revision_id IS NULL OR v.id > c.revision_id
               ORDER BY v.org_id, v.id) DO
      START TRANSACTION;
      UPDATE doc_revision_documents y LEFT JOIN doc_revision_documents x
          ON x.org_id = y.org_id AND x.revision_id = r.id AND x.content_id = y.content_id
         AND x.until_revision = 0 AND x.bucket_id = y.bucket_id
         AND x.since_revision = y.since_revision
         SET y.until_revision = r.id
       WHERE y.org_id = r.org_id AND y.until_revision = 9223372036854775807 AND x.org_id IS NULL;
      DELETE x FROM doc_revision_documents x JOIN doc_revision_documents y
          ON y.org_id = x.org_id AND y.until_revision = 9223372036854775807
         AND y.content_id = x.content_id AND y.bucket_id = x.bucket_id
         AND y.since_revision = x.since_revision
       WHERE x.org_id = r.org_id AND x.revision_id = r.id AND x.until_revision = 0;
      UPDATE doc_revision_documents SET until_revision = 9223372036854775807
       WHERE org_id = r.org_id AND revision_id = r.id AND until_revision = 0;
      INSERT INTO doc_rd_converted (org_id, revision_id) VALUES (r.org_id, r.id)
        ON DUPLICATE KEY UPDATE revision_id = r.id;
      COMMIT;
      SET done = done + 1;
      IF done % step = 0 OR done = total THEN
        SELECT CONCAT('documents of ', done, ' of ', total, ' revisions converted') AS progress;
      END IF;
    END FOR;
    ALTER TABLE doc_revision_documents
      ALTER COLUMN until_revision SET DEFAULT 9223372036854775807,
      DROP PRIMARY KEY,
      ADD PRIMARY KEY (org_id, until_revision, revision_id, content_id),
      DROP INDEX doc_rd_until,
      DROP INDEX doc_rd_schema,
      DROP INDEX doc_rd_org_schema,
      ADD KEY doc_rd_schema (org_id, schema_name, until_revision, revision_id);
    DROP TABLE doc_rd_converted;
  END IF;
END;
