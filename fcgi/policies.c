/* policies.c: the Policyfile API (policies, revisions, policy groups) and nodes, Chef's shapes. */
#include "auth.h"
#include "auth/identity.h"
#include "handlers.h"
#include "policy/policy.h"
#include "policy/policy_lock.h"
#include "router.h"

#include <stdlib.h>
#include <string.h>

/* A lock body: at most Chef's 2,000,000 bytes, then JSON. */
static int read_lock(struct request *req, json_t **lock)
{
    if (req->body_len > POLICY_LOCK_MAX_BYTES)
        return purser_error_set(&req->err, PURSER_ETOOLARGE, "JSON must be no more than %d bytes.",
                                POLICY_LOCK_MAX_BYTES);
    return request_json(req, lock);
}

/* ---- grants limited to policy groups ------------------------------------------------------ */

/* 0 when the caller holds action on every group named in the array groups (strings); the
 * first refusal otherwise (logged, in Chef's words). */
static int require_each(struct request *req, const char *action, const json_t *groups)
{
    size_t i;
    json_t *g;
    int rc = 0;
    json_array_foreach (groups, i, g)
        if (!rc && json_is_string(g))
            rc = auth_require_group(req, action, json_string_value(g));
    return rc;
}

/* Leaves in the array groups only those the caller may read. */
static void readable_only(struct request *req, json_t *groups)
{
    struct group_reach reach;
    auth_group_reach(req, "read_policy_group", &reach);
    for (size_t i = json_array_size(groups); i-- > 0;)
        if (!auth_group_reaches(&reach, json_string_value(json_array_get(groups, i))))
            json_array_remove(groups, i);
}

/* The groups whose pointers name policy `name` (a new array). */
static int groups_pointing(struct request *req, const char *name, json_t **groups)
{
    json_t *all = NULL, *group;
    const char *g;
    int rc = policy_group_list(req->svc->store, req->arena, request_param(req, "org"),
                               request_links(req), &all, &req->err);
    *groups = json_array();
    json_object_foreach (all, g, group)
        if (json_object_get(json_object_get(group, "policies"), name))
            json_array_append_new(*groups, json_string(g));
    json_decref(all);
    return rc;
}

int artifact_users_check(struct request *req, const char *cookbook, const char *identifier)
{
    json_t *all = NULL, *group, *rev;
    const char *g, *policy;
    int rc = policy_group_list(req->svc->store, req->arena, request_param(req, "org"),
                               request_links(req), &all, &req->err);
    json_object_foreach (all, g, group) {
        json_object_foreach (json_object_get(group, "policies"), policy, rev) {
            json_t *lock = NULL;
            const json_t *used;
            if (rc)
                break;
            rc = policy_revision_get(req->svc->store, req->arena, request_param(req, "org"), policy,
                                     json_string_value(json_object_get(rev, "revision_id")), &lock,
                                     &req->err);
            used = json_object_get(json_object_get(lock, "cookbook_locks"), cookbook);
            used = json_object_get(used, "identifier");
            if (!rc && json_is_string(used) && !strcmp(json_string_value(used), identifier))
                rc = auth_require_group(req, "write_policy_group", g);
            json_decref(lock);
        }
    }
    json_decref(all);
    return rc;
}

/* The groups a node is in, before and after a write, are the groups a grant limited to policy
 * groups must reach: a node moved out of prod moves what prod runs. */
static int node_groups_check(struct request *req, const json_t *body)
{
    json_t *node = NULL;
    const char *name = request_param(req, "node");
    const char *now = NULL, *next = json_string_value(json_object_get(body, "policy_group"));
    int rc = 0;
    if (!auth_group_limited(req, req->route->action))
        return 0;
    if (name && !(rc = policy_node_get(req->svc->store, req->arena, request_param(req, "org"), name,
                                       &node, &req->err)))
        now = json_string_value(json_object_get(node, "policy_group"));
    if (!rc && now)
        rc = auth_require_group(req, req->route->action, now);
    if (!rc && next)
        rc = auth_require_group(req, req->route->action, next);
    json_decref(node);
    return rc;
}

/* ---- the lists as pages --------------------------------------------------------------------- */

static struct page_query page_query_of(struct request *req)
{
    return (struct page_query){request_query(req, "page_size"), request_query(req, "page_token"),
                               request_query(req, "sort"), request_query(req, "filter"), 0};
}

/* Whether a list request asks for a page (else Chef's shape, which filter alone narrows). */
static int wants_page(const struct page_query *q)
{
    return q->page_size || q->page_token || q->sort;
}

/* Chef's map out narrowed to the keys (field of each item) of page's items (a page of all the
 * filter selects). */
static void keep_listed(json_t *out, json_t *page, const char *field)
{
    const char *name;
    json_t *value, *tmp, *names = json_object();
    size_t i;
    json_t *item;
    json_array_foreach (json_object_get(page, "items"), i, item)
        json_object_set(names, json_string_value(json_object_get(item, field)), json_true());
    json_object_foreach_safe (out, tmp, name, value)
        if (!json_object_get(names, name))
            json_object_del(out, name);
    json_decref(names);
}

/* Chef's {name: {uri, revisions}}; with page_size, page_token or sort, pages of policies (their
 * revision count and newest upload); filter narrows either shape. */
int policies_list(struct request *req)
{
    json_t *out = NULL, *page = NULL;
    struct page_query q = page_query_of(req);
    int rc;
    if (wants_page(&q)) {
        rc = policy_page(req->svc->store, req->arena, request_param(req, "org"), &q, &out,
                         &req->err);
        return respond_owned(req, rc, 200, out);
    }
    rc = policy_list(req->svc->store, req->arena, request_param(req, "org"), request_links(req),
                     &out, &req->err);
    if (!rc && q.filter) {
        q.all = 1;
        rc = policy_page(req->svc->store, req->arena, request_param(req, "org"), &q, &page,
                         &req->err);
        if (!rc)
            keep_listed(out, page, "name");
        json_decref(page);
    }
    return respond_owned(req, rc, 200, out);
}

int policies_get(struct request *req)
{
    json_t *out = NULL;
    int rc = policy_get(req->svc->store, req->arena, request_param(req, "org"),
                        request_param(req, "name"), &out, &req->err);
    return respond_owned(req, rc, 200, out);
}

/* The names of groups joined by commas (in the arena; "" for none), for the delete that may
 * take those groups' pointers and no other. */
static const char *joined(struct request *req, const json_t *groups)
{
    char *text = identity_join_groups(groups);
    const char *out = arena_strdup(req->arena, text ? text : "");
    free(text);
    return out;
}

int policies_delete(struct request *req)
{
    json_t *out = NULL, *groups = NULL;
    const char *checked = NULL;
    int rc = groups_pointing(req, request_param(req, "name"), &groups);
    if (!rc) /* its pointers go with it: the right to move each group that has one */
        rc = require_each(req, "write_policy_group", groups);
    if (!rc)
        checked = joined(req, groups);
    json_decref(groups);
    if (!rc)
        rc = policy_delete(req->svc->store, req->principal, req->arena, request_param(req, "org"),
                           request_param(req, "name"), checked, &out, &req->err);
    return respond_owned(req, rc, 200, out);
}

int revisions_create(struct request *req)
{
    json_t *lock, *out = NULL;
    int rc = read_lock(req, &lock);
    if (!rc)
        rc = policy_revision_create(req->svc->store, request_param(req, "org"),
                                    request_param(req, "name"), lock, req->who.name, &out,
                                    &req->err);
    return respond_owned(req, rc, 201, out);
}

/* The RFC's list of a policy's revisions; of the groups pointing at each, those the caller may
 * read. */
int revisions_list(struct request *req)
{
    json_t *out = NULL, *page = NULL, *entry;
    const char *revision;
    struct page_query q = page_query_of(req);
    size_t i;
    int rc;
    if (wants_page(&q)) {
        rc = policy_revision_page(req->svc->store, req->arena, request_param(req, "org"),
                                  request_param(req, "name"), &q, &out, &req->err);
        json_array_foreach (json_object_get(out, "items"), i, entry)
            readable_only(req, json_object_get(entry, "policy_group_list"));
        return respond_owned(req, rc, 200, out);
    }
    rc = policy_revision_list(req->svc->store, req->arena, request_param(req, "org"),
                              request_param(req, "name"), request_links(req), &out, &req->err);
    if (!rc && q.filter) {
        q.all = 1;
        rc = policy_revision_page(req->svc->store, req->arena, request_param(req, "org"),
                                  request_param(req, "name"), &q, &page, &req->err);
        if (!rc)
            keep_listed(out, page, "revision_id");
        json_decref(page);
    }
    json_object_foreach (out, revision, entry)
        readable_only(req, json_object_get(entry, "policy_group_list"));
    return respond_owned(req, rc, 200, out);
}

int revisions_get(struct request *req)
{
    json_t *out = NULL;
    int rc =
        policy_revision_get(req->svc->store, req->arena, request_param(req, "org"),
                            request_param(req, "name"), request_param(req, "rev"), &out, &req->err);
    if (!rc)
        readable_only(req, json_object_get(out, "policy_group_list"));
    return respond_owned(req, rc, 200, out);
}

int revisions_delete(struct request *req)
{
    json_t *out = NULL;
    const char *checked = NULL;
    int rc =
        policy_revision_get(req->svc->store, req->arena, request_param(req, "org"),
                            request_param(req, "name"), request_param(req, "rev"), &out, &req->err);
    if (!rc) /* its pointers go with it: the right to move each group that has one */
        rc = require_each(req, "write_policy_group", json_object_get(out, "policy_group_list"));
    if (!rc)
        checked = joined(req, json_object_get(out, "policy_group_list"));
    json_decref(out);
    out = NULL;
    if (!rc)
        rc = policy_revision_delete(req->svc->store, req->principal, req->arena,
                                    request_param(req, "org"), request_param(req, "name"),
                                    request_param(req, "rev"), checked, &out, &req->err);
    return respond_owned(req, rc, 200, out);
}

/* Chef's {group: {uri, policies}} of the groups the caller may read; with page_size,
 * page_token or sort, pages of them; filter narrows either shape. */
int groups_list(struct request *req)
{
    json_t *out = NULL, *page = NULL;
    struct page_query q = page_query_of(req);
    const char *group;
    json_t *value, *tmp;
    struct group_reach reach;
    int rc;
    auth_group_reach(req, "read_policy_group", &reach);
    if (wants_page(&q)) {
        rc = policy_group_page(req->svc->store, req->arena, request_param(req, "org"), &q,
                               !reach.held ? "" : reach.patterns, &out, &req->err);
        return respond_owned(req, rc, 200, out);
    }
    rc = policy_group_list(req->svc->store, req->arena, request_param(req, "org"),
                           request_links(req), &out, &req->err);
    json_object_foreach_safe (out, tmp, group, value) /* the groups the caller may read */
        if (!auth_group_reaches(&reach, group))
            json_object_del(out, group);
    if (!rc && q.filter) {
        q.all = 1;
        rc = policy_group_page(req->svc->store, req->arena, request_param(req, "org"), &q, NULL,
                               &page, &req->err);
        if (!rc)
            keep_listed(out, page, "name");
        json_decref(page);
    }
    return respond_owned(req, rc, 200, out);
}

int groups_get(struct request *req)
{
    json_t *out = NULL;
    int rc = policy_group_get(req->svc->store, req->arena, request_param(req, "org"),
                              request_param(req, "group"), request_links(req), &out, &req->err);
    return respond_owned(req, rc, 200, out);
}

int groups_delete(struct request *req)
{
    json_t *out = NULL;
    int rc =
        policy_group_delete(req->svc->store, req->principal, req->arena, request_param(req, "org"),
                            request_param(req, "group"), request_links(req), &out, &req->err);
    return respond_owned(req, rc, 200, out);
}

/* chef-client's fetch on every run: the stored text as is, with an ETag; 304 when the
 * client already has it. */
int group_policy_get(struct request *req)
{
    const char *text, *etag;
    const char *header;
    size_t len;
    int rc = policy_group_policy_fetch(req->svc->store, req->svc->revision_cache, req->arena,
                                       request_param(req, "org"), request_param(req, "group"),
                                       request_param(req, "name"), &text, &len, &etag, &req->err);
    if (rc)
        return rc;
    header = arena_concat(req->arena, "ETag: \"", etag, "\"\r\n", (const char *)NULL);
    if (request_etag_fresh(req, etag))
        return respond_text(req, 304, "application/json", "", 0, header);
    return respond_text(req, 200, "application/json", text, len, header);
}

int group_policy_put(struct request *req)
{
    json_t *lock, *out = NULL;
    int created = 0;
    int rc = read_lock(req, &lock);
    if (!rc)
        rc = policy_group_policy_put(req->svc->store, request_param(req, "org"),
                                     request_param(req, "group"), request_param(req, "name"), lock,
                                     req->who.name, &created, &out, &req->err);
    return respond_owned(req, rc, created ? 201 : 200, out);
}

int group_policy_delete(struct request *req)
{
    json_t *out = NULL;
    int rc = policy_group_policy_delete(req->svc->store, req->principal, req->arena,
                                        request_param(req, "org"), request_param(req, "group"),
                                        request_param(req, "name"), &out, &req->err);
    return respond_owned(req, rc, 200, out);
}

/* A summary's revision_id is what its group points at: a reader who may not read the group
 * sees the node (read_node) without it, as if the group pointed at nothing. */
static void pointers_readable_only(struct request *req, json_t *page)
{
    struct group_reach reach;
    size_t i;
    json_t *item;
    auth_group_reach(req, "read_policy_group", &reach);
    json_array_foreach (json_object_get(page, "items"), i, item) {
        const char *group = json_string_value(json_object_get(item, "policy_group"));
        if (!group || !auth_group_reaches(&reach, group))
            json_object_del(item, "revision_id");
    }
}

/* Chef's {name: uri}; with page_size, page_token or sort, pages of node summaries (filter
 * narrows either shape). */
int nodes_list(struct request *req)
{
    json_t *out = NULL, *page = NULL;
    struct page_query q = page_query_of(req);
    int rc;
    if (wants_page(&q)) {
        rc = policy_node_page(req->svc->store, req->arena, request_param(req, "org"), &q, &out,
                              &req->err);
        if (!rc)
            pointers_readable_only(req, out);
        return respond_owned(req, rc, 200, out);
    }
    if (!q.filter) {
        rc = policy_node_list(req->svc->store, req->arena, request_param(req, "org"),
                              request_links(req), &out, &req->err);
        return respond_owned(req, rc, 200, out);
    }
    q.all = 1;
    rc = policy_node_page(req->svc->store, req->arena, request_param(req, "org"), &q, &page,
                          &req->err);
    if (!rc) {
        size_t i;
        json_t *item;
        out = json_object();
        json_array_foreach (json_object_get(page, "items"), i, item) {
            const char *name = json_string_value(json_object_get(item, "name"));
            json_object_set_new(
                out, name,
                link_url(request_links(req), LINK_NODE, request_param(req, "org"), name, NULL));
        }
    }
    json_decref(page);
    return respond_owned(req, rc, 200, out);
}

int nodes_create(struct request *req)
{
    json_t *body, *out = NULL;
    int rc = request_json(req, &body);
    if (!rc)
        rc = node_groups_check(req, body);
    if (!rc)
        rc = policy_node_create(req->svc->store, req->principal, request_param(req, "org"), body,
                                req->who.id, request_links(req), &out, &req->err);
    return respond_owned(req, rc, 201, out);
}

int nodes_get(struct request *req)
{
    json_t *out = NULL;
    int rc = policy_node_get(req->svc->store, req->arena, request_param(req, "org"),
                             request_param(req, "node"), &out, &req->err);
    return respond_owned(req, rc, 200, out);
}

int nodes_update(struct request *req)
{
    json_t *body, *out = NULL;
    int rc = request_json(req, &body);
    if (!rc)
        rc = node_groups_check(req, body);
    if (!rc)
        rc = policy_node_update(req->svc->store, req->principal, req->arena,
                                request_param(req, "org"), request_param(req, "node"), body,
                                req->owner_only, &out, &req->err);
    return respond_owned(req, rc, 200, out);
}

int nodes_delete(struct request *req)
{
    json_t *out = NULL;
    int rc = node_groups_check(req, NULL);
    if (!rc)
        rc = policy_node_delete(req->svc->store, req->principal, req->arena,
                                request_param(req, "org"), request_param(req, "node"),
                                req->owner_only, &out, &req->err);
    return respond_owned(req, rc, 200, out);
}

/* ---- beyond Chef ---------------------------------------------------------------------------- */

int group_nodes(struct request *req)
{
    json_t *out = NULL;
    int rc = policy_group_nodes(req->svc->store, req->arena, request_param(req, "org"),
                                request_param(req, "group"), request_param(req, "name"),
                                request_links(req), &out, &req->err);
    return respond_owned(req, rc, 200, out);
}

int revision_groups(struct request *req)
{
    json_t *lock = NULL;
    int rc = policy_revision_get(req->svc->store, req->arena, request_param(req, "org"),
                                 request_param(req, "name"), request_param(req, "rev"), &lock,
                                 &req->err);
    json_t *out = rc ? NULL : json_incref(json_object_get(lock, "policy_group_list"));
    json_decref(lock);
    readable_only(req, out);
    return respond_owned(req, rc, 200, out);
}

int group_point(struct request *req)
{
    json_t *out = NULL;
    int created = 0;
    int rc = req->body_len ? purser_error_set(&req->err, PURSER_EINVAL,
                                              "this PUT takes no body: the revision is in the path")
                           : 0;
    if (!rc)
        rc =
            policy_group_point(req->svc->store, req->arena, request_param(req, "org"),
                               request_param(req, "group"), request_param(req, "name"),
                               request_param(req, "rev"), req->who.name, &created, &out, &req->err);
    return respond_owned(req, rc, created ? 201 : 200, out);
}

int group_promote(struct request *req)
{
    json_t *body, *out = NULL;
    int rc = request_json(req, &body);
    const json_t *from = json_object_get(body, "from");
    if (!rc && json_is_string(from)) /* what it copies: read on the source group */
        rc = auth_require_group(req, "read_policy_group", json_string_value(from));
    if (!rc)
        rc = policy_group_promote(req->svc->store, req->arena, request_param(req, "org"),
                                  request_param(req, "group"), body, req->who.name,
                                  request_links(req), &out, &req->err);
    return respond_owned(req, rc, 200, out);
}

int policies_diff(struct request *req)
{
    json_t *out = NULL;
    const char *groups[] = {request_query(req, "from_group"), request_query(req, "to_group")};
    int rc = 0;
    for (size_t i = 0; i < 2; i++) /* a group's pointer read: read on that group */
        if (!rc && groups[i])
            rc = auth_require_group(req, "read_policy_group", groups[i]);
    if (!rc)
        rc = policy_diff_query(req->svc->store, req->arena, request_param(req, "org"),
                               request_param(req, "name"), request_query(req, "from_group"),
                               request_query(req, "from_revision"), request_query(req, "to_group"),
                               request_query(req, "to_revision"), &out, &req->err);
    return respond_owned(req, rc, 200, out);
}

/* Collection: what goes has no pointer of any group, so it needs no right on a group. */
int policies_collect(struct request *req)
{
    struct policy_collect_options options;
    json_t *body, *out = NULL;
    int rc = request_json(req, &body);
    if (!rc)
        rc = policy_collect_parse(body, &options, &req->err);
    if (!rc)
        rc = policy_collect(req->svc->store, req->principal, request_param(req, "org"), &options,
                            &out, &req->err);
    return respond_owned(req, rc, 200, out);
}
