-- A revision's rows are read through their (org_id, revision_id) prefix, a range of one
-- revision; the layer and abstract filters are a few values each, which the range checks as
-- cheaply as an index of their own would find them. Those two indexes only cost every write
-- (issue 18: PUT of a 4,000-document bundle at the codec's pace).
DROP INDEX IF EXISTS doc_rd_layer ON doc_revision_documents;
DROP INDEX IF EXISTS doc_rd_abstract ON doc_revision_documents;
