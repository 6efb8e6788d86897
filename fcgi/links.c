/* links.c: lib/'s links built from the route table (links.h). */
#include "links.h"

#include "router.h"

#include <string.h>

/* Each target's route, by its pattern in fcgi/routes.c (link_pattern finds it there). */
static const char *const target_patterns[LINK_TARGETS] = {
    [LINK_ORGANIZATION] = "/organizations/{org}",
    [LINK_USER] = "/users/{user}",
    [LINK_CLIENT] = "/organizations/{org}/clients/{client}",
    [LINK_USER_KEY] = "/users/{user}/keys/{key}",
    [LINK_CLIENT_KEY] = "/organizations/{org}/clients/{client}/keys/{key}",
    [LINK_POLICY] = "/organizations/{org}/policies/{name}",
    [LINK_POLICY_REVISION] = "/organizations/{org}/policies/{name}/revisions/{rev}",
    [LINK_POLICY_GROUP] = "/organizations/{org}/policy_groups/{group}",
    [LINK_NODE] = "/organizations/{org}/nodes/{node}",
    [LINK_SANDBOX] = "/organizations/{org}/sandboxes/{id}",
    [LINK_FILE] = "/organizations/{org}/file_store/{checksum}",
    [LINK_COOKBOOK_ARTIFACT] = "/organizations/{org}/cookbook_artifacts/{name}",
    [LINK_COOKBOOK_ARTIFACT_VERSION] =
        "/organizations/{org}/cookbook_artifacts/{name}/{identifier}",
};

const char *link_pattern(enum link_target target)
{
    if ((unsigned)target >= LINK_TARGETS || !target_patterns[target])
        return NULL;
    for (size_t i = 0; i < route_count; i++)
        if (!strcmp(routes[i].pattern, target_patterns[target]))
            return routes[i].pattern;
    return NULL;
}

char *route_fill(struct arena *arena, const char *pattern, const char *const *params, size_t count)
{
    size_t len = 0, used = 0;
    char *out, *o;
    for (const char *p = pattern; *p; p++) { /* the room: the pattern plus every parameter */
        len++;
        if (*p == '{' && used < count)
            len += strlen(params[used++]);
    }
    if (!(out = arena_alloc(arena, len + 1)))
        return NULL;
    o = out;
    used = 0;
    for (const char *p = pattern; *p;) {
        const char *close = *p == '{' ? strchr(p, '}') : NULL;
        if (!close) {
            *o++ = *p++;
            continue;
        }
        if (used == count)
            return NULL;
        o = stpcpy(o, params[used++]);
        p = close + 1;
    }
    *o = '\0';
    return used == count ? out : NULL;
}
