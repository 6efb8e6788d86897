-- metadata.labels of each content, in the content's own row: a write stores one row per new
-- content instead of one more per label (issue 18: PUT of a 4,000-document bundle at the
-- codec's pace), and the label filter, which checks the rows of one revision, reads them
-- there. Each label is hex(key)=hex(value) (lowercase, crypto_hex's), the labels between
-- commas: a filter key=value matches the exact bytes of both, whatever characters they hold.
-- NULL: no labels.
SET SESSION group_concat_max_len = 1073741824;
ALTER TABLE doc_contents ADD COLUMN IF NOT EXISTS labels BLOB NULL;
UPDATE doc_contents c SET labels =
  (SELECT CONCAT(',', GROUP_CONCAT(CONCAT(LOWER(HEX(l.label_key)), '=', LOWER(HEX(l.label_value)))
                                   SEPARATOR ','), ',')
   FROM doc_labels l WHERE l.content_id = c.id);
DROP TABLE doc_labels;
