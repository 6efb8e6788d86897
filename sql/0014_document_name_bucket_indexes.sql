-- The name and bucket filters of a revision's documents, as 0012 did for layer and abstract:
-- a revision's rows are a range of their (org_id, revision_id) prefix, which the filter checks
-- as it reads them, and a schema with a name is found through doc_rd_schema. Every query that
-- filters these rows by name or bucket names its revision, so the two indexes only cost each
-- write a row in each (issue 18: PUT of a 4,000-document bundle at the codec's pace).
DROP INDEX IF EXISTS doc_rd_name ON doc_revision_documents;
DROP INDEX IF EXISTS doc_rd_bucket ON doc_revision_documents;
