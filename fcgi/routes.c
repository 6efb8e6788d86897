/* routes.c: the route table, the single source of purser's HTTP API.
 *
 * One row per method and path: the RBAC action a caller needs (NULL only for open routes),
 * the handler, flags, a summary, and the shapes of its bodies (schemas in fcgi/openapi.yaml):
 * .body the request's, .answer the success answer's (.status its statuses when not 200), and
 * .query its query parameters. The OpenAPI document (/docs) is generated from this table, the
 * RBAC matrix test walks it for every role, and the tests validate every answer against it.
 */
#include "router.h"

#include "inventory/cluster.h"

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
#define ETAG ROUTE_ETAG
/* the query of an identity list: a page when page_size, page_token or sort is given (else
 * Chef's shape, which labels and filter narrow too; docs/inventory.md) */
#define PAGED "page_size page_token labels filter sort"
#define OWNED ROUTE_OWNED
#define GROUP ROUTE_GROUP

/* The document API answers at /api/v1.0/ (documents.default_organization) and at
 * /organizations/{org}/api/v1.0/: one row each. */
#define DOCS(method, path, action, handler, flags, summary, ...)                                   \
    {method, "/api/v1.0" path, action, handler, ROUTE_YAML | (flags), summary, __VA_ARGS__},       \
    {                                                                                              \
        method, "/organizations/{org}/api/v1.0" path, action, handler, ROUTE_YAML | (flags),       \
            summary, __VA_ARGS__                                                                   \
    }

/* The resource convention's routes of a kind (docs/inventory.md), added by routes_init for
 * every kind of the registry (lib/registry) that its generic handlers serve, at the {NULL} row
 * of route_rows: its collection at its list path, listed, shown, replaced, merge-patched and
 * deleted by the handlers of resources.c, with the kind's RBAC actions to read, write and
 * delete, and its name as the noun of the summaries. Creation is the kind's own route. A
 * delete may take a credential with it (the kind's on_delete): the workers' authentication
 * caches are emptied. */
const struct route route_resource_rows[] = {
    {"GET", "", "read", H(resources_list), OWNED,
     "List %ss (page_size, page_token, labels, filter, sort)", .answer = "ResourcePage",
     .query = "page_size page_token labels filter sort"},
    {"GET", "/{id}", "read", H(resource_show), OWNED, "Show a %s (ETag; If-None-Match gives 304)",
     .answer = "Resource"},
    {"PUT", "/{id}", "write", H(resource_put), 0,
     "Replace a %s's labels, annotations, description and spec (If-Match or metadata.revision)",
     .body = "ResourceWrite", .answer = "Resource"},
    {"PATCH", "/{id}", "write", H(resource_merge), 0,
     "Merge-patch a %s (RFC 7396; If-Match or metadata.revision)", .body = "AnyObject",
     .answer = "Resource"},
    {"DELETE", "/{id}", "delete", H(resource_remove), ROUTE_AUTH_CHANGE,
     "Delete a %s (If-Match when given) with what it owns (a cluster: the client its "
     "bootstrap token made, that client's keys and tokens, an unredeemed bootstrap token)",
     .status = "204"},
};
const size_t route_resource_row_count =
    sizeof(route_resource_rows) / sizeof(route_resource_rows[0]);

const struct route route_rows[] = {
    /* health and the API description: open */
    {"GET", "/healthz", NULL, H(health_live), ROUTE_OPEN, "Liveness: the process answers",
     .answer = "Text"},
    {"GET", "/healthz/deep", NULL, H(health_deep), ROUTE_OPEN,
     "Readiness: database reachable and schema current", .answer = "Health"},
    {"GET", "/docs", NULL, H(docs_openapi), ROUTE_OPEN, "This API as an OpenAPI 3 document",
     .answer = "OpenAPI"},
    {"GET", "/docs.yaml", NULL, H(docs_openapi_yaml), ROUTE_OPEN,
     "The same OpenAPI 3 document as YAML", .answer = "OpenAPIYaml"},
    {"GET", "/metrics", "read_metrics", H(metrics_answer), ROUTE_LOOPBACK,
     "Counters in Prometheus' text format, for the whole process: requests by route, method and "
     "status, latency, database errors and retries, caches, authentication failures, RBAC "
     "denials, workers (open to loopback clients unless http.metrics_open_loopback is off)",
     .answer = "Text"},

    /* organizations */
    {"GET", "/organizations", "list_organizations", H(org_list), CHEF,
     "List organizations: Chef's {name: uri}, or with page_size, page_token or sort a page of "
     "Organization envelopes (labels and filter: full_name, display_name, external_id, name, "
     "sub_kind)",
     .answer = "NameToUriOrPage", .query = PAGED},
    {"POST", "/organizations", "create_organization", H(org_create), CHEF | ROUTE_AUTH_CHANGE,
     "Create an organization (and its validator client)", .body = "OrganizationCreate",
     .answer = "OrganizationCreated", .status = "201"},
    {"GET", "/organizations/{org}", "read_organization", H(org_get), CHEF | ETAG,
     "Show an organization (ETag; If-None-Match gives 304)", .answer = "Organization"},
    {"GET", "/organizations/{org}/permissions", "list_organizations", H(org_permissions), 0,
     "What the caller may do in the organization, from the RBAC policy: {actions, own} (the "
     "admin pages offer only these), and the roles the organization can grant",
     .answer = "Permissions"},
    {"GET", "/organizations/{org}/export", "export_organization", H(org_export), 0,
     "Everything of the organization as a multi-document YAML stream of resources in dependency "
     "order (secrets=true: encrypted documents' data too, with read_encrypted_document)",
     .answer = "YamlStream", .query = "secrets"},
    {"POST", "/organizations/{org}/import", "import_organization", H(org_import), ROUTE_AUTH_CHANGE,
     "Writes an export's stream into this organization, which must be empty (409 otherwise): "
     "checked whole, then written all or nothing",
     .body = "YamlStream", .answer = "Imported", .status = "201"},
    {"PUT", "/organizations/{org}", "update_organization", H(org_update),
     CHEF | ROUTE_AUTH_CHANGE | ETAG, "Update an organization (If-Match when given)",
     .body = "OrganizationUpdate", .answer = "Organization"},
    {"PATCH", "/organizations/{org}", "update_organization", H(org_patch),
     CHEF | ROUTE_AUTH_CHANGE | ETAG,
     "Merge-patch an organization (RFC 7396 on what GET shows: full_name, labels, external_ids, "
     "sub_kind; If-Match when given)",
     .body = "OrganizationPatch", .answer = "Organization"},
    {"DELETE", "/organizations/{org}", "delete_organization", H(org_delete),
     CHEF | ROUTE_AUTH_CHANGE | ETAG,
     "Delete an organization; one holding more than its validator and members is 409 with "
     "what it holds (contents: {kind: count}) unless ?force=true, which deletes everything in "
     "it (server admins only)",
     .answer = "Organization", .query = "force"},
    {"GET", "/organizations/{org}/users", "read_members", H(member_list), CHEF,
     "List the members of an organization with their roles; with page_size, page_token or sort "
     "a page of Member envelopes (labels and filter: display_name, email, active, role, name)",
     .answer = "MembersOrPage", .query = PAGED},
    {"POST", "/organizations/{org}/users", "write_members", H(member_add), CHEF | ROUTE_AUTH_CHANGE,
     "Add a user to an organization with roles", .body = "MemberAdd", .answer = "Member",
     .status = "201"},
    {"DELETE", "/organizations/{org}/users/{user}", "write_members", H(member_remove),
     CHEF | ROUTE_AUTH_CHANGE, "Remove a user from an organization", .answer = "AnyObject"},

    /* Chef's principals endpoint: open, as in the Chef Infra Server */
    {"GET", "/organizations/{org}/principals/{name}", NULL, H(principal_lookup), ROUTE_OPEN | CHEF,
     "A user's or client's public key, type and membership (API version 0: the first; 1 and "
     "later: {principals: [...]}, a client before a user of the same name)",
     .answer = "PrincipalLookup"},

    /* clients of an organization and their keys */
    {"GET", "/organizations/{org}/clients", "read_clients", H(principal_list), CHEF,
     "List clients: Chef's {name: uri}, or with page_size, page_token or sort a page of Client "
     "envelopes (labels and filter: validator, active, name, sub_kind)",
     .answer = "ClientsOrPage", .query = PAGED},
    {"POST", "/organizations/{org}/clients", "create_client", H(principal_create),
     CHEF | ROUTE_AUTH_CHANGE,
     "Create a client (a key pair is generated unless a public key is given)",
     .body = "PrincipalCreate", .answer = "PrincipalCreated", .status = "201"},
    {"GET", "/organizations/{org}/clients/{client}", "read_clients", H(principal_get), CHEF | ETAG,
     "Show a client (ETag; If-None-Match gives 304)", .answer = "Principal"},
    {"PUT", "/organizations/{org}/clients/{client}", "update_client", H(principal_update),
     CHEF | ROUTE_AUTH_CHANGE | ETAG, "Update a client (If-Match when given)",
     .body = "PrincipalCreate", .answer = "Principal", .status = "200 201"},
    {"PATCH", "/organizations/{org}/clients/{client}", "update_client", H(principal_patch),
     CHEF | ROUTE_AUTH_CHANGE | ETAG,
     "Merge-patch a client (RFC 7396 on what GET shows, with labels and active: validator, "
     "labels, active, sub_kind, expires; If-Match when given)",
     .body = "PrincipalPatch", .answer = "Principal"},
    {"DELETE", "/organizations/{org}/clients/{client}", "delete_client", H(principal_delete),
     CHEF | ROUTE_AUTH_CHANGE | ETAG, "Delete a client (If-Match when given)",
     .answer = "Principal"},
    {"GET", "/organizations/{org}/clients/{client}/keys", "read_clients", H(key_list), CHEF,
     "List a client's keys", .answer = "KeyList"},
    {"POST", "/organizations/{org}/clients/{client}/keys", "update_client", H(key_create),
     CHEF | ROUTE_AUTH_CHANGE, "Add a key to a client", .body = "KeyCreate", .answer = "KeyCreated",
     .status = "201"},
    {"GET", "/organizations/{org}/clients/{client}/keys/{key}", "read_clients", H(key_get), CHEF,
     "Show a client's key", .answer = "Key"},
    {"PUT", "/organizations/{org}/clients/{client}/keys/{key}", "update_client", H(key_update),
     CHEF | ROUTE_AUTH_CHANGE, "Update a client's key", .body = "KeyUpdate", .answer = "Key",
     .status = "200 201"},
    {"DELETE", "/organizations/{org}/clients/{client}/keys/{key}", "update_client", H(key_delete),
     CHEF | ROUTE_AUTH_CHANGE, "Delete a client's key", .answer = "Key"},

    /* the Policyfile API (Chef-compatible) */
    {"GET", "/organizations/{org}/policies", "read_policy", H(policies_list), CHEF,
     "List policies: Chef's {name: {uri, revisions}}, or with page_size, page_token or sort pages "
     "of policies (revision_count, latest_at) with a total, sorted by name, revision_count or "
     "latest_at; filter (name; == or !=, '*' any text) narrows either",
     .answer = "PoliciesOrPage", .query = "page_size page_token filter sort"},
    {"GET", "/organizations/{org}/policies/{name}", "read_policy", H(policies_get), CHEF,
     "Show a policy's revisions", .answer = "Policy"},
    {"DELETE", "/organizations/{org}/policies/{name}", "delete_policy", H(policies_delete), CHEF,
     "Delete a policy, its revisions and the groups' pointers to them", .answer = "Policy"},
    {"POST", "/organizations/{org}/policies/{name}/revisions", "write_policy", H(revisions_create),
     CHEF, "Upload a revision (a Policyfile lock); 409 if the revision_id exists",
     .body = "PolicyLock", .answer = "PolicyLock", .status = "201"},
    {"GET", "/organizations/{org}/policies/{name}/revisions/{rev}", "read_policy", H(revisions_get),
     CHEF, "Show a revision with the groups that point at it", .answer = "PolicyLock"},
    {"DELETE", "/organizations/{org}/policies/{name}/revisions/{rev}", "delete_policy",
     H(revisions_delete), CHEF,
     "Delete a revision (and the pointers to it: write_policy_group on each group that points "
     "at it)",
     .answer = "PolicyLock"},
    {"GET", "/organizations/{org}/policy_groups", "read_policy_group", H(groups_list), CHEF,
     "List policy groups and what they point at (those the caller may read): Chef's {group: "
     "{uri, policies}}, or with page_size, page_token or sort pages of them (policy_count, "
     "policies) with a total, sorted by name or policy_count; filter (name; == or !=, '*' any "
     "text) narrows either",
     .answer = "PolicyGroupsOrPage", .query = "page_size page_token filter sort"},
    {"GET", "/organizations/{org}/policy_groups/{group}", "read_policy_group", H(groups_get),
     CHEF | GROUP, "Show a policy group", .answer = "PolicyGroup"},
    {"DELETE", "/organizations/{org}/policy_groups/{group}", "write_policy_group", H(groups_delete),
     CHEF | GROUP, "Delete a policy group (its pointers only)", .answer = "PolicyGroup"},
    {"GET", "/organizations/{org}/policy_groups/{group}/policies/{name}", "read_policy_group",
     H(group_policy_get), CHEF | GROUP,
     "The lock a group points at for a policy (chef-client's fetch)", .answer = "PolicyLock"},
    {"PUT", "/organizations/{org}/policy_groups/{group}/policies/{name}", "write_policy_group",
     H(group_policy_put), CHEF | GROUP,
     "Upload a lock and point the group at it (201 new, 200 existed)", .body = "PolicyLock",
     .answer = "PolicyLock", .status = "200 201"},
    {"DELETE", "/organizations/{org}/policy_groups/{group}/policies/{name}", "write_policy_group",
     H(group_policy_delete), CHEF | GROUP, "Remove a group's pointer for a policy",
     .answer = "PolicyLock"},

    /* what the Policyfile RFC asked for and Chef never built */
    {"GET", "/organizations/{org}/policies/{name}/revisions", "read_policy", H(revisions_list),
     CHEF,
     "The revisions of a policy, oldest first: {revision_id: {uri, created_at, created_by, "
     "policy_group_list}} (the groups those the caller may read), or with page_size, page_token "
     "or sort (revision_id, created_at, created_by) pages of them with a total; filter "
     "(revision_id, created_by; == or !=, '*' any text) narrows either",
     .answer = "PolicyRevisionsOrPage", .query = "page_size page_token filter sort"},
    {"GET", "/organizations/{org}/policies/{name}/revisions/{rev}/policy_groups", "read_policy",
     H(revision_groups), CHEF, "The groups that point at a revision", .answer = "GroupNames"},
    {"GET", "/organizations/{org}/policies/{name}/diff", "read_policy", H(policies_diff), CHEF,
     "What changes between two groups or revisions (from_group|from_revision, "
     "to_group|to_revision): run list, cookbooks, attribute paths",
     .answer = "PolicyDiff", .query = "from_group to_group from_revision to_revision"},
    {"GET", "/organizations/{org}/policy_groups/{group}/nodes", "read_node", H(group_nodes),
     CHEF | GROUP, "The nodes in a policy group", .answer = "NameToUri"},
    {"GET", "/organizations/{org}/policy_groups/{group}/policies/{name}/nodes", "read_node",
     H(group_nodes), CHEF | GROUP, "The nodes of a policy in a policy group",
     .answer = "NameToUri"},
    {"PUT", "/organizations/{org}/policy_groups/{group}/policies/{name}/revision/{rev}",
     "write_policy_group", H(group_point), CHEF | GROUP,
     "Point a group at an uploaded revision (empty body; 201 new, 200 existed)",
     .answer = "PolicyLock", .status = "200 201"},
    {"POST", "/organizations/{org}/policy_groups/{group}/promote", "promote_policy_group",
     H(group_promote), CHEF | GROUP,
     "Copy the pointers of all or the named policies from another group, all or nothing (the "
     "right on this group, and read_policy_group on the other)",
     .body = "Promote", .answer = "PolicyGroup"},
    {"POST", "/organizations/{org}/collect_policies", "collect_policies", H(policies_collect), CHEF,
     "Remove the revisions no group points at beyond the newest keep of each policy (or of "
     "those named), then the cookbook artifacts no remaining revision names and the files only "
     "they used (not those an open sandbox lists), with their events, all or nothing; dry_run "
     "answers what would go and removes nothing",
     .body = "PolicyCollect", .answer = "PolicyCollected"},

    /* cookbook artifacts and the uploads behind them (chef push) */
    {"POST", "/organizations/{org}/sandboxes", "write_cookbooks", H(sandboxes_create), CHEF,
     "Open a sandbox for file checksums; answers an upload URL for each file not yet stored",
     .body = "Sandbox", .answer = "AnyObject", .status = "201"},
    {"PUT", "/organizations/{org}/sandboxes/{id}", "write_cookbooks", H(sandboxes_commit), CHEF,
     "Commit a sandbox once its files are uploaded", .body = "SandboxCommit",
     .answer = "AnyObject"},
    {"PUT", "/organizations/{org}/file_store/{checksum}", "write_cookbooks", H(files_put), CHEF,
     "Upload a file a sandbox expects (its MD5 must be the checksum)", .body = "Binary",
     .answer = "AnyObject"},
    {"GET", "/organizations/{org}/file_store/{checksum}", "read_cookbooks", H(files_get), CHEF,
     "Download a stored file", .answer = "Binary"},
    {"GET", "/organizations/{org}/cookbook_artifacts", "read_cookbooks", H(artifacts_list), CHEF,
     "List cookbook artifacts", .answer = "AnyObject"},
    {"GET", "/organizations/{org}/cookbook_artifacts/{name}", "read_cookbooks", H(artifacts_list),
     CHEF, "List the identifiers of a cookbook artifact", .answer = "AnyObject"},
    {"GET", "/organizations/{org}/cookbook_artifacts/{name}/{identifier}", "read_cookbooks",
     H(artifacts_get), CHEF, "Show an artifact's manifest, with file download URLs",
     .answer = "AnyObject"},
    {"PUT", "/organizations/{org}/cookbook_artifacts/{name}/{identifier}", "write_cookbooks",
     H(artifacts_put), CHEF, "Store an artifact (201 new, 200 identical, 409 different)",
     .body = "AnyObject", .answer = "AnyObject", .status = "200 201"},
    {"DELETE", "/organizations/{org}/cookbook_artifacts/{name}/{identifier}", "write_cookbooks",
     H(artifacts_delete), CHEF, "Delete an artifact", .answer = "AnyObject"},

    /* nodes */
    {"GET", "/organizations/{org}/nodes", "read_node", H(nodes_list), CHEF,
     "List nodes: Chef's {name: uri}, or with page_size, page_token or sort pages of node "
     "summaries (policy, group, the revision it points at, platform, address, ohai_time) with "
     "a total; filter (name, policy_name, policy_group; == or !=, '*' any text) narrows either",
     .answer = "NameToUriOrNodePage", .query = "page_size page_token filter sort"},
    {"POST", "/organizations/{org}/nodes", "create_node", H(nodes_create), CHEF,
     "Create a node (its creator may change it under the node role)", .body = "Node",
     .answer = "Uri", .status = "201"},
    {"GET", "/organizations/{org}/nodes/{node}", "read_node", H(nodes_get), CHEF, "Show a node",
     .answer = "Node"},
    {"PUT", "/organizations/{org}/nodes/{node}", "write_node", H(nodes_update), CHEF | OWNED,
     "Update a node", .body = "Node", .answer = "Node"},
    {"DELETE", "/organizations/{org}/nodes/{node}", "write_node", H(nodes_delete), CHEF | OWNED,
     "Delete a node", .answer = "Node"},

    /* identity providers (server-wide) and signing in through them (docs/operator/identity.md,
     * "Signing in with OpenID Connect"); the sign-in's own steps are open: the state, the code and
     * the handoff code are what they check */
    {"GET", "/identity-providers", "read_identity_providers", H(oidc_providers_list), 0,
     "List the identity providers (no client secret)", .answer = "IdentityProviderList"},
    {"POST", "/identity-providers", "write_identity_providers", H(oidc_provider_create_route),
     ROUTE_AUTH_CHANGE, "Create an identity provider (its client secret sealed, never shown)",
     .body = "IdentityProviderWrite", .answer = "IdentityProvider", .status = "201"},
    {"GET", "/identity-providers/{id}", "read_identity_providers", H(oidc_provider_show), 0,
     "Show an identity provider (ETag)", .answer = "IdentityProvider"},
    {"PUT", "/identity-providers/{id}", "write_identity_providers", H(oidc_provider_put),
     ROUTE_AUTH_CHANGE,
     "Replace an identity provider's labels, description and spec (If-Match or "
     "metadata.revision; without client_secret the stored one stays)",
     .body = "IdentityProviderWrite", .answer = "IdentityProvider"},
    {"DELETE", "/identity-providers/{id}", "write_identity_providers", H(oidc_provider_remove),
     ROUTE_AUTH_CHANGE,
     "Delete an identity provider with its sessions, the memberships its mappings granted and "
     "its users' links (the users stay)",
     .status = "204"},
    {"GET", "/auth/sso/providers", NULL, H(oidc_providers_public), ROUTE_OPEN,
     "The identity providers one may sign in through (name and display name)",
     .answer = "SignInProviders"},
    {"GET", "/auth/sso/{provider}/start", NULL, H(oidc_sign_in_start),
     ROUTE_OPEN | ROUTE_PAGE_ERRORS,
     "Begin a sign-in: 302 to the provider (authorization code with PKCE, state and nonce kept "
     "here); a loopback return_to (purserctl) needs handoff_challenge, the code's trade its "
     "verifier",
     .status = "302", .query = "return_to handoff_challenge"},
    {"GET", "/auth/sso/callback", NULL, H(oidc_sign_in_callback),
     ROUTE_OPEN | ROUTE_AUTH_CHANGE | ROUTE_PAGE_ERRORS,
     "The provider's redirect back: the code traded and the ID token checked, the user made or "
     "found and its memberships set; 302 to the page or purserctl with a one-time code",
     .status = "302", .query = "state code iss error error_description"},
    {"POST", "/auth/sso/session", NULL, H(oidc_sign_in_session), ROUTE_OPEN | ROUTE_AUTH_CHANGE,
     "Trade a sign-in's one-time code for its session token (shown once), by the browser that "
     "began the sign-in (its sign-in cookie) or purserctl (its verifier)",
     .body = "SignInCode", .answer = "Session", .status = "201"},
    {"POST", "/auth/sso/{provider}/device", NULL, H(oidc_device_begin), ROUTE_OPEN,
     "Begin a device sign-in (RFC 8628, purserctl login --sso --device): the provider's user "
     "code and where to enter it; purser keeps the device code and the client secret",
     .answer = "DeviceSignIn", .status = "201"},
    {"POST", "/auth/sso/device/token", NULL, H(oidc_device_token), ROUTE_OPEN | ROUTE_AUTH_CHANGE,
     "Poll a device sign-in: 200 {status: authorization_pending} until the person signed in at "
     "the provider, then 201 with the session token (shown once)",
     .body = "DeviceToken", .answer = "SessionOrPending", .status = "200 201"},
    {"POST", "/auth/sso/sign-out", "sign_out", H(oidc_sign_out), ROUTE_AUTH_CHANGE,
     "End the presented session on the server (a token that is not a sign-in's is left alone)",
     .status = "204"},

    /* the registry's kinds of the resource convention (clusters, ...): their generic routes */
    {NULL},
    /* the inventory: clusters (docs/inventory.md) */
    {"POST", "/organizations/{org}/clusters", "write_cluster", H(clusters_create), 0,
     "Register a cluster; the answer shows its bootstrap token once", .body = "ClusterWrite",
     .answer = "ClusterWithToken", .status = "201"},
    {"GET", "/clusters", "list_all_clusters", H(resources_list_all), 0,
     "Every organization's clusters, each naming its organization (metadata.organization), in "
     "pages ordered by the sort, the name, then the organization; organization=a,b: only theirs "
     "(server admins)",
     .answer = "ClusterPage", .query = "page_size page_token labels filter sort organization",
     .kind = &cluster_kind},
    {"PUT", "/organizations/{org}/clusters/{id}/facts", "write_cluster_facts",
     H(cluster_facts_write), OWNED, "Report a cluster's dynamic facts (kept as a version)",
     .body = "AnyObject", .answer = "Cluster"},
    {"GET", "/organizations/{org}/clusters/{id}/facts/history", "read_cluster",
     H(cluster_facts_list), OWNED, "A cluster's dynamic facts versions, newest first",
     .answer = "FactsPage", .query = "page_size page_token"},
    {"POST", "/organizations/{org}/clusters/{id}/bootstrap-token", "reset_bootstrap_token",
     H(cluster_token_new), 0,
     "A new bootstrap token (the old one stops working): the cluster, as its creation answers, "
     "with the token shown once",
     .answer = "ClusterWithToken", .status = "201"},
    {"GET", "/organizations/{org}/clusters/{id}/git-access", "read_cluster", H(git_access_catalog),
     OWNED | ROUTE_BASIC,
     "May the caller fetch the cluster's catalog repository (git_repo.type auto)? It holds "
     "rendered documents, so read_cleartext_document is needed too. 204 when it "
     "may (the catalog brought up to the latest revision first), 403 for a push "
     "(service=git-receive-pack); nginx asks it before git-http-backend serves /git/{org}/"
     "catalogs/{id}.git (also HTTP basic credentials whose password is a token)",
     .status = "204", .query = "service"},
    {"GET", "/install/bootstrap.json", NULL, H(install_bootstrap), ROUTE_OPEN | ROUTE_AUTH_CHANGE,
     "Redeem a cluster's bootstrap token (?token=) for its install manifest and credential",
     .answer = "InstallManifest", .query = "token"},

    /* the document history as a git repository (docs/inventory.md, "Git repositories") */
    {"GET", "/organizations/{org}/git-access", "read_cleartext_document", H(git_access_history),
     ROUTE_BASIC,
     "May the caller fetch the organization's history repository? 204 when it may (the "
     "repository brought up to the latest revision first), 403 for a push "
     "(service=git-receive-pack); nginx asks it before git-http-backend serves /git/{org}.git "
     "(also HTTP basic credentials whose password is a token, as git clients send them)",
     .status = "204", .query = "service"},

    /* the event feed */
    {"GET", "/organizations/{org}/events", "read_events", H(events_list), 0,
     "What changed after ?since=N (kinds, actor, page_size): events in order and the seq to ask "
     "from next; with wait=S (at most 60) held until something arrives or S seconds pass; 410 "
     "with oldest_seq when those events are no longer kept; last=N (at most 1000, without "
     "since): the newest N, oldest first, next the newest seq",
     .answer = "Events", .query = "since kinds actor page_size wait last"},

    /* users, their keys and tokens */
    {"GET", "/users", "list_users", H(principal_list), CHEF,
     "List users: Chef's {name: uri}, or with page_size, page_token or sort a page of User "
     "envelopes (labels and filter: display_name, first_name, last_name, email, active, tenant, "
     "external_id, name, sub_kind; OSIS's)",
     .answer = "NameToUriOrPage", .query = PAGED},
    {"POST", "/users", "create_user", H(principal_create), CHEF | ROUTE_AUTH_CHANGE,
     "Create a user (a key pair is generated unless a public key is given)",
     .body = "PrincipalCreate", .answer = "PrincipalCreated", .status = "201"},
    {"GET", "/users/{user}", "read_user", H(principal_get), CHEF | ETAG,
     "Show a user (ETag; If-None-Match gives 304)", .answer = "Principal"},
    {"PUT", "/users/{user}", "update_user", H(principal_update), CHEF | ROUTE_AUTH_CHANGE | ETAG,
     "Update a user (If-Match when given)", .body = "PrincipalCreate", .answer = "Principal",
     .status = "200 201"},
    {"PATCH", "/users/{user}", "update_user", H(principal_patch), CHEF | ROUTE_AUTH_CHANGE | ETAG,
     "Merge-patch a user (RFC 7396 on what GET shows): active (a deactivated user's keys and "
     "tokens are refused), labels, names, email, sub_kind, expires; If-Match when given",
     .body = "PrincipalPatch", .answer = "Principal"},
    {"DELETE", "/users/{user}", "delete_user", H(principal_delete), CHEF | ROUTE_AUTH_CHANGE | ETAG,
     "Delete a user (If-Match when given)", .answer = "Principal"},
    {"GET", "/users/{user}/keys", "read_user", H(key_list), CHEF, "List a user's keys",
     .answer = "KeyList"},
    {"POST", "/users/{user}/keys", "update_user", H(key_create), CHEF | ROUTE_AUTH_CHANGE,
     "Add a key to a user", .body = "KeyCreate", .answer = "KeyCreated", .status = "201"},
    {"GET", "/users/{user}/keys/{key}", "read_user", H(key_get), CHEF, "Show a user's key",
     .answer = "Key"},
    {"PUT", "/users/{user}/keys/{key}", "update_user", H(key_update), CHEF | ROUTE_AUTH_CHANGE,
     "Update a user's key", .body = "KeyUpdate", .answer = "Key", .status = "200 201"},
    {"DELETE", "/users/{user}/keys/{key}", "update_user", H(key_delete), CHEF | ROUTE_AUTH_CHANGE,
     "Delete a user's key", .answer = "Key"},
    {"GET", "/users/{user}/tokens", "read_user", H(token_list), 0,
     "List a user's API tokens (never the tokens themselves); with page_size, page_token or sort "
     "a page of Token envelopes (labels and filter: description, active, name, sub_kind)",
     .answer = "TokenListOrPage", .query = PAGED},
    {"POST", "/users/{user}/tokens", "update_user", H(token_create), ROUTE_AUTH_CHANGE,
     "Create an API token; the answer is the only place it appears", .body = "TokenCreate",
     .answer = "Token", .status = "201"},
    {"PATCH", "/users/{user}/tokens/{id}", "update_user", H(token_update), ROUTE_AUTH_CHANGE | ETAG,
     "Deactivate or activate an API token ({\"active\": false}) or merge its labels (If-Match "
     "when given)",
     .body = "TokenPatch", .answer = "Token"},
    {"DELETE", "/users/{user}/tokens/{id}", "update_user", H(token_delete),
     ROUTE_AUTH_CHANGE | ETAG, "Revoke an API token (If-Match when given)", .status = "204"},

    /* the document API (Deckhand-compatible, YAML) */
    {"GET", "/versions", NULL, H(doc_versions), ROUTE_OPEN | ROUTE_YAML,
     "The document API's versions (Deckhand)", .answer = "DeckhandAny"},
    {"GET", "/api/v1.0/health", NULL, H(doc_health), ROUTE_OPEN | ROUTE_YAML,
     "The document API answers (204)", .status = "204"},
    DOCS("PUT", "/buckets/{bucket}/documents", "write_cleartext_document", H(doc_bucket_put), 0,
         "Replace a bucket's documents (those left out are deleted): one new revision, none "
         "when nothing changes",
         .body = "Documents", .answer = "Documents"),
    DOCS("POST", "/documents", "write_cleartext_document", H(doc_post), 0,
         "Add, replace and (Tombstone) delete documents in bucket ?bucket= (default 'default')",
         .body = "Documents", .answer = "Documents", .query = "bucket"),
    DOCS("DELETE", "/documents/{namespace}/{kind}/{version}/{name}", "write_cleartext_document",
         H(doc_delete), 0, "Delete the documents of a schema and name (a new revision)",
         .answer = "Documents"),
    DOCS("GET", "/revisions", "read_revision", H(rev_list), 0,
         "List revisions (tag, sort, order) with tags, buckets and ValidationPolicy status; "
         "with page_size or filter (tag, bucket, text: a tag or a bucket; '*' any text) a page "
         "with next_page_token (the next page's page_token, \"\" at the end) and total; limit "
         "pages without the total",
         .answer = "DeckhandList",
         .query = "tag sort order limit page_size page_token revision_filter"),
    DOCS("DELETE", "/revisions", "delete_revisions", H(rev_purge), 0,
         "Purge every revision and document; ids start again at 1", .status = "204"),
    DOCS("GET", "/revisions/{id}", "read_revision", H(rev_get), 0,
         "Show a revision: buckets, tags, ValidationPolicy status", .answer = "Revision"),
    DOCS("GET", "/revisions/{id}/documents", "read_cleartext_document", H(rev_documents), 0,
         "A revision's documents as posted (schema, metadata.name, metadata.label, "
         "metadata.layeringDefinition.abstract|layer, status.bucket, sort, order, limit, "
         "cleartext-secrets). With page_size, page_token or filter (name, schema, layer, bucket, "
         "text: name or schema; '*' any text) one page of them: the header X-Total-Count says "
         "how many the filters select, X-Next-Page-Token the next page's page_token (absent on "
         "the last page)",
         .answer = "Documents",
         .query = "schema metadata.name metadata.label metadata.layeringDefinition.abstract "
                  "metadata.layeringDefinition.layer status.bucket sort order limit "
                  "cleartext-secrets page_size document_page_token document_filter"),
    DOCS("GET", "/revisions/{id}/rendered-documents", "read_cleartext_document", H(rev_rendered), 0,
         "A revision's concrete documents layered, substituted and validated against their "
         "schemas (schema, metadata.name, metadata.label, status.bucket, sort, order, limit, "
         "cleartext-secrets). With page_size, page_token or filter (name, schema, layer, bucket, "
         "text: name or schema; '*' any text) one page of them: the header X-Total-Count says "
         "how many the filters select, X-Next-Page-Token the next page's page_token (absent on "
         "the last page)",
         .answer = "Documents",
         .query = "schema metadata.name metadata.label status.bucket sort order limit "
                  "cleartext-secrets page_size document_page_token document_filter"),
    DOCS("GET", "/revisions/{id}/diff/{other}", "read_revision", H(rev_diff), 0,
         "Per bucket: created, deleted, modified or unmodified between two revisions (0: "
         "none)",
         .answer = "AnyObject"),
    DOCS("GET", "/revisions/{id}/deepdiff/{other}", "read_revision", H(rev_deepdiff), 0,
         "The diff of the rendered revisions, with each modified bucket's documents added, "
         "deleted and changed (deepdiff's shape)",
         .answer = "AnyObject"),
    DOCS("GET", "/revisions/{id}/tags", "read_revision", H(tag_list), 0, "A revision's tags",
         .answer = "DeckhandAny"),
    DOCS("DELETE", "/revisions/{id}/tags", "write_tag", H(tag_delete), 0,
         "Delete a revision's tags", .status = "204"),
    DOCS("GET", "/revisions/{id}/tags/{tag}", "read_revision", H(tag_get), 0, "Show a tag",
         .answer = "AnyObject"),
    DOCS("POST", "/revisions/{id}/tags/{tag}", "write_tag", H(tag_create), 0,
         "Tag a revision (optional YAML mapping of data)", .body = "DeckhandAny",
         .answer = "AnyObject", .status = "201"),
    DOCS("DELETE", "/revisions/{id}/tags/{tag}", "write_tag", H(tag_delete), 0, "Delete a tag",
         .status = "204"),
    DOCS("POST", "/rollback/{id}", "write_cleartext_document", H(rev_rollback), 0,
         "A new revision with the documents of revision id (0: none)", .answer = "Revision",
         .status = "201"),
    DOCS("GET", "/revisions/{id}/validations", "read_validation", H(validation_list), 0,
         "Validations reported for a revision, with the latest status of each",
         .answer = "DeckhandList"),
    DOCS("GET", "/revisions/{id}/validations/detail", "read_validation", H(validation_detail), 0,
         "Every validation entry of a revision in full", .answer = "DeckhandList"),
    DOCS("GET", "/revisions/{id}/validations/{name}", "read_validation", H(validation_entries), 0,
         "The entries of one validation", .answer = "DeckhandList"),
    DOCS("POST", "/revisions/{id}/validations/{name}", "write_validation", H(validation_create), 0,
         "Report a validation result (status, validator, errors)", .body = "AnyObject",
         .answer = "AnyObject", .status = "201"),
    DOCS("GET", "/revisions/{id}/validations/{name}/entries/{entry}", "read_validation",
         H(validation_entry), 0, "One validation entry in full", .answer = "AnyObject"),
};

const size_t route_row_count = sizeof(route_rows) / sizeof(route_rows[0]);
