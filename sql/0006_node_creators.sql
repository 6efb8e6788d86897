-- Who created each node, as the Chef Infra Server's node ACL records it: a principal whose
-- role holds `write_node` only on what it owns (the `node` role) may change or delete the
-- nodes it created and no others. NULL: created before this column, by the development
-- principal, or by a principal since deleted (a re-registered client with the same name
-- does not inherit the old one's nodes).
ALTER TABLE nodes
  ADD COLUMN creator_id BIGINT NULL AFTER body,
  ADD CONSTRAINT nodes_creator FOREIGN KEY (creator_id) REFERENCES principals (id) ON DELETE SET NULL;

-- Nodes stored before: chef-client names its client after its node, so the client of the
-- same name in the same organization is the one that created it.
UPDATE nodes n
  JOIN principals p ON p.kind = 'client' AND p.org_id = n.org_id AND p.name = n.name
  SET n.creator_id = p.id;
