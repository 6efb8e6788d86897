/* links.c: a link to an API object through the caller's builder (links.h). */
#include "base/links.h"

json_t *link_url(const struct links *links, enum link_target target, const char *org, const char *a,
                 const char *b)
{
    const char *params[] = {org, a, b};
    json_t *url = links && links->url ? links->url(links->ctx, target, params, b ? 3 : 2) : NULL;
    return url ? url : json_null();
}
