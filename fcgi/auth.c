/* auth.c: API version negotiation, bearer and Chef authentication, and the RBAC check. */
#include "auth.h"

#include "auth/chef_auth.h"
#include "base/crypto.h"
#include "base/log.h"
#include "base/metrics.h"
#include "base/utf8.h"
#include "router.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* An authentication failure, counted by its reason (the worker counts the others). */
static void auth_failed(struct request *req, enum metric reason)
{
    metrics_add(reason, 1);
    req->auth_failure_counted = 1;
}

/* What a message quotes of a header: at most its first 64 bytes (cut between characters), with
 * "..." when there was more. */
static const char *quoted(struct request *req, const char *text)
{
    size_t n = utf8_prefix(text, strlen(text), 64);
    const char *cut = text[n] ? arena_sprintf(req->arena, "%.*s...", (int)n, text) : NULL;
    return cut ? cut : text;
}

int auth_api_version(struct request *req)
{
    const char *text = request_header(req, "X-Ops-Server-API-Version");
    char *end;
    long v;
    char *shown;

    req->api_version = 0;
    if (!text)
        return 0;
    v = strtol(text, &end, 10);
    if (*text && !*end && v >= API_VERSION_MIN && v <= API_VERSION_MAX) {
        req->api_version = (int)v;
        return 0;
    }
    req->api_version = -1;
    /* Chef's body: {"error": "invalid-x-ops-server-api-version", "message", the versions};
     * the version quoted back with what is not UTF-8 as \xNN */
    shown = utf8_escape(quoted(req, text));
    req->error_fields =
        json_pack("{s:s, s:o, s:i, s:i}", "error", "invalid-x-ops-server-api-version", "message",
                  json_sprintf("Specified version %s not supported", shown ? shown : ""),
                  "min_version", API_VERSION_MIN, "max_version", API_VERSION_MAX);
    purser_error_set(&req->err, HTTP_ENOTACCEPT, "Specified version %s not supported",
                     shown ? shown : "");
    free(shown);
    return HTTP_ENOTACCEPT;
}

/* X-Ops-Authorization-1, -2, ... joined, in order (looked up by their CGI names). */
static const char *joined_signature(struct request *req)
{
    struct buf b = BUF_INIT;
    const char *copy;
    for (int i = 1; i < 100; i++) {
        char name[40] = "HTTP_X_OPS_AUTHORIZATION_";
        size_t n = strlen(name);
        const char *line;
        if (i >= 10)
            name[n++] = (char)('0' + i / 10);
        name[n++] = (char)('0' + i % 10);
        name[n] = '\0';
        if (!(line = request_env(req, name)))
            break;
        buf_adds(&b, line);
    }
    copy = arena_strdup(req->arena, buf_cstr(&b));
    buf_release(&b);
    return copy;
}

static int authenticate_chef(struct request *req)
{
    struct chef_signed_request signed_req = {
        .method = req->method,
        .path = req->path,
        .body = req->body ? req->body : "",
        .body_len = req->body_len,
        .user_id = request_header(req, "X-Ops-UserId"),
        .timestamp = request_header(req, "X-Ops-Timestamp"),
        .sign = request_header(req, "X-Ops-Sign"),
        .content_hash = request_header(req, "X-Ops-Content-Hash"),
        .signature = joined_signature(req),
        .server_api_version = request_header(req, "X-Ops-Server-API-Version"),
    };
    enum chef_sign_version version;
    const char **keys = NULL;
    size_t key_count = 0, which;
    int rc = chef_auth_check_headers(&signed_req, time(NULL), CHEF_AUTH_SKEW, &version, &req->err);
    if (rc) {
        auth_failed(req, METRIC_AUTH_CHEF_HEADERS);
        return rc;
    }
    /* a name that is not UTF-8 names no one */
    rc = utf8_valid(signed_req.user_id, strlen(signed_req.user_id))
             ? identity_requestor(req->svc->store, req->svc->auth_cache, req->arena,
                                  request_org(req), signed_req.user_id, &req->who, &keys,
                                  &key_count, &req->err)
             : PURSER_ENOTFOUND;
    if (rc == PURSER_ENOTFOUND) {
        auth_failed(req, METRIC_AUTH_UNKNOWN_PRINCIPAL);
        return purser_error_set(&req->err, PURSER_EUNAUTH,
                                "Failed to authenticate as '%s'. Ensure that your node_name and "
                                "client key are correct.",
                                quoted(req, signed_req.user_id));
    }
    if (rc)
        return rc;
    rc = chef_auth_verify(&signed_req, version, keys, key_count, req->svc->key_cache, &which,
                          &req->err);
    if (rc == PURSER_EUNAUTH)
        auth_failed(req, METRIC_AUTH_SIGNATURE);
    return rc;
}

static int from_loopback(struct request *req)
{
    const char *addr = request_env(req, "REMOTE_ADDR");
    return addr && (strncmp(addr, "127.", 4) == 0 || strcmp(addr, "::1") == 0);
}

int auth_open_route(struct request *req)
{
    return (req->route->flags & ROUTE_OPEN) ||
           ((req->route->flags & ROUTE_LOOPBACK) && req->svc->config->metrics_open_loopback &&
            from_loopback(req));
}

/* The password of HTTP basic credentials (a token; the user name is not used), in arena
 * memory, or NULL. */
static const char *basic_password(struct request *req, const char *authorization)
{
    size_t len = 0;
    unsigned char *plain = crypto_base64_decode(authorization + 6, &len);
    const char *colon = plain ? memchr(plain, ':', len) : NULL;
    char *password =
        colon ? arena_strndup(req->arena, colon + 1, len - (size_t)(colon + 1 - (char *)plain))
              : NULL;
    free(plain);
    return password && *password ? password : NULL;
}

int auth_authenticate(struct request *req, int development_mode)
{
    const char *authorization = request_header(req, "Authorization");
    int rc;

    if (authorization && (req->route->flags & ROUTE_BASIC) &&
        strncasecmp(authorization, "Basic ", 6) == 0) { /* the token as the password */
        const char *token = basic_password(req, authorization);
        authorization =
            token ? arena_sprintf(req->arena, "Bearer %s", token) : "Bearer (malformed basic)";
    }

    if (authorization && strncasecmp(authorization, "Bearer ", 7) == 0) {
        rc = identity_token_principal(req->svc->store, req->svc->auth_cache, req->arena,
                                      authorization + 7, &req->who, &req->err);
        if (rc == PURSER_EUNAUTH)
            auth_failed(req, METRIC_AUTH_TOKEN);
    } else if (request_header(req, "X-Ops-UserId") || request_header(req, "X-Ops-Sign") ||
               request_header(req, "X-Ops-Timestamp") ||
               request_header(req, "X-Ops-Content-Hash") ||
               request_header(req, "X-Ops-Authorization-1"))
        rc = authenticate_chef(req);
    else if (development_mode && from_loopback(req)) {
        req->who =
            (struct principal){.id = 0, .is_user = 1, .name = "development", .server_admin = 1};
        rc = 0;
    } else {
        auth_failed(req, METRIC_AUTH_MISSING);
        rc = purser_error_set(&req->err, PURSER_EUNAUTH,
                              "missing credentials: sign the request (Chef) or send "
                              "'Authorization: Bearer TOKEN'");
    }
    if (rc)
        return rc;
    req->authenticated = 1;
    req->principal = req->who.name;
    return 0;
}

const char *request_org(const struct request *req)
{
    const char *org = request_param(req, "org");
    if (!org && req->route && (req->route->flags & ROUTE_YAML))
        org = req->svc->config->default_organization;
    return org;
}

/* The authenticated principal as the RBAC policy sees it in the request's organization. */
static int subject_of(struct request *req, struct rbac_subject *subject)
{
    const char *org = request_org(req);
    struct rbac_grant *grants = NULL;
    size_t count = 0;
    int rc;
    *subject = (struct rbac_subject){
        .server_admin = req->who.server_admin, .is_user = req->who.is_user, .name = req->who.name};
    if (org && !req->who.server_admin &&
        (rc = identity_roles(req->svc->store, req->svc->auth_cache, req->arena, req->who.id, org,
                             &grants, &count, &req->err)))
        return rc;
    subject->grants = grants;
    subject->grant_count = count;
    return 0;
}

/* Whether the authenticated principal holds action in the request's organization (on group,
 * a policy group, when not NULL), and (*scope, when not NULL) on everything or only on what it
 * created. */
static int decide(struct request *req, const struct rbac_policy *policy, const char *action,
                  const char *group, enum rbac_scope *scope)
{
    struct rbac_subject subject;
    struct rbac_target target = {.user = request_param(req, "user"), .policy_group = group};
    int rc = subject_of(req, &subject);
    if (!rc)
        rc = rbac_decide(policy, &subject, &target, action, scope, &req->err);
    return rc;
}

static void log_denial(struct request *req, const char *action, const char *group)
{ /* (counted with every other 403 by the worker) */
    json_t *fields = json_pack("{s:s, s:s, s:s, s:s, s:s?, s:s?}", "request_id", req->request_id,
                               "principal", req->principal, "action", action, "path", req->path,
                               "organization", request_org(req), "policy_group", group);
    log_message("warning", "access denied", fields);
    json_decref(fields);
}

/* Chef's answer to a principal its ACL refuses: "missing read permission" for a read_ action,
 * else by what the method does ("missing delete permission", "missing update permission"). */
static int chef_denial(struct request *req, const char *action)
{
    const char *what = !strncmp(action, "read_", 5)     ? "read"
                       : !strcmp(req->method, "DELETE") ? "delete"
                                                        : "update";
    return purser_error_set(&req->err, PURSER_EDENIED, "missing %s permission", what);
}

int auth_authorize(struct request *req, const struct rbac_policy *policy)
{
    enum rbac_scope scope = RBAC_ALL;
    int owned = (req->route->flags & ROUTE_OWNED) != 0;
    const char *group = (req->route->flags & ROUTE_GROUP) ? request_param(req, "group") : NULL;
    int rc;
    if (group && !rbac_group_name_ok(group)) /* before a pattern is matched against it */
        return purser_error_set(&req->err, PURSER_EINVAL, "Field 'policy_group' invalid");
    rc = decide(req, policy, req->route->action, group, owned ? &scope : NULL);
    if (rc == PURSER_EDENIED) {
        log_denial(req, req->route->action, group);
        if (group && (req->route->flags & ROUTE_CHEF))
            rc = chef_denial(req, req->route->action);
    }
    if (!rc && scope == RBAC_OWN)
        req->owner_only = req->who.id;
    return rc;
}

int auth_allows(struct request *req, const char *action)
{
    struct purser_error saved = req->err;
    int rc = decide(req, req->svc->policy, action, NULL, NULL);
    req->err = saved;
    return rc == 0;
}

void auth_group_reach(struct request *req, const char *action, struct group_reach *out)
{
    struct rbac_subject subject;
    struct purser_error saved = req->err;
    char *limits = NULL;
    int rc = subject_of(req, &subject);
    if (!rc)
        rc = rbac_group_limits(req->svc->policy, &subject, action, &limits);
    if (rc) /* not known: held on no group, so that every check that follows refuses */
        *out = (struct group_reach){.held = 1, .patterns = ""};
    else
        *out = (struct group_reach){
            .held = limits || rbac_decide(req->svc->policy, &subject,
                                          &(struct rbac_target){.user = request_param(req, "user")},
                                          action, NULL, &req->err) == 0,
            .patterns = limits ? arena_strdup(req->arena, limits) : NULL};
    free(limits);
    req->err = saved;
}

int auth_group_reaches(const struct group_reach *r, const char *group)
{
    return r->held && (!r->patterns || rbac_group_matches(r->patterns, group));
}

int auth_group_limited(struct request *req, const char *action)
{
    struct group_reach r;
    auth_group_reach(req, action, &r);
    return r.patterns != NULL;
}

int auth_group_action(const char *action)
{
    for (size_t i = 0; i < route_count; i++)
        if ((routes[i].flags & ROUTE_GROUP) && routes[i].action &&
            strcmp(routes[i].action, action) == 0)
            return 1;
    return 0;
}

json_t *auth_actions(struct request *req)
{
    struct purser_error saved = req->err;
    struct rbac_subject subject;
    json_t *all = json_array(), *own = json_array(), *groups = json_object(), *description;
    const char *action;
    if (subject_of(req, &subject))
        subject = (struct rbac_subject){0};
    json_object_foreach ((json_t *)rbac_actions(req->svc->policy), action, description) {
        enum rbac_scope scope;
        struct rbac_target target = {.user = request_param(req, "user")};
        char *limits = NULL;
        if (rbac_decide(req->svc->policy, &subject, &target, action, &scope, &req->err))
            continue;
        json_array_append_new(scope == RBAC_ALL ? all : own, json_string(action));
        if (auth_group_action(action) &&
            !rbac_group_limits(req->svc->policy, &subject, action, &limits) && limits)
            json_object_set_new(groups, action, identity_split_groups(limits));
        free(limits);
    }
    req->err = saved;
    return json_pack("{s:o, s:o, s:o}", "actions", all, "own", own, "policy_groups", groups);
}

int auth_require(struct request *req, const char *action)
{
    return auth_require_group(req, action, NULL);
}

int auth_refused(struct request *req, const char *action)
{
    log_denial(req, action, NULL);
    return purser_error_set(&req->err, PURSER_EDENIED, "missing permission: action '%s'", action);
}

int auth_require_group(struct request *req, const char *action, const char *group)
{
    /* on a route whose handler limits it to what the caller created (req->owner_only), holding
     * action only on that is holding it (a node client moving its own node between groups) */
    int owned = req->owner_only && req->route && !strcmp(action, req->route->action);
    enum rbac_scope scope = RBAC_ALL;
    int rc = decide(req, req->svc->policy, action, group, owned ? &scope : NULL);
    if (rc == PURSER_EDENIED) {
        log_denial(req, action, group);
        if (group && req->route && (req->route->flags & ROUTE_CHEF))
            rc = chef_denial(req, action);
    }
    return rc;
}

int auth_made_limit(struct request *req, const char *role, const char **out)
{
    struct rbac_subject maker;
    char *limit = NULL;
    int rc = subject_of(req, &maker);
    *out = NULL;
    if (!rc)
        rc = rbac_made_limit(req->svc->policy, &maker, role, req->route->action, &limit, &req->err);
    if (!rc && limit && !(*out = arena_strdup(req->arena, limit)))
        rc = purser_error_set(&req->err, PURSER_EINTERNAL, "out of memory");
    free(limit);
    if (rc == PURSER_EDENIED)
        log_denial(req, req->route->action, NULL);
    return rc;
}

int auth_made_within(struct request *req, long long principal_id, const char *what)
{
    struct rbac_subject maker;
    struct rbac_grant *grants = NULL;
    size_t count = 0;
    char why[PURSER_ERROR_MESSAGE_SIZE];
    int rc = subject_of(req, &maker);
    if (!rc && !maker.server_admin)
        rc = identity_roles(req->svc->store, req->svc->auth_cache, req->arena, principal_id,
                            request_org(req), &grants, &count, &req->err);
    for (size_t i = 0; !rc && !maker.server_admin && i < count; i++)
        rc = rbac_grant_within(req->svc->policy, &maker, &grants[i], req->route->action, &req->err);
    if (rc != PURSER_EDENIED)
        return rc;
    log_denial(req, req->route->action, NULL);
    memcpy(why, req->err.message, sizeof(why));
    return purser_error_set(&req->err, PURSER_EDENIED, "%.60s reaches further than you: %.180s",
                            what, why);
}
