/* routes.c: the route table, the single source of purser's HTTP API.
 *
 * One row per method and path: the RBAC action a caller needs (NULL only for open routes),
 * the handler, flags, and a summary. The OpenAPI document (/docs) is generated from this
 * table, and the RBAC matrix test walks it for every role.
 */
#include "router.h"

/* H(handler): the handler of a row. The `purser` command compiles this file with
 * ROUTES_TABLE_ONLY (the table without handlers, to check it against the RBAC policy) and so
 * links none of the web layer's handlers. */
#ifdef ROUTES_TABLE_ONLY
#define H(handler) NULL
#else
#include "handlers.h"
#define H(handler) handler
#endif

#define CHEF ROUTE_CHEF
#define OWNED ROUTE_OWNED
#define GROUP ROUTE_GROUP

/* The document API answers at /api/v1.0/ (documents.default_organization) and at
 * /organizations/{org}/api/v1.0/: one row each. */
#define DOCS(method, path, action, handler, flags, summary)                                        \
    {method, "/api/v1.0" path, action, handler, ROUTE_YAML | (flags), summary},                    \
        {method, "/organizations/{org}/api/v1.0" path, action, handler, ROUTE_YAML | (flags),      \
         summary}

const struct route routes[] = {
    /* health and the API description: open */
    {"GET", "/healthz", NULL, H(health_live), ROUTE_OPEN, "Liveness: the process answers"},
    {"GET", "/healthz/deep", NULL, H(health_deep), ROUTE_OPEN,
     "Readiness: database reachable and schema current"},
    {"GET", "/docs", NULL, H(docs_openapi), ROUTE_OPEN, "This API as an OpenAPI 3 document"},
    {"GET", "/metrics", "read_metrics", H(metrics_answer), ROUTE_LOOPBACK,
     "Counters in Prometheus' text format, for the whole process: requests by route, method and "
     "status, latency, database errors and retries, caches, authentication failures, RBAC "
     "denials, workers (open to loopback clients unless http.metrics_open_loopback is off)"},

    /* organizations */
    {"GET", "/organizations", "list_organizations", H(org_list), CHEF, "List organizations"},
    {"POST", "/organizations", "create_organization", H(org_create), CHEF | ROUTE_AUTH_CHANGE,
     "Create an organization (and its validator client)"},
    {"GET", "/organizations/{org}", "read_organization", H(org_get), CHEF, "Show an organization"},
    {"GET", "/organizations/{org}/permissions", "list_organizations", H(org_permissions), 0,
     "What the caller may do in the organization, from the RBAC policy: {actions, own} (the "
     "admin pages offer only these)"},
    {"GET", "/organizations/{org}/export", "export_organization", H(org_export), 0,
     "Everything of the organization as a multi-document YAML stream of resources in dependency "
     "order (secrets=true: encrypted documents' data too, with read_encrypted_document)"},
    {"POST", "/organizations/{org}/import", "import_organization", H(org_import), 0,
     "Writes an export's stream into this organization, which must be empty (409 otherwise): "
     "checked whole, then written all or nothing"},
    {"PUT", "/organizations/{org}", "update_organization", H(org_update), CHEF | ROUTE_AUTH_CHANGE,
     "Update an organization"},
    {"DELETE", "/organizations/{org}", "delete_organization", H(org_delete), CHEF | ROUTE_AUTH_CHANGE,
     "Delete an organization; one holding more than its validator and members is 409 with "
     "what it holds (contents: {kind: count}) unless ?force=true, which deletes everything in "
     "it (server admins only)"},
    {"GET", "/organizations/{org}/users", "read_members", H(member_list), CHEF,
     "List the members of an organization with their roles"},
    {"POST", "/organizations/{org}/users", "write_members", H(member_add), CHEF | ROUTE_AUTH_CHANGE,
     "Add a user to an organization with roles"},
    {"DELETE", "/organizations/{org}/users/{user}", "write_members", H(member_remove),
     CHEF | ROUTE_AUTH_CHANGE, "Remove a user from an organization"},

    /* Chef's principals endpoint: open, as in the Chef Infra Server */
    {"GET", "/organizations/{org}/principals/{name}", NULL, H(principal_lookup),
     ROUTE_OPEN | CHEF,
     "A user's or client's public key, type and membership (API version 0: the first; 1 and "
     "later: {principals: [...]}, a client before a user of the same name)"},

    /* clients of an organization and their keys */
    {"GET", "/organizations/{org}/clients", "read_clients", H(principal_list), CHEF, "List clients"},
    {"POST", "/organizations/{org}/clients", "create_client", H(principal_create),
     CHEF | ROUTE_AUTH_CHANGE,
     "Create a client (a key pair is generated unless a public key is given)"},
    {"GET", "/organizations/{org}/clients/{client}", "read_clients", H(principal_get), CHEF,
     "Show a client"},
    {"PUT", "/organizations/{org}/clients/{client}", "update_client", H(principal_update),
     CHEF | ROUTE_AUTH_CHANGE, "Update a client"},
    {"DELETE", "/organizations/{org}/clients/{client}", "delete_client", H(principal_delete),
     CHEF | ROUTE_AUTH_CHANGE, "Delete a client"},
    {"GET", "/organizations/{org}/clients/{client}/keys", "read_clients", H(key_list), CHEF,
     "List a client's keys"},
    {"POST", "/organizations/{org}/clients/{client}/keys", "update_client", H(key_create),
     CHEF | ROUTE_AUTH_CHANGE, "Add a key to a client"},
    {"GET", "/organizations/{org}/clients/{client}/keys/{key}", "read_clients", H(key_get), CHEF,
     "Show a client's key"},
    {"PUT", "/organizations/{org}/clients/{client}/keys/{key}", "update_client", H(key_update),
     CHEF | ROUTE_AUTH_CHANGE, "Update a client's key"},
    {"DELETE", "/organizations/{org}/clients/{client}/keys/{key}", "update_client", H(key_delete),
     CHEF | ROUTE_AUTH_CHANGE, "Delete a client's key"},

    /* the Policyfile API (Chef-compatible) */
    {"GET", "/organizations/{org}/policies", "read_policy", H(policies_list), CHEF,
     "List policies and their revisions"},
    {"GET", "/organizations/{org}/policies/{name}", "read_policy", H(policies_get), CHEF,
     "Show a policy's revisions"},
    {"DELETE", "/organizations/{org}/policies/{name}", "delete_policy", H(policies_delete), CHEF,
     "Delete a policy, its revisions and the groups' pointers to them"},
    {"POST", "/organizations/{org}/policies/{name}/revisions", "write_policy", H(revisions_create),
     CHEF, "Upload a revision (a Policyfile lock); 409 if the revision_id exists"},
    {"GET", "/organizations/{org}/policies/{name}/revisions/{rev}", "read_policy", H(revisions_get),
     CHEF, "Show a revision with the groups that point at it"},
    {"DELETE", "/organizations/{org}/policies/{name}/revisions/{rev}", "delete_policy",
     H(revisions_delete), CHEF,
     "Delete a revision (and the pointers to it: write_policy_group on each group that points "
     "at it)"},
    {"GET", "/organizations/{org}/policy_groups", "read_policy_group", H(groups_list), CHEF,
     "List policy groups and what they point at (those the caller may read)"},
    {"GET", "/organizations/{org}/policy_groups/{group}", "read_policy_group", H(groups_get),
     CHEF | GROUP, "Show a policy group"},
    {"DELETE", "/organizations/{org}/policy_groups/{group}", "write_policy_group", H(groups_delete),
     CHEF | GROUP, "Delete a policy group (its pointers only)"},
    {"GET", "/organizations/{org}/policy_groups/{group}/policies/{name}", "read_policy_group",
     H(group_policy_get), CHEF | GROUP,
     "The lock a group points at for a policy (chef-client's fetch)"},
    {"PUT", "/organizations/{org}/policy_groups/{group}/policies/{name}", "write_policy_group",
     H(group_policy_put), CHEF | GROUP,
     "Upload a lock and point the group at it (201 new, 200 existed)"},
    {"DELETE", "/organizations/{org}/policy_groups/{group}/policies/{name}", "write_policy_group",
     H(group_policy_delete), CHEF | GROUP, "Remove a group's pointer for a policy"},

    /* what the Policyfile RFC asked for and Chef never built */
    {"GET", "/organizations/{org}/policies/{name}/revisions/{rev}/policy_groups", "read_policy",
     H(revision_groups), CHEF, "The groups that point at a revision"},
    {"GET", "/organizations/{org}/policies/{name}/diff", "read_policy", H(policies_diff), CHEF,
     "What changes between two groups or revisions (from_group|from_revision, "
     "to_group|to_revision): run list, cookbooks, attribute paths"},
    {"GET", "/organizations/{org}/policy_groups/{group}/nodes", "read_node", H(group_nodes), CHEF,
     "The nodes in a policy group"},
    {"GET", "/organizations/{org}/policy_groups/{group}/policies/{name}/nodes", "read_node",
     H(group_nodes), CHEF, "The nodes of a policy in a policy group"},
    {"PUT", "/organizations/{org}/policy_groups/{group}/policies/{name}/revision/{rev}",
     "write_policy_group", H(group_point), CHEF | GROUP,
     "Point a group at an uploaded revision (empty body; 201 new, 200 existed)"},
    {"POST", "/organizations/{org}/policy_groups/{group}/promote", "promote_policy_group",
     H(group_promote), CHEF | GROUP,
     "Copy the pointers of all or the named policies from another group, all or nothing (the "
     "right on this group, and read_policy_group on the other)"},

    /* cookbook artifacts and the uploads behind them (chef push) */
    {"POST", "/organizations/{org}/sandboxes", "write_cookbooks", H(sandboxes_create), CHEF,
     "Open a sandbox for file checksums; answers an upload URL for each file not yet stored"},
    {"PUT", "/organizations/{org}/sandboxes/{id}", "write_cookbooks", H(sandboxes_commit), CHEF,
     "Commit a sandbox once its files are uploaded"},
    {"PUT", "/organizations/{org}/file_store/{checksum}", "write_cookbooks", H(files_put), CHEF,
     "Upload a file a sandbox expects (its MD5 must be the checksum)"},
    {"GET", "/organizations/{org}/file_store/{checksum}", "read_cookbooks", H(files_get), CHEF,
     "Download a stored file"},
    {"GET", "/organizations/{org}/cookbook_artifacts", "read_cookbooks", H(artifacts_list), CHEF,
     "List cookbook artifacts"},
    {"GET", "/organizations/{org}/cookbook_artifacts/{name}", "read_cookbooks", H(artifacts_list),
     CHEF, "List the identifiers of a cookbook artifact"},
    {"GET", "/organizations/{org}/cookbook_artifacts/{name}/{identifier}", "read_cookbooks",
     H(artifacts_get), CHEF, "Show an artifact's manifest, with file download URLs"},
    {"PUT", "/organizations/{org}/cookbook_artifacts/{name}/{identifier}", "write_cookbooks",
     H(artifacts_put), CHEF, "Store an artifact (201 new, 200 identical, 409 different)"},
    {"DELETE", "/organizations/{org}/cookbook_artifacts/{name}/{identifier}", "write_cookbooks",
     H(artifacts_delete), CHEF, "Delete an artifact"},

    /* nodes */
    {"GET", "/organizations/{org}/nodes", "read_node", H(nodes_list), CHEF, "List nodes"},
    {"POST", "/organizations/{org}/nodes", "create_node", H(nodes_create), CHEF,
     "Create a node (its creator may change it under the node role)"},
    {"GET", "/organizations/{org}/nodes/{node}", "read_node", H(nodes_get), CHEF, "Show a node"},
    {"PUT", "/organizations/{org}/nodes/{node}", "write_node", H(nodes_update), CHEF | OWNED,
     "Update a node"},
    {"DELETE", "/organizations/{org}/nodes/{node}", "write_node", H(nodes_delete), CHEF | OWNED,
     "Delete a node"},

    /* the inventory: clusters (the resource convention, README "Resources") */
    {"GET", "/organizations/{org}/clusters", "read_cluster", H(clusters_list), OWNED,
     "List clusters (page_size, page_token, labels, filter, sort)"},
    {"POST", "/organizations/{org}/clusters", "write_cluster", H(clusters_create), 0,
     "Register a cluster; the answer shows its bootstrap token once"},
    {"GET", "/organizations/{org}/clusters/{id}", "read_cluster", H(cluster_get), OWNED,
     "Show a cluster (ETag; If-None-Match gives 304)"},
    {"PUT", "/organizations/{org}/clusters/{id}", "write_cluster", H(cluster_replace), 0,
     "Replace a cluster's labels, annotations, description and spec (If-Match or "
     "metadata.revision)"},
    {"PATCH", "/organizations/{org}/clusters/{id}", "write_cluster", H(cluster_patch), 0,
     "Merge-patch a cluster (RFC 7396; If-Match or metadata.revision)"},
    {"DELETE", "/organizations/{org}/clusters/{id}", "delete_cluster", H(clusters_delete),
     ROUTE_AUTH_CHANGE,
     "Delete a cluster (If-Match when given) with its credential: the client its bootstrap "
     "token made, that client's keys and tokens, and an unredeemed bootstrap token"},
    {"PUT", "/organizations/{org}/clusters/{id}/facts", "write_cluster_facts",
     H(cluster_facts_write), OWNED, "Report a cluster's dynamic facts (kept as a version)"},
    {"GET", "/organizations/{org}/clusters/{id}/facts/history", "read_cluster",
     H(cluster_facts_list), OWNED, "A cluster's dynamic facts versions, newest first"},
    {"POST", "/organizations/{org}/clusters/{id}/bootstrap-token", "reset_bootstrap_token",
     H(cluster_token_new), 0, "A new bootstrap token (the old one stops working), shown once"},
    {"GET", "/install/bootstrap.json", NULL, H(install_bootstrap),
     ROUTE_OPEN | ROUTE_AUTH_CHANGE,
     "Redeem a cluster's bootstrap token (?token=) for its install manifest and credential"},

    /* the event feed */
    {"GET", "/organizations/{org}/events", "read_events", H(events_list), 0,
     "What changed after ?since=N (kinds, page_size): events in order and the seq to ask from "
     "next; with wait=S (at most 60) held until something arrives or S seconds pass; 410 with "
     "oldest_seq when those events are no longer kept"},

    /* users, their keys and tokens */
    {"GET", "/users", "list_users", H(principal_list), CHEF, "List users"},
    {"POST", "/users", "create_user", H(principal_create), CHEF | ROUTE_AUTH_CHANGE,
     "Create a user (a key pair is generated unless a public key is given)"},
    {"GET", "/users/{user}", "read_user", H(principal_get), CHEF, "Show a user"},
    {"PUT", "/users/{user}", "update_user", H(principal_update), CHEF | ROUTE_AUTH_CHANGE,
     "Update a user"},
    {"PATCH", "/users/{user}", "update_user", H(principal_update), CHEF | ROUTE_AUTH_CHANGE,
     "Change some of a user's fields: active (a deactivated user's keys and tokens are refused), "
     "labels, names, email"},
    {"DELETE", "/users/{user}", "delete_user", H(principal_delete), CHEF | ROUTE_AUTH_CHANGE,
     "Delete a user"},
    {"GET", "/users/{user}/keys", "read_user", H(key_list), CHEF, "List a user's keys"},
    {"POST", "/users/{user}/keys", "update_user", H(key_create), CHEF | ROUTE_AUTH_CHANGE,
     "Add a key to a user"},
    {"GET", "/users/{user}/keys/{key}", "read_user", H(key_get), CHEF, "Show a user's key"},
    {"PUT", "/users/{user}/keys/{key}", "update_user", H(key_update), CHEF | ROUTE_AUTH_CHANGE,
     "Update a user's key"},
    {"DELETE", "/users/{user}/keys/{key}", "update_user", H(key_delete), CHEF | ROUTE_AUTH_CHANGE,
     "Delete a user's key"},
    {"GET", "/users/{user}/tokens", "read_user", H(token_list), 0,
     "List a user's API tokens (never the tokens themselves)"},
    {"POST", "/users/{user}/tokens", "update_user", H(token_create), ROUTE_AUTH_CHANGE,
     "Create an API token; the answer is the only place it appears"},
    {"PATCH", "/users/{user}/tokens/{id}", "update_user", H(token_update), ROUTE_AUTH_CHANGE,
     "Deactivate or activate an API token ({\"active\": false})"},
    {"DELETE", "/users/{user}/tokens/{id}", "update_user", H(token_delete), ROUTE_AUTH_CHANGE,
     "Revoke an API token"},

    /* the document API (Deckhand-compatible, YAML) */
    {"GET", "/versions", NULL, H(doc_versions), ROUTE_OPEN | ROUTE_YAML,
     "The document API's versions (Deckhand)"},
    {"GET", "/api/v1.0/health", NULL, H(doc_health), ROUTE_OPEN | ROUTE_YAML,
     "The document API answers (204)"},
    DOCS("PUT", "/buckets/{bucket}/documents", "write_cleartext_document", H(doc_bucket_put), 0,
         "Replace a bucket's documents (those left out are deleted): one new revision, none "
         "when nothing changes"),
    DOCS("POST", "/documents", "write_cleartext_document", H(doc_post), 0,
         "Add, replace and (Tombstone) delete documents in bucket ?bucket= (default 'default')"),
    DOCS("DELETE", "/documents/{namespace}/{kind}/{version}/{name}", "write_cleartext_document",
         H(doc_delete), 0, "Delete the documents of a schema and name (a new revision)"),
    DOCS("GET", "/revisions", "read_revision", H(rev_list), 0,
         "List revisions (tag, sort, order) with tags, buckets and ValidationPolicy status"),
    DOCS("DELETE", "/revisions", "delete_revisions", H(rev_purge), 0,
         "Purge every revision and document; ids start again at 1"),
    DOCS("GET", "/revisions/{id}", "read_revision", H(rev_get), 0,
         "Show a revision: buckets, tags, ValidationPolicy status"),
    DOCS("GET", "/revisions/{id}/documents", "read_cleartext_document", H(rev_documents), 0,
         "A revision's documents as posted (schema, metadata.name, metadata.label, "
         "metadata.layeringDefinition.abstract|layer, status.bucket, sort, order, limit, "
         "cleartext-secrets)"),
    DOCS("GET", "/revisions/{id}/rendered-documents", "read_cleartext_document", H(rev_rendered), 0,
         "A revision's concrete documents layered, substituted and validated against their "
         "schemas (schema, metadata.name, metadata.label, status.bucket, sort, order, limit, "
         "cleartext-secrets)"),
    DOCS("GET", "/revisions/{id}/diff/{other}", "read_revision", H(rev_diff), 0,
         "Per bucket: created, deleted, modified or unmodified between two revisions (0: "
         "none)"),
    DOCS("GET", "/revisions/{id}/deepdiff/{other}", "read_revision", H(rev_deepdiff), 0,
         "The diff of the rendered revisions, with each modified bucket's documents added, "
         "deleted and changed (deepdiff's shape)"),
    DOCS("GET", "/revisions/{id}/tags", "read_revision", H(tag_list), 0, "A revision's tags"),
    DOCS("DELETE", "/revisions/{id}/tags", "write_tag", H(tag_delete), 0,
         "Delete a revision's tags"),
    DOCS("GET", "/revisions/{id}/tags/{tag}", "read_revision", H(tag_get), 0, "Show a tag"),
    DOCS("POST", "/revisions/{id}/tags/{tag}", "write_tag", H(tag_create), 0,
         "Tag a revision (optional YAML mapping of data)"),
    DOCS("DELETE", "/revisions/{id}/tags/{tag}", "write_tag", H(tag_delete), 0, "Delete a tag"),
    DOCS("POST", "/rollback/{id}", "write_cleartext_document", H(rev_rollback), 0,
         "A new revision with the documents of revision id (0: none)"),
    DOCS("GET", "/revisions/{id}/validations", "read_validation", H(validation_list), 0,
         "Validations reported for a revision, with the latest status of each"),
    DOCS("GET", "/revisions/{id}/validations/detail", "read_validation", H(validation_detail), 0,
         "Every validation entry of a revision in full"),
    DOCS("GET", "/revisions/{id}/validations/{name}", "read_validation", H(validation_entries), 0,
         "The entries of one validation"),
    DOCS("POST", "/revisions/{id}/validations/{name}", "write_validation", H(validation_create), 0,
         "Report a validation result (status, validator, errors)"),
    DOCS("GET", "/revisions/{id}/validations/{name}/entries/{entry}", "read_validation",
         H(validation_entry), 0, "One validation entry in full"),
};

const size_t route_count = sizeof(routes) / sizeof(routes[0]);
