/* organizations.c: /organizations and /organizations/{org}/users (members), Chef's shapes. */
#include "auth.h"
#include "auth/identity.h"
#include "auth/rbac.h"
#include "base/log.h"
#include "git/gitrepo.h"
#include "handlers.h"
#include "registry/registry.h"
#include "router.h"
#include "transfer/transfer.h"
#include <stdlib.h>
#include <string.h>

/* Chef's {name: uri} (labels and filter narrow it), or a page of envelopes when one is asked
 * for (docs/inventory.md). */
int org_list(struct request *req)
{
    struct identity_list l;
    json_t *out = NULL;
    int rc;
    if (identity_list_of(req, &l)) {
        struct buf page = BUF_INIT;
        rc = identity_page(&identity_org_kind, req->svc->store, req->arena, &l, &page, &req->err);
        return respond_page(req, rc, &page);
    }
    rc = identity_org_list(req->svc->store, req->arena, &req->who, &l, request_links(req), &out,
                           &req->err);
    return respond_owned(req, rc, 200, out);
}

int org_create(struct request *req)
{
    json_t *body, *out = NULL;
    int rc = request_json(req, &body);
    if (!rc)
        rc = identity_org_create(req->svc->store, req->principal, body, request_links(req), &out,
                                 &req->err);
    return respond_owned(req, rc, 201, out);
}

int org_get(struct request *req)
{
    json_t *out = NULL;
    const char *revision = NULL;
    int rc = identity_org_get(req->svc->store, req->arena, request_param(req, "org"), &out,
                              &revision, &req->err);
    return respond_revision(req, rc, 200, out, revision);
}

/* PUT (the fields given) or, merge, PATCH (a merge patch, RFC 7396, of what GET answers);
 * If-Match, when sent, must name the current revision. */
static int org_write(struct request *req, int merge)
{
    struct identity_cond cond = {.if_match = request_header(req, "If-Match"), .merge = merge};
    json_t *body, *out = NULL;
    int rc = merge ? merge_patch_type(req) : 0;
    if (!rc)
        rc = request_json(req, &body);
    if (!rc)
        rc = identity_org_update(req->svc->store, req->principal, req->arena,
                                 request_param(req, "org"), body, &cond, &out, &req->err);
    return respond_revision(req, rc, 200, out, cond.revision);
}

int org_update(struct request *req)
{
    return org_write(req, 0);
}

int org_patch(struct request *req)
{
    return org_write(req, 1);
}

/* Chef's error form with what the organization holds (contents: {kind: count}), and how to
 * delete it anyway. */
static int not_empty(struct request *req, const json_t *contents)
{
    const char *org = request_param(req, "org");
    const char *message = arena_sprintf(req->arena,
                                        "%s; export it first (purser export %s, or GET "
                                        "/organizations/%s/export) and delete it with "
                                        "?force=true (a server admin)",
                                        req->err.message, org, org);
    if (!message)
        return purser_error_set(&req->err, PURSER_EINTERNAL, "out of memory");
    /* the whole message in the body (req->err's is cut at its size), beside what it holds */
    req->error_fields = json_pack("{s:[s], s:O}", "error", message, "contents", contents);
    return purser_error_set(&req->err, PURSER_EEXISTS, "%s", message);
}

/* The organization's events went with it: its deletion is kept in the service's log, a
 * warning when it took contents with it. */
static void log_org_deleted(struct request *req, const json_t *contents)
{
    int lost = json_object_size(contents) > 0;
    json_t *fields =
        json_pack("{s:s, s:s, s:s, s:O}", "request_id", req->request_id, "principal",
                  req->principal, "organization", request_param(req, "org"), "contents", contents);
    log_message(lost ? "warning" : "info",
                lost ? "organization deleted with its contents" : "organization deleted", fields);
    json_decref(fields);
}

/* An organization that holds more than its validator and members is deleted only with
 * ?force=true, by a server admin (a role may grant delete_organization, never the force);
 * without it, 409 with what it holds. */
int org_delete(struct request *req)
{
    const char *force = request_query(req, "force");
    int forced = force && strcmp(force, "true") == 0, rc;
    json_t *out = NULL, *contents = NULL;
    if (force && !forced && strcmp(force, "false") != 0)
        return purser_error_set(&req->err, PURSER_EINVAL, "force: true or false, not '%.40s'",
                                force);
    if (forced && !req->who.server_admin)
        return purser_error_set(&req->err, PURSER_EDENIED,
                                "force=true deletes everything the organization holds: only a "
                                "server admin may");
    rc = identity_org_delete(req->svc->store, req->arena, request_param(req, "org"), forced,
                             request_header(req, "If-Match"), &out, &contents, &req->err);
    if (!rc)
        log_org_deleted(req, contents);
    if (!rc) /* its git repositories (docs/inventory.md, "Git repositories") go with it */
        gitrepo_forget(req->svc->config->git_root, request_param(req, "org"));
    if (rc == PURSER_EEXISTS)
        rc = not_empty(req, contents);
    else
        rc = respond_owned(req, rc, 200, out);
    json_decref(contents);
    return rc;
}

/* Chef's member list (labels and filter narrow it), or a page of Member envelopes. */
int member_list(struct request *req)
{
    struct identity_list l;
    json_t *out = NULL;
    int rc;
    if (identity_list_of(req, &l)) {
        struct buf page = BUF_INIT;
        rc =
            identity_page(&identity_member_kind, req->svc->store, req->arena, &l, &page, &req->err);
        return respond_page(req, rc, &page);
    }
    rc = identity_member_list(req->svc->store, req->arena, l.org, &l, &out, &req->err);
    return respond_owned(req, rc, 200, out);
}

static int role_known(const char *role, void *ctx)
{
    return rbac_role_exists(ctx, role);
}

/* A member whose own policy group actions are limited changes no membership of its own (issue
 * 32: a limit is not lifted by the one it limits). */
static int not_own_membership(struct request *req, const char *user)
{
    const json_t *description;
    const char *action;
    if (!req->who.is_user || !user || strcmp(user, req->who.name))
        return 0;
    json_object_foreach ((json_t *)rbac_actions(req->svc->policy), action, description) {
        struct group_reach reach;
        if (!auth_group_action(action))
            continue;
        auth_group_reach(req, action, &reach);
        if (reach.patterns)
            return purser_error_set(&req->err, PURSER_EDENIED,
                                    "a member whose policy group actions are limited may not "
                                    "change its own membership");
    }
    return 0;
}

/* The patterns user holds role with now in the request's organization (*out NULL: not held, or
 * held on every group). */
static int held_limit(struct request *req, const char *user, const char *role, const char **out)
{
    struct rbac_grant *grants = NULL;
    size_t count = 0;
    long long id;
    int rc = identity_principal_id(req->svc->store, req->arena, NULL, user, &id, &req->err);
    *out = NULL;
    if (rc == PURSER_ENOTFOUND) /* the add says so */
        return 0;
    if (!rc)
        rc = identity_roles(req->svc->store, req->svc->auth_cache, req->arena, id,
                            request_param(req, "org"), &grants, &count, &req->err);
    for (size_t i = 0; !rc && i < count; i++)
        if (!strcmp(grants[i].role, role))
            *out = grants[i].policy_groups;
    return rc;
}

/* A limit binds what its holder makes, a grant of a role too (docs/operator/identity.md,
 * "Grants by policy group"): the caller grants role limited as a credential it made would be
 * (auth_made_limit; nothing to do when that is no limit). A limit the request gives must be within
 * it, and null (lifting the one held) is refused; without one, the limit held (or none) is narrowed
 * to it and written into groups, the request's {role: [patterns]}. */
static int grant_narrowed(struct request *req, const char *user, const char *role, json_t *groups)
{
    const json_t *given = json_object_get(groups, role), *pattern;
    const char *made = NULL, *held = NULL;
    char *narrowed = NULL;
    size_t i;
    int rc = auth_made_limit(req, role, &made);
    if (rc || !made)
        return rc;
    if (given && json_is_null(given))
        return purser_error_set(&req->err, PURSER_EDENIED,
                                "Field 'policy_groups.%.64s': a %.64s you grant reaches only "
                                "policy groups %.120s, as you do: its limit may not be lifted",
                                role, role, made);
    json_array_foreach (given, i, pattern)
        if (!rc && json_is_string(pattern) && !rbac_group_within(made, json_string_value(pattern)))
            rc = purser_error_set(&req->err, PURSER_EDENIED,
                                  "Field 'policy_groups.%.64s': '%.80s' is beyond your own "
                                  "policy groups (%.120s)",
                                  role, json_string_value(pattern), made);
    if (rc || given)
        return rc;
    rc = held_limit(req, user, role, &held);
    if (!rc && rbac_group_common(held, made, &narrowed))
        rc = purser_error_set(&req->err, PURSER_EINTERNAL, "out of memory");
    if (!rc && !*narrowed)
        rc = purser_error_set(&req->err, PURSER_EDENIED,
                              "Field 'roles': %.64s holds %.64s on policy groups %.100s, and a "
                              "%.64s you grant reaches only %.100s: none in common",
                              user, role, held ? held : "", role, made);
    if (!rc)
        json_object_set_new(groups, role, identity_split_groups(narrowed));
    free(narrowed);
    return rc;
}

/* The membership the caller may grant (*out: body, its policy_groups narrowed as
 * grant_narrowed says; a new reference). A server admin grants what it asks. */
static int grants_narrowed(struct request *req, json_t *body, json_t **out)
{
    const char *user = json_string_value(json_object_get(body, "username"));
    json_t *roles = json_object_get(body, "roles"),
           *groups = json_object_get(body, "policy_groups");
    json_t *role;
    size_t i;
    int rc = 0;
    *out = json_incref(body);
    if (req->who.server_admin || !user || !json_is_array(roles) ||
        (groups && !json_is_null(groups) && !json_is_object(groups)))
        return 0; /* (the add refuses what is malformed, naming the field) */
    groups = json_is_object(groups) ? json_copy(groups) : json_object();
    rc = not_own_membership(req, user);
    json_array_foreach (roles, i, role)
        if (!rc && json_is_string(role) &&
            rbac_role_exists(req->svc->policy, json_string_value(role)))
            rc = grant_narrowed(req, user, json_string_value(role), groups);
    if (!rc && json_object_size(groups)) {
        json_decref(*out);
        *out = json_copy(body);
        json_object_set(*out, "policy_groups", groups);
    }
    json_decref(groups);
    return rc;
}

int member_add(struct request *req)
{
    json_t *body, *granted = NULL, *out = NULL;
    int rc = request_json(req, &body);
    if (!rc && json_is_object(body))
        rc = grants_narrowed(req, body, &granted);
    if (!rc)
        rc = identity_member_add(req->svc->store, req->principal, request_param(req, "org"),
                                 granted ? granted : body, role_known, (void *)req->svc->policy,
                                 &out, &req->err);
    json_decref(granted);
    return respond_owned(req, rc, 201, out);
}

/* A member manager limited to some policy groups removes only a member it could have granted
 * as much (auth_made_within): not one that holds groups it does not (who holds prod). */
int member_remove(struct request *req)
{
    const char *user = request_param(req, "user");
    long long id = 0;
    int rc = identity_principal_id(req->svc->store, req->arena, NULL, user, &id, &req->err);
    if (!rc)
        rc = auth_made_within(req, id, arena_sprintf(req->arena, "member '%s'", user));
    if (!rc)
        rc = identity_member_remove(req->svc->store, req->principal, request_param(req, "org"),
                                    user, &req->err);
    return respond_owned(req, rc, 200, rc ? NULL : json_pack("{s:s}", "username", user));
}

/* What the caller may do here (the admin pages offer only these). */
int org_permissions(struct request *req)
{
    long long id;
    json_t *out;
    int rc =
        identity_org_id(req->svc->store, req->arena, request_param(req, "org"), &id, &req->err);
    if (rc)
        return rc;
    out = auth_actions(req);
    json_object_set_new(out, "organization", json_string(request_param(req, "org")));
    json_object_set_new(out, "principal", json_string(req->principal));
    json_object_set_new(out, "server_admin", json_boolean(req->who.server_admin));
    json_object_set_new(out, "roles", rbac_roles(req->svc->policy));
    json_object_set_new(out, "people_roles", rbac_people_roles(req->svc->policy));
    return respond_owned(req, 0, 200, out);
}

/* ---- an organization's export and import (lib/transfer) ---- */

static void transfer_context(struct request *req, struct transfer_ctx *c)
{
    memset(c, 0, sizeof(*c));
    c->store = req->svc->store;
    c->arena = req->arena;
    c->org = request_param(req, "org");
    c->actor = req->principal;
    c->base_url = request_base_url(req);
    c->links = request_links(req);
    c->keyring = req->svc->keyring;
    c->bootstrap_ttl = req->svc->config->bootstrap_ttl;
    c->valid_role = role_known;
    c->role_ctx = (void *)req->svc->policy;
}

int org_export(struct request *req)
{
    struct transfer_ctx c;
    const char *secrets = request_query(req, "secrets");
    json_t *out = NULL;
    int rc = 0;
    transfer_context(req, &c);
    if (secrets && strcmp(secrets, "true") && strcmp(secrets, "false"))
        return purser_error_set(&req->err, PURSER_EINVAL, "secrets: true or false, not '%.40s'",
                                secrets);
    c.secrets = secrets && !strcmp(secrets, "true");
    if (c.secrets) /* the data of encrypted documents: only for who may read it */
        rc = auth_require(req, "read_encrypted_document");
    /* every policy group is in it (what each points at): not for one whose reads are limited */
    if (!rc && auth_group_limited(req, "read_policy_group"))
        rc = purser_error_set(&req->err, PURSER_EDENIED,
                              "an export holds every policy group, and you read only some "
                              "(read_policy_group is limited to policy groups for you)");
    c.identity_providers = auth_allows(req, "read_identity_providers");
    if (!rc)
        rc = transfer_export(&c, &out, &req->err);
    if (!rc) /* a stream: one YAML document per resource */
        rc = respond_yaml(req, 200, out);
    json_decref(out);
    return rc;
}

int org_import(struct request *req)
{
    struct transfer_ctx c;
    json_t *docs = NULL, *summary = NULL;
    int rc = request_yaml(req, &docs);
    transfer_context(req, &c);
    c.identity_providers = auth_allows(req, "write_identity_providers");
    if (!rc)
        rc = transfer_import(&c, docs, &summary, &req->err);
    json_decref(docs);
    return respond_owned(req, rc, 201, summary);
}
