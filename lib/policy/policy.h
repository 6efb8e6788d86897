/* policy.h: the Policyfile API's storage: policies, immutable revisions, policy groups and
 * their pointers, and nodes, answering in the Chef Infra Server's JSON shapes.
 *
 * As identity.h: answers through `json_t **out` (new references), a write's `actor` (or `who`,
 * also recorded as the writer) is who makes it, named by its events, `links` makes their links
 * (base/links.h: the caller's, who owns the API's paths; NULL: null links), bodies are borrowed,
 * errors carry Chef's messages. Locks are validated by policy_lock_validate() first; they are
 * stored as received (key order kept) without the "policy_group" field. A revision_id already
 * stored for the policy with other content is PURSER_EEXISTS, on POST and on PUT alike (Chef
 * silently keeps the old content on PUT).
 */
#ifndef PURSER_POLICY_H
#define PURSER_POLICY_H

#include "base/arena.h"
#include "base/links.h"
#include "base/lru.h"
#include "store/store.h"

#include <jansson.h>

/* A list's page request (all may be NULL): page_size (default 100, clamped to 1..1000),
 * page_token (a previous page's next_page_token), sort (a key of the list; '-' before:
 * descending), filter (field==value;field!=value on the list's fields; '*' in a value matches any
 * text); all: one page of everything. Nodes sort by name, policy_group, policy_name or
 * updated_at and filter on name, policy_name, policy_group. */
struct page_query {
    const char *page_size, *page_token, *sort, *filter;
    int all;
};

/* Their part in an organization's export and import (lib/resource/transfer_hooks.h;
 * policy_transfer.c): PolicyRevision ("<policy>/<revision id>", the lock), PolicyGroup (its
 * pointers, each to a PolicyRevision of the stream) and Node. */
struct transfer_hooks;
extern const struct transfer_hooks policy_revision_transfer, policy_group_transfer,
    policy_node_transfer;

/* GET policies: {name: {uri, revisions: {rev: {created_at, created_by}}}} */
int policy_list(struct store *store, struct arena *arena, const char *org,
                const struct links *links, json_t **out, struct purser_error *err);
/* A page of policies: {items: [{name, revision_count, latest_at (its newest revision's upload,
 * absent without one)}], next_page_token ("" at the end), total (what the filter selects)}; sort
 * by name, revision_count or latest_at; filter on name. Pages by position. */
int policy_page(struct store *store, struct arena *arena, const char *org,
                const struct page_query *q, json_t **out, struct purser_error *err);
/* GET policies/{name}: {revisions: {...}}; DELETE answers the same and removes everything. */
int policy_get(struct store *store, struct arena *arena, const char *org, const char *name,
               json_t **out, struct purser_error *err);
/* groups (comma-separated, NULL: any): the only policy groups whose pointers the delete may
 * take with it, as the caller checked them; a pointer of another group, even one made since,
 * keeps everything (PURSER_EEXISTS, nothing deleted): the check and the delete are one. */
int policy_delete(struct store *store, const char *actor, struct arena *arena, const char *org,
                  const char *name, const char *groups, json_t **out, struct purser_error *err);

/* POST policies/{name}/revisions: the lock back (201); 409 if the revision exists. */
int policy_revision_create(struct store *store, const char *org, const char *name,
                           const json_t *lock, const char *who, json_t **out,
                           struct purser_error *err);
/* GET policies/{name}/revisions (the RFC's list of the available revisions): {rev: {uri,
 * created_at, created_by, policy_group_list}}, oldest first; Chef's 404 for an unknown policy. */
int policy_revision_list(struct store *store, struct arena *arena, const char *org,
                         const char *name, const struct links *links, json_t **out,
                         struct purser_error *err);
/* A page of a policy's revisions: {items: [{revision_id, created_at, created_by,
 * policy_group_list}], next_page_token ("" at the end), total (what the filter selects)}; sort by
 * revision_id, created_at or created_by; filter on revision_id and created_by (q->all: one page
 * of all it selects). Pages by position; Chef's 404 for an unknown policy. */
int policy_revision_page(struct store *store, struct arena *arena, const char *org,
                         const char *name, const struct page_query *q, json_t **out,
                         struct purser_error *err);
/* GET policies/{name}/revisions/{rev}: the lock and policy_group_list. DELETE: the lock. */
int policy_revision_get(struct store *store, struct arena *arena, const char *org, const char *name,
                        const char *revision, json_t **out, struct purser_error *err);
int policy_revision_delete(struct store *store, const char *actor, struct arena *arena,
                           const char *org, const char *name, const char *revision,
                           const char *groups, json_t **out, struct purser_error *err);

/* GET policy_groups: {group: {uri, policies: {name: {revision_id}}}} (a group without
 * policies without the key, as Chef lists it); a group's own GET and DELETE answer {uri,
 * policies}, policies {} when it has none (as Chef shows one). */
int policy_group_list(struct store *store, struct arena *arena, const char *org,
                      const struct links *links, json_t **out, struct purser_error *err);
/* A page of policy groups: {items: [{name, policy_count, policies: {policy: {revision_id}}}],
 * next_page_token, total}; sort by name or policy_count; filter on name. reach: NULL, or the
 * groups the caller may see as rbac_group_matches patterns ("" none), applied before paging so
 * that the total is what the caller may see. */
int policy_group_page(struct store *store, struct arena *arena, const char *org,
                      const struct page_query *q, const char *reach, json_t **out,
                      struct purser_error *err);
int policy_group_get(struct store *store, struct arena *arena, const char *org, const char *group,
                     const struct links *links, json_t **out, struct purser_error *err);
int policy_group_delete(struct store *store, const char *actor, struct arena *arena,
                        const char *org, const char *group, const struct links *links, json_t **out,
                        struct purser_error *err);

/* GET policy_groups/{group}/policies/{name}: the lock the group points at. */
int policy_group_policy_get(struct store *store, struct arena *arena, const char *org,
                            const char *group, const char *name, json_t **out,
                            struct purser_error *err);
/* The same lock as stored text, for chef-client's hot path: the pointer is read from the
 * database every time, the revision's body from cache when it is there (revisions never
 * change). *etag is the content's SHA-256 (64 hex characters), in the arena; *text may be
 * the cache's memory, valid until the next lru_put on this cache (answer before any). */
int policy_group_policy_fetch(struct store *store, struct lru *cache, struct arena *arena,
                              const char *org, const char *group, const char *name,
                              const char **text, size_t *len, const char **etag,
                              struct purser_error *err);

/* PUT: stores the revision if new, creates the group if new, points the group at it, in one
 * transaction. *created is 1 when the group had no pointer for the policy before. */
int policy_group_policy_put(struct store *store, const char *org, const char *group,
                            const char *name, const json_t *lock, const char *who, int *created,
                            json_t **out, struct purser_error *err);
int policy_group_policy_delete(struct store *store, const char *actor, struct arena *arena,
                               const char *org, const char *group, const char *name, json_t **out,
                               struct purser_error *err);

/* Nodes: list {name: uri}; create (201 {uri}, 409 "Node already exists"); get; update (the
 * name must stay); delete. policy_name and policy_group are validated like policy names.
 * creator_id is the principal creating the node (0: none to record). owner_only, when not 0,
 * limits update and delete to the node's creator: another principal's node is PURSER_EDENIED
 * "missing update permission" (or delete), as the Chef Infra Server's node ACL answers. */
int policy_node_list(struct store *store, struct arena *arena, const char *org,
                     const struct links *links, json_t **out, struct purser_error *err);
/* A page of node summaries: {items: [{name, policy_name, policy_group, revision_id (what its
 * group points at for its policy), platform, platform_version, ipaddress, fqdn, ohai_time,
 * updated_at}], next_page_token ("" at the end), total (what the filter selects)}. Pages are
 * by position: a node added or removed before a page's start shifts it by one. */
int policy_node_page(struct store *store, struct arena *arena, const char *org,
                     const struct page_query *q, json_t **out, struct purser_error *err);
int policy_node_create(struct store *store, const char *actor, const char *org, const json_t *body,
                       long long creator_id, const struct links *links, json_t **out,
                       struct purser_error *err);
int policy_node_get(struct store *store, struct arena *arena, const char *org, const char *name,
                    json_t **out, struct purser_error *err);
int policy_node_update(struct store *store, const char *actor, struct arena *arena, const char *org,
                       const char *name, const json_t *body, long long owner_only, json_t **out,
                       struct purser_error *err);
int policy_node_delete(struct store *store, const char *actor, struct arena *arena, const char *org,
                       const char *name, long long owner_only, json_t **out,
                       struct purser_error *err);

/* The policy groups of the nodes creator_id created (what a credential of it may change under
 * the node role's `own`): rows of (group), distinct, in the arena. */
int policy_node_creator_groups(struct store *store, struct arena *arena, long long creator_id,
                               struct store_rows *out, struct purser_error *err);

/* Beyond Chef. Nodes of a group (and policy, when name is not NULL): {name: uri}. */
int policy_group_nodes(struct store *store, struct arena *arena, const char *org, const char *group,
                       const char *name, const struct links *links, json_t **out,
                       struct purser_error *err);

/* PUT policy_groups/{group}/policies/{name}/revision/{rev}: point the group at an uploaded
 * revision; answers the lock. */
int policy_group_point(struct store *store, struct arena *arena, const char *org, const char *group,
                       const char *name, const char *revision, const char *who, int *created,
                       json_t **out, struct purser_error *err);

/* POST policy_groups/{group}/promote {"from": G, "policies": [names]?}: copies the source
 * group's pointers (all, or the named ones) in one transaction; a named policy the source
 * group does not have changes nothing (PURSER_ENOTFOUND). Answers the group. */
int policy_group_promote(struct store *store, struct arena *arena, const char *org,
                         const char *group, const json_t *body, const char *who,
                         const struct links *links, json_t **out, struct purser_error *err);

/* GET policies/{name}/diff: from_group or from_revision, to_group or to_revision; answers
 * policy_diff() plus "from" and "to" labels. */
int policy_diff_query(struct store *store, struct arena *arena, const char *org, const char *name,
                      const char *from_group, const char *from_revision, const char *to_group,
                      const char *to_revision, json_t **out, struct purser_error *err);

/* Collection (POST collect_policies, `purser gc-policies`): what it keeps and where. */
struct policy_collect_options {
    long keep;              /* the newest revisions of each policy kept, pointed at or not */
    int dry_run;            /* 1: answer what would go and remove nothing */
    const json_t *policies; /* the policies whose revisions may go (strings); NULL: all */
};

/* The body {"keep": N (0..1000000), "dry_run": bool?, "policies": [names]?} into *out
 * (policies borrowed from body); PURSER_EINVAL naming the field, an unknown one too. */
int policy_collect_parse(const json_t *body, struct policy_collect_options *out,
                         struct purser_error *err);

/* Collects organization org in one transaction: the revisions no group points at beyond the
 * newest opts->keep of each policy, then the cookbook artifacts no remaining revision's
 * cookbook_locks name, then the stored files only those artifacts used and no open sandbox
 * lists. Each deletion writes the event the API's delete of it writes (revisions and
 * artifacts; files have none). A policy of opts->policies that does not exist is
 * PURSER_ENOTFOUND and nothing goes. *out (new): {keep, dry_run, revisions: [{policy,
 * revision_id}], cookbook_artifacts: [{name, identifier}], files: [checksum]}, what went (or,
 * with dry_run, what would go). actor: who collects (the events'). */
int policy_collect(struct store *store, const char *actor, const char *org,
                   const struct policy_collect_options *opts, json_t **out,
                   struct purser_error *err);

/* The names of every organization, in order (`purser gc-policies` without --org). */
int policy_collect_organizations(struct store *store, struct arena *arena, struct store_rows *out,
                                 struct purser_error *err);

#endif
