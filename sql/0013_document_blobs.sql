-- A content's metadata and YAML are stored and read as bytes, as its data is: purser writes
-- them (valid UTF-8, checked when the payload was read) and sends them back unchanged, so
-- MariaDB's check of each value against utf8mb4 on every insert only cost the writes
-- (issue 18: PUT of a 4,000-document bundle at the codec's pace).
ALTER TABLE doc_contents MODIFY metadata LONGBLOB NOT NULL, MODIFY yaml LONGBLOB NULL;
