/* router.c: matching paths against the route table. */
#include "router.h"

#include "base/utf8.h"
#include "url.h"

#include "auth/rbac.h"
#include "base/buf.h"
#include "registry/registry.h"
#include "store/events.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Matches path against pattern; on a match fills names/values (when req is not NULL).
 * Returns 1 on a match, 0 otherwise, -1 for a malformed path segment. */
static int pattern_match(const char *pattern, const char *path, struct request *req)
{
    size_t count = 0;
    const char *p = pattern, *s = path;

    while (*p && *s) {
        const char *p_end, *s_end;
        if (*p != '/' || *s != '/')
            return 0;
        p++, s++;
        p_end = strchr(p, '/');
        s_end = strchr(s, '/');
        if (!p_end)
            p_end = p + strlen(p);
        if (!s_end)
            s_end = s + strlen(s);
        if (*p == '{') {
            if (s_end == s || count >= REQUEST_MAX_PARAMS)
                return 0;
            if (req) {
                char *value = url_decode(req->arena, s, (size_t)(s_end - s));
                if (!value || strcmp(value, ".") == 0 || strcmp(value, "..") == 0)
                    return -1;
                req->param_names[count] = arena_strndup(req->arena, p + 1, (size_t)(p_end - p - 2));
                req->param_values[count] = value;
            }
            count++;
        } else if (p_end - p != s_end - s || memcmp(p, s, (size_t)(p_end - p)) != 0) {
            return 0;
        }
        p = p_end;
        s = s_end;
    }
    if (*p || *s)
        return 0;
    if (req)
        req->param_count = count;
    return 1;
}

static int method_matches(const char *route_method, const char *method)
{
    return strcmp(route_method, method) == 0 ||
           (strcmp(method, "HEAD") == 0 && strcmp(route_method, "GET") == 0);
}

/* The path without one trailing slash (but "/" stays "/"), in arena memory. */
static const char *trim_slash(struct arena *arena, const char *path)
{
    size_t n = strlen(path);
    if (n > 1 && path[n - 1] == '/')
        return arena_strndup(arena, path, n - 1);
    return path;
}

/* The query's names decode, and on purser's own routes each is one the route takes (its
 * .query); Chef's and Deckhand's routes keep their authors' leniency. */
static int query_check(struct request *req)
{
    const struct route *r = req->route;
    const char *unknown;
    struct buf taken = BUF_INIT;
    int rc = url_query_check(req->arena, req->query, &req->err);

    if (rc || (r->flags & (ROUTE_CHEF | ROUTE_YAML)))
        return rc;
    unknown = url_query_unknown(req->arena, req->query, r->query);
    if (!unknown)
        return 0;
    for (const char *q = r->query; q && *q; q++) /* "a b" as "a, b" */
        if (*q == ' ')
            buf_adds(&taken, ", ");
        else
            buf_addc(&taken, *q);
    rc = purser_error_set(&req->err, PURSER_EINVAL, "unknown query parameter '%s': %s %s takes %s",
                          unknown, r->method, r->pattern, taken.len ? buf_cstr(&taken) : "none");
    buf_release(&taken);
    return rc;
}

int router_match(struct request *req)
{
    const char *path = trim_slash(req->arena, req->path);
    int path_known = 0;

    if (!path || path[0] != '/')
        return purser_error_set(&req->err, PURSER_EINVAL, "malformed request path");
    for (size_t i = 0; i < route_count; i++) {
        int m = pattern_match(routes[i].pattern, path, NULL);
        if (!m)
            continue;
        path_known = 1;
        if (!method_matches(routes[i].method, req->method))
            continue;
        /* the route's error form from here on, a malformed segment's refusal included */
        req->error_form = routes[i].flags & ROUTE_YAML   ? REQUEST_ERRORS_YAML
                          : routes[i].flags & ROUTE_CHEF ? REQUEST_ERRORS_CHEF
                                                         : REQUEST_ERRORS_JSON;
        if (pattern_match(routes[i].pattern, path, req) < 0)
            return purser_error_set(&req->err, PURSER_EINVAL, "malformed path segment in '%s'",
                                    req->path);
        req->route = &routes[i];
        for (size_t j = 0; j < req->param_count; j++)
            if (!utf8_valid(req->param_values[j], strlen(req->param_values[j])))
                return purser_error_set(&req->err, PURSER_EINVAL,
                                        "path parameter '%s' is not UTF-8 text",
                                        req->param_names[j]);
        return query_check(req);
    }
    if (path_known) {
        req->allow = router_allowed(req->arena, path);
        return purser_error_set(&req->err, HTTP_EMETHOD, "method %s not allowed on %s", req->method,
                                req->path);
    }
    return purser_error_set(&req->err, PURSER_ENOTFOUND, "no such path: %s", req->path);
}

const char *router_allowed(struct arena *arena, const char *path)
{
    const char *methods[16];
    size_t count = 0;
    const char *trimmed = trim_slash(arena, path);
    struct buf b = BUF_INIT;
    char *out;

    for (size_t i = 0; trimmed && i < route_count; i++) {
        int seen = 0;
        if (pattern_match(routes[i].pattern, trimmed, NULL) != 1)
            continue;
        for (size_t j = 0; j < count; j++)
            seen |= strcmp(methods[j], routes[i].method) == 0;
        if (!seen && count < 15)
            methods[count++] = routes[i].method;
        if (!seen && strcmp(routes[i].method, "GET") == 0 && count < 15)
            methods[count++] = "HEAD";
    }
    for (size_t j = 0; j < count; j++)
        buf_printf(&b, "%s%s", j ? ", " : "", methods[j]);
    out = arena_strdup(arena, buf_cstr(&b));
    buf_release(&b);
    return out ? out : "";
}

/* The registry's kinds (lib/registry) against the policy and the event log: the actions they
 * name are declared, the events they link are kinds the log knows. */
static int registry_check(const struct rbac_policy *policy, struct purser_error *err)
{
    for (size_t i = 0; i < registry_kind_count; i++) {
        const char *used[] = {registry_kinds[i].read, registry_kinds[i].write,
                              registry_kinds[i].remove};
        for (const struct registry_event *e = registry_kinds[i].events; e && e->kind; e++)
            if (!event_kind_known(e->kind))
                return purser_error_set(err, PURSER_EINVAL,
                                        "the registry's kind %s links events of kind '%s', which "
                                        "the event log does not know",
                                        registry_kinds[i].name, e->kind);
        for (size_t a = 0; a < 3; a++)
            if (used[a] && !json_object_get(rbac_actions(policy), used[a]))
                return purser_error_set(err, PURSER_EINVAL,
                                        "policy: the registry's kind %s uses action '%s', which "
                                        "the policy does not declare",
                                        registry_kinds[i].name, used[a]);
    }
    return 0;
}

int routes_check(const struct rbac_policy *policy, struct purser_error *err)
{
    struct rbac_use actions[512];
    size_t n = 0;
    for (size_t i = 0; i < route_count && n < 512; i++) {
        if (!routes[i].action && !(routes[i].flags & ROUTE_OPEN))
            return purser_error_set(err, PURSER_EINVAL,
                                    "route %s %s names no action and is not open", routes[i].method,
                                    routes[i].pattern);
        if (routes[i].action)
            actions[n++] =
                (struct rbac_use){routes[i].action, (routes[i].flags & ROUTE_OWNED) != 0};
    }
    int rc = rbac_policy_validate(policy, actions, n, err);
    if (!rc)
        rc = registry_check(policy, err);
    return rc;
}

const struct route *routes = route_rows;
size_t route_count = 0;

/* text with its first "%s" (if any) replaced by fill, then rest appended, in memory the
 * process keeps. */
static char *route_text(const char *text, const char *fill, const char *rest)
{
    const char *at = strstr(text, "%s");
    size_t head = at ? (size_t)(at - text) : strlen(text);
    char *out = NULL;
    if (asprintf(&out, "%.*s%s%s%s", (int)head, text, at ? fill : "", at ? at + 2 : "",
                 rest ? rest : "") < 0)
        return NULL;
    return out;
}

/* The generic routes of kind k, at rows (route_resource_row_count of them). */
static int resource_routes(const struct registry_kind *k, struct route *rows)
{
    char *item = route_text(k->list, NULL, "/{id}");
    int rc =
        item && k->item && !strcmp(item, k->item) && k->scope == REGISTRY_ORGANIZATION ? 0 : -1;
    free(item);
    for (size_t t = 0; !rc && t < route_resource_row_count; t++) {
        const struct route *template = &route_resource_rows[t];
        rows[t] = *template;
        rows[t].pattern = route_text(k->list, NULL, template->pattern);
        rows[t].summary = route_text(template->summary, k->name, NULL);
        rows[t].action = !strcmp(template->action, "read")    ? k->read
                         : !strcmp(template->action, "write") ? k->write
                                                              : k->remove;
        rows[t].kind = k->resource;
        if (!rows[t].pattern || !rows[t].summary)
            rc = -1;
    }
    return rc;
}

int routes_init(void)
{
    size_t generic = 0, n = 0;
    struct route *table;
    int rc = 0;
    if (route_count)
        return 0;
    for (size_t i = 0; i < registry_kind_count; i++)
        generic += registry_kinds[i].generic && registry_kinds[i].resource;
    table = calloc(route_row_count + generic * route_resource_row_count, sizeof(*table));
    if (!table)
        return -1;
    for (size_t i = 0; !rc && i < route_row_count; i++) {
        if (route_rows[i].method)
            table[n++] = route_rows[i];
        for (size_t j = 0; !route_rows[i].method && !rc && j < registry_kind_count; j++)
            if (registry_kinds[j].generic && registry_kinds[j].resource) {
                rc = resource_routes(&registry_kinds[j], &table[n]);
                n += route_resource_row_count;
            }
    }
    if (rc)
        return -1; /* the process stops: what was made is not worth freeing */
    routes = table;
    route_count = n;
    return 0;
}
