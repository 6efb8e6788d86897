/* router: the route table's matching of a method and path (percent-decoding, parameters,
 * HEAD, 405's Allow) and the query's check. The input's first line is the method, the rest
 * the request target. */
#include "../../fcgi/router.h"
#include "../../fcgi/url.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_text(data, size), *target, *q;
    struct request req;
    const char **values = NULL;
    if (!text || routes_init()) {
        free(text);
        return 0;
    }
    memset(&req, 0, sizeof(req));
    req.method = fuzz_line(text, &target);
    if (!(req.arena = arena_new())) {
        free(text);
        return 0;
    }
    q = strchr(target, '?');
    req.query = q ? q + 1 : "";
    if (q)
        *q = '\0';
    req.path = target;
    if (target[0] == '/')
        router_match(&req);
    url_query_values(req.arena, req.query, "limit", &values);
    url_query_check(req.arena, req.query, &req.err);
    arena_free(req.arena);
    free(text);
    return 0;
}
