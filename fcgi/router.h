/* router.h: the route table's shape and matching of a request to a route.
 *
 * The table itself is in routes.c: it is the single source of the API (the OpenAPI document
 * and the RBAC checks are derived from or tested against it). A pattern is a path whose
 * segments are literals or {name}, each {name} matching one non-empty segment.
 */
#ifndef PURSER_ROUTER_H
#define PURSER_ROUTER_H

#include "request.h"

struct resource_kind;

enum route_flags {
    ROUTE_OPEN = 1 << 0,        /* answered without authentication (health, docs) */
    ROUTE_CHEF = 1 << 1,        /* Chef-compatible API: errors as {"error": ["message"]} */
    ROUTE_YAML = 1 << 2,        /* YAML in and out */
    ROUTE_AUTH_CHANGE = 1 << 3, /* may change who is who or may do what: flush the auth cache */
    ROUTE_OWNED = 1 << 4,       /* the handler limits the action to objects the principal created
                                   when its role holds the action only under `own` (req->own_only) */
    ROUTE_LOOPBACK = 1 << 5,    /* open to loopback clients when http.metrics_open_loopback is on;
                                   others need the route's action */
    ROUTE_GROUP = 1 << 6,       /* the action is checked on the path's {group}: a grant limited to
                                   policy groups holds it only on the groups it names */
    ROUTE_ETAG = 1 << 7,        /* one object with a revision, in a shape of its own (Chef's): its
                                   answer's ETag; a write honours If-Match when sent (412) */
    ROUTE_BASIC = 1 << 8,       /* also HTTP basic credentials whose password is an API token, as
                                   git clients send them (Argo CD, Flux): the git access checks */
    ROUTE_PAGE_ERRORS = 1 << 9, /* a browser's navigation: its errors a small HTML page, JSON when
                                   Accept asks for it (the sign-in's callback) */
};

struct route {
    const char *method;
    const char *pattern;
    const char *action; /* the RBAC action the caller needs; NULL for open routes */
    int (*handler)(struct request *req);
    unsigned flags;
    const char *summary; /* one line for the API map and the OpenAPI document */
    /* The shapes, by name in fcgi/openapi.yaml's components (NULL: none): */
    const char *body;   /* the request body's schema */
    const char *answer; /* the success answer's schema */
    const char *status; /* the success statuses, space-separated: "200" when NULL */
    const char *query;  /* the query parameters, space-separated names of components.parameters */
    const struct resource_kind *kind; /* the resource convention's routes: the kind they serve */
};

/* The table as routes.c writes it: its one row {NULL} is where the registry's kinds' generic
 * routes go (route_resource_rows, once for each kind lib/registry marks generic). */
extern const struct route route_rows[];
extern const size_t route_row_count;
/* The generic routes of one kind (routes.c): .pattern the suffix of the kind's list path,
 * .action which of its actions ("read", "write" or "delete"), %s in .summary its name. */
extern const struct route route_resource_rows[];
extern const size_t route_resource_row_count;

/* The table served: route_rows with each generic kind's routes in place (routes_init). */
extern const struct route *routes;
extern size_t route_count;

/* Builds routes from route_rows and the registry, once per process before any other call of
 * this header: 0, or -1 (out of memory, or a generic kind whose item is not its list/{id} or
 * that is not an organization's). */
int routes_init(void);

struct rbac_policy;

/* Holds the route table and the RBAC policy to each other: every route that is not open names
 * an action, the policy declares every action used (the registry's kinds' too), and a role's
 * `own` actions are used only by ROUTE_OWNED routes (rbac_policy_validate); and the registry's
 * event kinds to the event log (after the resource kinds registered theirs). */
int routes_check(const struct rbac_policy *policy, struct purser_error *err);

/* Finds the route for req->method and req->path, filling req->route and the path parameters.
 * PURSER_ENOTFOUND when no pattern matches the path, HTTP_EMETHOD when some do but not with
 * this method (HEAD matches GET routes; req->allow then lists the methods that match),
 * PURSER_EINVAL for a malformed path. Sets req->error_form from the route's flags. */
int router_match(struct request *req);

/* "GET, PUT" : the methods whose routes match path, for the Allow header. */
const char *router_allowed(struct arena *arena, const char *path);

#endif
