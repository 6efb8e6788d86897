/* 0071-links: lib/'s links made from the route table (fcgi/links.c): every link target names a
 * row of the table, and a pattern is filled with its parameters in order. */
#include "../fcgi/links.h"
#include "../fcgi/router.h"
#include "tap.h"

#include <string.h>

int main(int argc, char **argv)
{
    struct arena *arena = arena_new();
    const char *two[] = {"acme", "web"}, *three[] = {"acme", "base", "0123abcd"};
    tap_init(argc, argv);
    /* the table served: route_rows with the registry's generic routes in place */
    tap_ok(routes_init() == 0, "the route table is built");

    for (int t = 0; t < LINK_TARGETS; t++)
        tap_ok(link_pattern((enum link_target)t) != NULL, "link target %d is a route of the table",
               t);
    tap_ok(link_pattern(LINK_TARGETS) == NULL, "no pattern past the targets");
    tap_is_str(route_fill(arena, link_pattern(LINK_NODE), two, 2), "/organizations/acme/nodes/web",
               "a node's link fills {org} and {node}");
    tap_is_str(route_fill(arena, link_pattern(LINK_COOKBOOK_ARTIFACT_VERSION), three, 3),
               "/organizations/acme/cookbook_artifacts/base/0123abcd",
               "an artifact version's fills three in order");
    tap_ok(route_fill(arena, link_pattern(LINK_NODE), three, 3) == NULL,
           "more parameters than the pattern has: NULL");
    tap_ok(route_fill(arena, link_pattern(LINK_COOKBOOK_ARTIFACT_VERSION), two, 2) == NULL,
           "fewer: NULL");
    arena_free(arena);
    return tap_done();
}
