/* routes.c: the route table, the single source of purser's HTTP API.
 *
 * One row per method and path: the RBAC action a caller needs (NULL only for open routes),
 * the handler, flags, and a summary. The OpenAPI document and the RBAC tests read this table.
 */
#include "handlers.h"
#include "router.h"

const struct route routes[] = {
    {"GET", "/healthz", NULL, health_live, ROUTE_OPEN, "Liveness: the process answers"},
    {"GET", "/healthz/deep", NULL, health_deep, ROUTE_OPEN,
     "Readiness: database reachable and schema current"},
};

const size_t route_count = sizeof(routes) / sizeof(routes[0]);
