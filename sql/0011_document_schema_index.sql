-- The documents of one schema across all revisions of an organization (the revision list
-- finds every ValidationPolicy this way, issue 18): a range on the schema's prefix instead of
-- a walk through every revision's document index.
CREATE INDEX IF NOT EXISTS doc_rd_org_schema ON doc_revision_documents (org_id, schema_name, revision_id);
