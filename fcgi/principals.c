/* principals.c: /users and /organizations/{org}/clients (Chef's shapes; one code path, the
 * organization telling which), with the resource convention on the same routes
 * (docs/inventory.md): revisions as ETags, If-Match, merge patches, pages of envelopes when
 * asked. */
#include "auth.h"
#include "auth/identity.h"
#include "auth/oidc_login.h"
#include "handlers.h"
#include "policy/policy.h"

#include <string.h>

int identity_list_of(struct request *req, struct identity_list *l)
{
    memset(l, 0, sizeof(*l));
    l->org = request_param(req, "org");
    l->who = &req->who;
    l->q.page_size = request_query(req, "page_size");
    l->q.page_token = request_query(req, "page_token");
    l->q.labels = request_query(req, "labels");
    l->q.filter = request_query(req, "filter");
    l->q.sort = request_query(req, "sort");
    return l->q.page_size || l->q.page_token || l->q.sort;
}

int respond_page(struct request *req, int rc, struct buf *page)
{
    if (!rc)
        rc = respond_text(req, 200, "application/json", buf_cstr(page), page->len, NULL);
    buf_release(page);
    return rc;
}

/* The {client} or {user} of the path. */
static const char *principal_name(struct request *req)
{
    const char *client = request_param(req, "client");
    return client ? client : request_param(req, "user");
}

/* GET /organizations/{org}/principals/{name}: open, as Chef's is (push jobs and knife find
 * public keys through it). API version 0 answers the first principal, 1 and later all of
 * them; 404s carry Chef's {error: "...", not_found: "..."} (a string, not a list). */
int principal_lookup(struct request *req)
{
    const char *org = request_param(req, "org"), *name = request_param(req, "name");
    json_t *found = NULL, *out;
    int rc = identity_principal_lookup(req->svc->store, req->arena, org, name, &found, &req->err);
    const char *missing = rc == PURSER_ENOTFOUND           ? "org"
                          : !rc && !json_array_size(found) ? "principal"
                                                           : NULL;
    if (missing) { /* Chef's {error: "...", not_found: "org"}: a string, not a list */
        const char *who = *missing == 'o' ? org : name;
        json_decref(found);
        req->error_fields =
            json_pack("{s:o, s:s}", "error", json_sprintf("Cannot find %s %s", missing, who),
                      "not_found", missing);
        return purser_error_set(&req->err, PURSER_ENOTFOUND, "Cannot find %s %s", missing, who);
    }
    if (rc)
        return rc;
    if (req->api_version == 0)
        out = json_incref(json_array_get(found, 0));
    else
        out = json_pack("{s:O}", "principals", found);
    json_decref(found);
    rc = respond_json(req, 200, out, NULL);
    json_decref(out);
    return rc;
}

/* Chef's {name: uri}, or a page of envelopes when one is asked for. */
int principal_list(struct request *req)
{
    struct identity_list l;
    json_t *out = NULL;
    int rc;
    if (identity_list_of(req, &l)) {
        struct buf page = BUF_INIT;
        rc = identity_page(l.org ? &identity_client_kind : &identity_user_kind, req->svc->store,
                           req->arena, &l, &page, &req->err);
        return respond_page(req, rc, &page);
    }
    rc = identity_principal_list(req->svc->store, req->arena, l.org, &l, request_links(req), &out,
                                 &req->err);
    return respond_owned(req, rc, 200, out);
}

/* A client made by a member limited to some policy groups gets its role limited to them. */
int principal_create(struct request *req)
{
    const char *org = request_param(req, "org"), *limit = NULL;
    json_t *body, *out = NULL;
    int rc = request_json(req, &body);
    if (!rc && org)
        rc = auth_made_limit(req, identity_client_role(body), &limit);
    if (!rc)
        rc = identity_principal_create(req->svc->store, req->principal, org, body, limit,
                                       request_links(req), &out, &req->err);
    return respond_owned(req, rc, 201, out);
}

int principal_get(struct request *req)
{
    json_t *out = NULL;
    const char *revision = NULL;
    int rc = identity_principal_get(req->svc->store, req->arena, request_param(req, "org"),
                                    principal_name(req), &out, &revision, &req->err);
    return respond_revision(req, rc, 200, out, revision);
}

/* A user's update of itself (one who is not a server admin holds update_user on its own path
 * alone: the policy's self) leaves as they are what a server admin sets on a user: whether it
 * is active and when it expires (a user that lifted its own expiry would outlive it). */
static int own_limits_kept(struct request *req, const json_t *body)
{
    static const char *const kept[] = {"active", "expires"};
    const char *revision = NULL;
    json_t *current = NULL;
    int rc = 0, touched = 0;
    if (request_param(req, "org") || req->who.server_admin)
        return 0;
    for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++)
        touched |= json_object_get(body, kept[i]) != NULL;
    if (touched)
        rc = identity_principal_get(req->svc->store, req->arena, NULL, principal_name(req),
                                    &current, &revision, &req->err);
    for (size_t i = 0; touched && !rc && i < sizeof(kept) / sizeof(kept[0]); i++) {
        const json_t *want = json_object_get(body, kept[i]),
                     *have = json_object_get(current, kept[i]);
        if (want && !json_equal((json_t *)want, (json_t *)(have ? have : json_null())))
            rc = purser_error_set(&req->err, PURSER_EDENIED,
                                  "%s: a user does not change its own; a server admin does",
                                  kept[i]);
    }
    json_decref(current);
    return rc;
}

/* PUT (the fields given) or, merge, PATCH (a merge patch, RFC 7396, of what GET answers);
 * If-Match, when sent, must name the current revision. */
static int principal_write(struct request *req, int merge)
{
    struct identity_cond cond = {.if_match = request_header(req, "If-Match"), .merge = merge};
    json_t *body, *out = NULL;
    int rc = merge ? merge_patch_type(req) : 0;
    if (!rc)
        rc = request_json(req, &body);
    if (!rc)
        rc = own_limits_kept(req, body);
    if (!rc)
        rc = identity_principal_update(req->svc->store, req->principal, req->arena,
                                       request_param(req, "org"), principal_name(req), body, &cond,
                                       &out, &req->err);
    return respond_revision(req, rc, 200, out, cond.revision);
}

int principal_update(struct request *req)
{
    return principal_write(req, 0);
}

int principal_patch(struct request *req)
{
    return principal_write(req, 1);
}

int principal_delete(struct request *req)
{
    json_t *out = NULL;
    int rc = identity_principal_delete(req->svc->store, req->principal, req->arena,
                                       request_param(req, "org"), principal_name(req),
                                       request_header(req, "If-Match"), &out, &req->err);
    return respond_owned(req, rc, 200, out);
}

/* The id of the path's user or client, for the keys and tokens below it. */
static int path_principal(struct request *req, long long *id)
{
    return identity_principal_id(req->svc->store, req->arena, request_param(req, "org"),
                                 principal_name(req), id, &req->err);
}

/* The URL of the keys collection of this path: base + the path up to ".../keys". */
static const char *collection_uri(struct request *req)
{
    const char *keys = strstr(req->path, "/keys");
    size_t len = keys ? (size_t)(keys - req->path) + 5 : strlen(req->path);
    return arena_sprintf(req->arena, "%s%.*s", request_base_url(req), (int)len, req->path);
}

int key_list(struct request *req)
{
    json_t *out = NULL;
    long long id;
    int rc = path_principal(req, &id);
    if (!rc)
        rc = identity_key_list(req->svc->store, req->arena, id, collection_uri(req), &out,
                               &req->err);
    return respond_owned(req, rc, 200, out);
}

/* A key of a client is a credential to sign as it: the caller gives one only to a client that
 * reaches no further than the caller could make one (its roles' policy groups), and whose
 * nodes, which the key could change, are in groups where the caller writes nodes. */
static int client_within_caller(struct request *req, long long id)
{
    const char *client = request_param(req, "client");
    const char *what = arena_sprintf(req->arena, "client '%s'", client);
    struct group_reach reach;
    struct store_rows groups;
    int rc = client ? auth_made_within(req, id, what) : 0;
    if (rc || !client)
        return rc;
    auth_group_reach(req, "write_node", &reach);
    if (!reach.patterns)
        return 0;
    rc = policy_node_creator_groups(req->svc->store, req->arena, id, &groups, &req->err);
    for (size_t i = 0; !rc && i < groups.count; i++)
        if (!auth_group_reaches(&reach, store_cell(&groups, i, 0)))
            rc = purser_error_set(&req->err, PURSER_EDENIED,
                                  "%.60s reaches further than you: it created a node in policy "
                                  "group '%.60s', and your write_node holds only %.80s",
                                  what, store_cell(&groups, i, 0), reach.patterns);
    return rc;
}

/* The sign-in behind the request's bearer token (lib/auth/oidc_login.h): provider 0 when
 * none (a Chef-signed request, a token of its own). */
static int bearer_session(struct request *req, long long *provider, long long *left)
{
    const char *authorization = request_header(req, "Authorization");
    return oidc_token_session(
        req->svc->store, req->arena,
        authorization && !strncasecmp(authorization, "Bearer ", 7) ? authorization + 7 : NULL,
        provider, left, &req->err);
}

/* The person's own keys are refused to their sign-in's session (or a token made with one): a
 * key would outlive the sign-in, and leaving the company at the provider must end one's
 * access here. Another principal's (a client's) keys are the organization's, as RBAC allows. */
static int own_key_refused(struct request *req, long long id)
{
    long long provider = 0, left = 0;
    int rc = bearer_session(req, &provider, &left);
    if (!rc && provider && id == req->who.id && req->who.is_user)
        rc = purser_error_set(&req->err, PURSER_EDENIED,
                              "a sign-in's session (or a token made with one) adds or changes no "
                              "key of its own user: a key would outlive the sign-in; use a token "
                              "(it ends with the session), or ask an administrator");
    return rc;
}

int key_create(struct request *req)
{
    json_t *body, *out = NULL;
    long long id;
    int rc = request_json(req, &body);
    if (!rc)
        rc = path_principal(req, &id);
    if (!rc)
        rc = own_key_refused(req, id);
    if (!rc)
        rc = client_within_caller(req, id);
    if (!rc)
        rc = identity_key_create(req->svc->store, req->principal, id, body, collection_uri(req),
                                 &out, &req->err);
    return respond_owned(req, rc, 201, out);
}

int key_get(struct request *req)
{
    json_t *out = NULL;
    long long id;
    int rc = path_principal(req, &id);
    if (!rc)
        rc = identity_key_get(req->svc->store, req->arena, id, request_param(req, "key"), &out,
                              &req->err);
    return respond_owned(req, rc, 200, out);
}

int key_update(struct request *req)
{
    json_t *body, *out = NULL;
    long long id;
    int rc = request_json(req, &body);
    if (!rc)
        rc = path_principal(req, &id);
    if (!rc)
        rc = own_key_refused(req, id);
    if (!rc)
        rc = client_within_caller(req, id);
    if (!rc)
        rc = identity_key_update(req->svc->store, req->principal, req->arena, id,
                                 request_param(req, "key"), body, &out, &req->err);
    return respond_owned(req, rc, 200, out);
}

int key_delete(struct request *req)
{
    json_t *out = NULL;
    long long id;
    int rc = path_principal(req, &id);
    if (!rc)
        rc = identity_key_delete(req->svc->store, req->principal, req->arena, id,
                                 request_param(req, "key"), &out, &req->err);
    return respond_owned(req, rc, 200, out);
}

/* The tokens as a list, or a page of envelopes when one is asked for. */
int token_list(struct request *req)
{
    struct identity_list l;
    json_t *out = NULL;
    int paged = identity_list_of(req, &l), rc = path_principal(req, &l.principal_id);
    if (!rc && paged) {
        struct buf page = BUF_INIT;
        rc = identity_page(&identity_token_kind, req->svc->store, req->arena, &l, &page, &req->err);
        return respond_page(req, rc, &page);
    }
    if (!rc)
        rc = identity_token_list(req->svc->store, req->arena, l.principal_id, &l, &out, &req->err);
    return respond_owned(req, rc, 200, out);
}

int token_create(struct request *req)
{
    json_t *body = NULL, *out = NULL;
    long long id, provider = 0, left = 0;
    int rc = req->body_len ? request_json(req, &body) : 0;
    const json_t *asked = json_object_get(body, "expires_in");
    if (!rc)
        rc = path_principal(req, &id);
    if (!rc)
        rc = bearer_session(req, &provider, &left);
    /* made with a sign-in: its child, ending with it at the latest */
    if (!rc && provider && !body) { /* the request's, as request_json's are */
        body = json_object();
        if (!body || arena_add_cleanup(req->arena, (void (*)(void *))json_decref, body))
            rc = purser_error_set(&req->err, PURSER_EINTERNAL, "out of memory");
    }
    if (!rc && provider && !(json_is_integer(asked) && json_integer_value(asked) <= left))
        json_object_set_new(body, "expires_in", json_integer(left));
    if (!rc)
        rc = identity_token_create(req->svc->store, req->principal, id, body, &out, &req->err);
    if (!rc && provider)
        rc = oidc_token_adopt(req->svc->store, json_string_value(json_object_get(out, "id")),
                              provider, &req->err);
    return respond_owned(req, rc, 201, out);
}

int token_update(struct request *req)
{
    struct identity_cond cond = {.if_match = request_header(req, "If-Match"), .merge = 1};
    long long id;
    json_t *body, *out = NULL;
    int rc = path_principal(req, &id);
    if (!rc)
        rc = request_json(req, &body);
    if (!rc)
        rc = identity_token_update(req->svc->store, req->principal, req->arena, id,
                                   request_param(req, "id"), body, &cond, &out, &req->err);
    return respond_revision(req, rc, 200, out, cond.revision);
}

int token_delete(struct request *req)
{
    long long id;
    int rc = path_principal(req, &id);
    if (!rc)
        rc = identity_token_delete(req->svc->store, req->principal, id, request_param(req, "id"),
                                   request_header(req, "If-Match"), &req->err);
    if (rc)
        return rc;
    return respond_text(req, 204, "application/json", "", 0, NULL);
}
