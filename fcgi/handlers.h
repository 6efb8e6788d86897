/* handlers.h: every request handler, by resource family (one .c file each). */
#ifndef PURSER_HANDLERS_H
#define PURSER_HANDLERS_H

#include "request.h"
#include "resource/resource.h"

/* oidc.c: identity providers and signing in through them */
int oidc_providers_list(struct request *req);
int oidc_providers_public(struct request *req);
int oidc_provider_create_route(struct request *req);
int oidc_provider_show(struct request *req);
int oidc_provider_put(struct request *req);
int oidc_provider_remove(struct request *req);
int oidc_sign_in_start(struct request *req);
int oidc_sign_in_callback(struct request *req);
int oidc_sign_in_session(struct request *req);
int oidc_sign_out(struct request *req);
int oidc_device_begin(struct request *req);
int oidc_device_token(struct request *req);

/* health.c */
int health_live(struct request *req);
int health_deep(struct request *req);

/* docs.c: the OpenAPI document of the route table */
int docs_openapi(struct request *req);
int docs_openapi_yaml(struct request *req);
int metrics_answer(struct request *req);

/* organizations.c */
int org_list(struct request *req);
int org_create(struct request *req);
int org_get(struct request *req);
int org_export(struct request *req);
int org_permissions(struct request *req);
int org_import(struct request *req);
int org_update(struct request *req);
int org_patch(struct request *req);
int org_delete(struct request *req);
int member_list(struct request *req);
int member_add(struct request *req);
int member_remove(struct request *req);

/* principals.c: users and clients, their keys, users' tokens */
int principal_lookup(struct request *req);
int principal_list(struct request *req);
int principal_create(struct request *req);
int principal_get(struct request *req);
int principal_update(struct request *req);
int principal_patch(struct request *req);
int principal_delete(struct request *req);
int key_list(struct request *req);
int key_create(struct request *req);
int key_get(struct request *req);
int key_update(struct request *req);
int key_delete(struct request *req);
int token_list(struct request *req);
int token_create(struct request *req);
int token_update(struct request *req);
int token_delete(struct request *req);
/* What the identity lists share (the resource convention on Chef's routes): the list's
 * parameters (1 when a page is asked for: page_size, page_token or sort; labels and filter
 * narrow Chef's shape too), and a page's answer (page released). */
struct identity_list;
int identity_list_of(struct request *req, struct identity_list *l);
int respond_page(struct request *req, int rc, struct buf *page);

/* resources.c: the resource convention's routes for the kind of the route row (.kind), and
 * what a kind's own routes share: the organization's scope, the JSON body with it, and the
 * answer with the resource's revision as ETag (304 when If-None-Match names it). */
int resources_list(struct request *req);
int resources_list_all(struct request *req); /* every organization's (server admins) */
int resource_show(struct request *req);
int resource_put(struct request *req);
int resource_merge(struct request *req);
int resource_remove(struct request *req);
int resource_scope_of(struct request *req, struct resource_scope *s);
int resource_body_and_scope(struct request *req, json_t **body, struct resource_scope *s);
int respond_resource(struct request *req, int rc, int status, json_t *out);
/* The same for any object with a revision (rev; NULL: no ETag): ETag, and 304 on a GET whose
 * If-None-Match names it. out is consumed. */
int respond_revision(struct request *req, int rc, int status, json_t *out, const char *rev);
/* The one rule of every PATCH: 415 unless sent as a merge patch or plain JSON (the same). */
int merge_patch_type(struct request *req);

/* policies.c: deleting cookbook artifact cookbook/identifier needs write_policy_group on
 * every policy group whose lock names it (PURSER_EDENIED, logged, in Chef's words). */
int artifact_users_check(struct request *req, const char *cookbook, const char *identifier);

/* git.c: nginx's access checks (auth_request) before git-http-backend serves a repository:
 * 204 when the caller may fetch it (brought up to the database first), 403 for a push */
int git_access_history(struct request *req);
int git_access_catalog(struct request *req);

/* clusters.c: a cluster's creation, facts and bootstrap token, and the install route */
int clusters_create(struct request *req);
int cluster_facts_write(struct request *req);
int cluster_facts_list(struct request *req);
int cluster_token_new(struct request *req);
int install_bootstrap(struct request *req);

/* events.c: the event feed */
int events_list(struct request *req);

/* policies.c: the Policyfile API and nodes */
int policies_list(struct request *req);
int policies_get(struct request *req);
int policies_delete(struct request *req);
int revisions_create(struct request *req);
int revisions_get(struct request *req);
int revisions_delete(struct request *req);
int groups_list(struct request *req);
int groups_get(struct request *req);
int groups_delete(struct request *req);
int group_policy_get(struct request *req);
int group_policy_put(struct request *req);
int group_policy_delete(struct request *req);
int nodes_list(struct request *req);
int nodes_create(struct request *req);
int nodes_get(struct request *req);
int nodes_update(struct request *req);
int nodes_delete(struct request *req);
int group_nodes(struct request *req);
int revision_groups(struct request *req);
int group_point(struct request *req);
int group_promote(struct request *req);
int policies_diff(struct request *req);
int revisions_list(struct request *req);
int policies_collect(struct request *req);

/* cookbooks.c: sandboxes, the file store, cookbook artifacts */
int sandboxes_create(struct request *req);
int sandboxes_commit(struct request *req);
int files_put(struct request *req);
int files_get(struct request *req);
int artifacts_list(struct request *req);
int artifacts_put(struct request *req);
int artifacts_get(struct request *req);
int artifacts_delete(struct request *req);

/* documents.c: the Deckhand-compatible document API */
int doc_bucket_put(struct request *req);
int doc_post(struct request *req);
int doc_delete(struct request *req);
int rev_list(struct request *req);
int rev_get(struct request *req);
int rev_purge(struct request *req);
int rev_documents(struct request *req);
int rev_rendered(struct request *req);
int rev_diff(struct request *req);
int rev_deepdiff(struct request *req);
int rev_rollback(struct request *req);
int tag_create(struct request *req);
int tag_get(struct request *req);
int tag_list(struct request *req);
int tag_delete(struct request *req);
int validation_create(struct request *req);
int validation_list(struct request *req);
int validation_detail(struct request *req);
int validation_entries(struct request *req);
int validation_entry(struct request *req);
int doc_health(struct request *req);
int doc_versions(struct request *req);

#endif
