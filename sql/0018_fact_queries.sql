-- Queries over clusters' dynamic facts and the server-wide cluster list (issue 35 item 4).
--
-- resource_values holds a kind's indexed values (clusters: status.dynamic_facts, written with
-- each report by lib/resource/resource_values.c), one row per leaf: its path (the keys from the
-- top joined by '.'; a list's items under the list's own path), its value as text (a string
-- as it is, a number as its JSON text, true or false; null is left out) and, when the value is
-- a version, a key that sorts as versions do (resource_values_version_key: four numbers of ten
-- digits, "." between, then "-" and the pre-release, or "~" for a release; the build after "+"
-- dropped). org_id, kind and name repeat the resource's so that an equality walks
-- values_select in name order, as labels_select does. A path or value over 191 characters, or
-- nested deeper than 32, is not indexed (docs/inventory.md).
--
-- The statements may run again (t/6011 does): the rows clusters already had are filled from
-- their stored facts here, with the same rules as the C code (the version key as
-- resource_values.c computes it; t/6011 compares the two). A report of more than 1,000
-- values keeps its first 1,000 in document order when written by purser; filled here, any
-- 1,000 of them until the cluster reports again.
CREATE TABLE IF NOT EXISTS resource_values (
  resource_id BIGINT NOT NULL,
  org_id BIGINT NOT NULL,
  kind VARCHAR(63) NOT NULL,
  name VARCHAR(255) NOT NULL,
  path VARCHAR(191) NOT NULL,
  value VARCHAR(191) NOT NULL,
  version VARCHAR(128) NULL,
  PRIMARY KEY (resource_id, path, value),
  KEY values_select (org_id, kind, path, value, name),
  KEY values_version (org_id, kind, path, version, name),
  CONSTRAINT resource_values_resource FOREIGN KEY (resource_id) REFERENCES resources (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin;

-- The server-wide list (GET /clusters) in name order, then organization.
ALTER TABLE resources ADD KEY IF NOT EXISTS resources_all (kind, name, org_id);

-- Only when some cluster has reported facts: a new database skips it (and its temporary tables).
BEGIN NOT ATOMIC
IF EXISTS (SELECT 1 FROM resources WHERE kind = 'cluster' AND status LIKE '%"dynamic_facts"%') THEN
INSERT INTO resource_values (resource_id, org_id, kind, name, path, value, version)
WITH RECURSIVE walk (resource_id, path, v, depth) AS (
  SELECT id, CAST('' AS VARCHAR(8192)), JSON_EXTRACT(status, '$.dynamic_facts'), 0
  FROM resources
  WHERE kind = 'cluster' AND JSON_VALID(status)
    AND JSON_TYPE(JSON_EXTRACT(status, '$.dynamic_facts')) = 'OBJECT'
  UNION ALL
  SELECT w.resource_id,
         IF(JSON_TYPE(w.v) = 'OBJECT', CONCAT(w.path, IF(w.path = '', '', '.'), k.k), w.path),
         IF(JSON_TYPE(w.v) = 'OBJECT',
            JSON_EXTRACT(w.v, CONCAT('$."', REPLACE(REPLACE(k.k, '\\', '\\\\'), '"', '\\"'), '"')),
            JSON_EXTRACT(w.v, CONCAT('$[', k.n - 1, ']'))),
         w.depth + 1
  FROM walk w
  JOIN JSON_TABLE(IF(JSON_TYPE(w.v) = 'OBJECT', JSON_KEYS(w.v), w.v), '$[*]'
                  COLUMNS (n FOR ORDINALITY, k VARCHAR(8192) PATH '$')) k
  WHERE JSON_TYPE(w.v) IN ('OBJECT', 'ARRAY') AND w.depth < 32 AND CHAR_LENGTH(w.path) <= 191
),
leaf AS (
  SELECT resource_id, path,
         CASE JSON_TYPE(v) WHEN 'STRING' THEN JSON_UNQUOTE(v) ELSE v END AS value
  FROM walk
  WHERE JSON_TYPE(v) IN ('STRING', 'INTEGER', 'DOUBLE', 'BOOLEAN') AND path <> ''
    AND CHAR_LENGTH(path) <= 191
),
parsed AS (
  SELECT resource_id, path, value,
         IF(value REGEXP '^[vV]?[0-9]{1,10}(\\.[0-9]{1,10}){0,3}(-[0-9A-Za-z.-]+)?(\\+[0-9A-Za-z.-]+)?$',
            REGEXP_REPLACE(SUBSTRING_INDEX(value, '+', 1), '^[vV]', ''), NULL) AS bare
  FROM leaf
  WHERE CHAR_LENGTH(value) <= 191
),
split AS (
  SELECT resource_id, path, value, bare,
         SUBSTRING_INDEX(bare, '-', 1) AS core,
         IF(LOCATE('-', bare) > 0, SUBSTRING(bare, LOCATE('-', bare) + 1), NULL) AS pre
  FROM parsed
),
keyed AS (
  SELECT resource_id, path, value,
         IF(bare IS NULL, NULL,
            CONCAT(LPAD(SUBSTRING_INDEX(core, '.', 1), 10, '0'), '.',
                   LPAD(IF(LENGTH(core) - LENGTH(REPLACE(core, '.', '')) >= 1,
                           SUBSTRING_INDEX(SUBSTRING_INDEX(core, '.', 2), '.', -1), '0'), 10, '0'), '.',
                   LPAD(IF(LENGTH(core) - LENGTH(REPLACE(core, '.', '')) >= 2,
                           SUBSTRING_INDEX(SUBSTRING_INDEX(core, '.', 3), '.', -1), '0'), 10, '0'), '.',
                   LPAD(IF(LENGTH(core) - LENGTH(REPLACE(core, '.', '')) >= 3,
                           SUBSTRING_INDEX(SUBSTRING_INDEX(core, '.', 4), '.', -1), '0'), 10, '0'),
                   IF(pre IS NULL, '~', CONCAT('-', pre)))) AS version
  FROM split
),
numbered AS (
  SELECT k.*, ROW_NUMBER() OVER (PARTITION BY k.resource_id ORDER BY k.path, k.value) AS n
  FROM keyed k
)
SELECT n.resource_id, r.org_id, r.kind, r.name, n.path, n.value,
       IF(CHAR_LENGTH(n.version) <= 128, n.version, NULL)
FROM numbered n JOIN resources r ON r.id = n.resource_id
WHERE n.n <= 1000
ON DUPLICATE KEY UPDATE version = VALUES(version);
END IF;
END;
