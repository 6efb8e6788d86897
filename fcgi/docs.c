/* docs.c: GET /docs, the OpenAPI 3 document generated from the route table. */
#include "handlers.h"
#include "router.h"

#include <string.h>

/* {"name": ..., "in": "path", "required": true} for each {name} of pattern. */
static json_t *path_parameters(const char *pattern)
{
    json_t *params = json_array();
    for (const char *p = strchr(pattern, '{'); p; p = strchr(p + 1, '{')) {
        const char *end = strchr(p, '}');
        if (!end)
            break;
        json_array_append_new(params, json_pack("{s:s%, s:s, s:b, s:{s:s}}", "name", p + 1,
                                                (size_t)(end - p - 1), "in", "path", "required", 1,
                                                "schema", "type", "string"));
    }
    return params;
}

static json_t *operation(const struct route *r)
{
    json_t *op = json_pack("{s:s, s:o, s:{s:{s:s}}}", "summary", r->summary, "parameters",
                           path_parameters(r->pattern), "responses", "default", "description",
                           r->flags & ROUTE_CHEF ? "Chef-style body; errors {\"error\": [message]}"
                                                 : "errors {\"error\": {code, message}}");
    if (r->action) {
        json_object_set_new(op, "x-purser-action", json_string(r->action));
        if (r->flags & ROUTE_GROUP) /* a grant limited to policy groups is checked on {group} */
            json_object_set_new(op, "x-purser-policy-group", json_string("group"));
        json_object_set_new(op, "security",
                            json_pack("[{s:[]}, {s:[]}]", "bearer", "chefSignedHeaders"));
    } else {
        json_object_set_new(op, "security", json_array());
    }
    return op;
}

int docs_openapi(struct request *req)
{
    json_t *paths = json_object(), *doc;
    int rc;
    for (size_t i = 0; i < route_count; i++) {
        json_t *item = json_object_get(paths, routes[i].pattern);
        char method[16];
        size_t n = 0;
        if (!item) {
            item = json_object();
            json_object_set_new(paths, routes[i].pattern, item);
        }
        for (; routes[i].method[n] && n < sizeof(method) - 1; n++)
            method[n] = (char)(routes[i].method[n] | 0x20); /* OpenAPI keys are lowercase */
        method[n] = '\0';
        json_object_set_new(item, method, operation(&routes[i]));
    }
    doc = json_pack("{s:s, s:{s:s, s:s}, s:o, s:{s:{s:{s:s, s:s}, s:{s:s, s:s, s:s}}}}", "openapi",
                    "3.0.3", "info", "title", "purser", "version", "1", "paths", paths,
                    "components", "securitySchemes", "bearer", "type", "http", "scheme", "bearer",
                    "chefSignedHeaders", "type", "apiKey", "in", "header", "name",
                    "X-Ops-Authorization-1");
    rc = respond_json(req, 200, doc, NULL);
    json_decref(doc);
    return rc;
}
