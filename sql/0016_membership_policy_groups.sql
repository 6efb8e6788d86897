-- Grants by policy group (issue 32 item 2): a membership's role may be limited to policy
-- groups, as comma-separated glob patterns ("dev*,staging"); NULL: the role's own limit in the
-- policy file, or every group.
ALTER TABLE memberships ADD COLUMN policy_groups VARCHAR(4096) NULL;
