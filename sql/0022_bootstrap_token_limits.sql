-- A limit binds what its holder makes (issue 49 item 2): a cluster's bootstrap token made by a
-- member limited to some policy groups carries that limit (comma-separated glob patterns, as
-- memberships.policy_groups), and the client its redemption makes gets its `cluster` role
-- limited to them. NULL: no limit (a token made before, or by an unlimited member). Expand
-- only: a binary that does not know the column writes and reads the table as before.
ALTER TABLE bootstrap_tokens ADD COLUMN IF NOT EXISTS policy_groups VARCHAR(4096) NULL;
