/* links.c: a link to an API object through the caller's builder (links.h). */
#include "base/links.h"

json_t *link_url(const struct links *links, enum link_target target, const char *first,
                 const char *second, const char *third)
{
    const char *params[] = {first, second, third};
    size_t count = 0;
    json_t *url;
    while (count < 3 && params[count])
        count++;
    url = links && links->url ? links->url(links->ctx, target, params, count) : NULL;
    return url ? url : json_null();
}
