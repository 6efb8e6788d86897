/* docs.c: GET /docs, the OpenAPI 3 document generated from the route table and the shapes in
 * fcgi/openapi.yaml (embedded at build as openapi_components). */
#include "codec/yaml_codec.h"
#include "handlers.h"
#include "registry/registry.h"
#include "router.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

extern const char openapi_components[];
extern const size_t openapi_components_len;

static json_t *ref(const char *section, const char *name)
{
    return json_pack("{s:o}", "$ref",
                     json_sprintf("#/components/%s/%s", section, name ? name : "-"));
}

/* {"name": ..., "in": "path", "required": true} for each {name} of pattern. */
static void path_parameters(json_t *params, const char *pattern)
{
    for (const char *p = strchr(pattern, '{'); p; p = strchr(p + 1, '{')) {
        const char *end = strchr(p, '}');
        if (!end)
            break;
        json_array_append_new(params, json_pack("{s:s%, s:s, s:b, s:{s:s}}", "name", p + 1,
                                                (size_t)(end - p - 1), "in", "path", "required", 1,
                                                "schema", "type", "string"));
    }
}

/* The route's query parameters (space-separated names) as references, and the headers its
 * kind of route takes. */
static void other_parameters(json_t *params, const struct route *r)
{
    const char *q = r->query;
    while (q && *q) {
        size_t n = strcspn(q, " ");
        char name[64];
        snprintf(name, sizeof(name), "%.*s", (int)n, q);
        json_array_append_new(params, ref("parameters", name));
        q += n + (q[n] == ' ');
    }
    if (r->flags & ROUTE_CHEF)
        json_array_append_new(params, ref("parameters", "X-Ops-Server-API-Version"));
    if (((r->answer && !strcmp(r->answer, "Resource")) || (r->flags & ROUTE_ETAG)) &&
        strcmp(r->method, "GET") && strcmp(r->method, "POST"))
        json_array_append_new(params, ref("parameters", "If-Match"));
    if (!strcmp(r->method, "GET") && r->answer &&
        (!strcmp(r->answer, "Resource") || !strcmp(r->answer, "PolicyLock") ||
         (r->flags & ROUTE_ETAG)))
        json_array_append_new(params, ref("parameters", "If-None-Match"));
}

/* The shapes with media types of their own: as sent, as answered, and whether an answer is
 * JSON too when asked. */
static const struct own_media {
    const char *name, *sent, *answered;
    int json_too;
} own_media[] = {
    {"Text", "text/plain", "text/plain", 0},
    {"Binary", "*/*", "application/x-binary", 0}, /* a file: sent as anything, as Chef does */
    {"YamlStream", "application/x-yaml", "application/x-yaml", 1},
    {"OpenAPIYaml", "application/x-yaml", "application/x-yaml", 0},
    {"PageOrError", "text/html", "text/html", 1},
};

static json_t *schema_of(const char *name)
{
    return json_pack("{s:o}", "schema", ref("schemas", name));
}

/* {media type: {schema}} for a body of schema name: YAML routes take YAML and answer YAML or
 * JSON (when asked), every PATCH takes a merge patch or plain JSON (which means the same), and
 * a few shapes have their own type. */
static json_t *content(const struct route *r, const char *name, int request)
{
    json_t *out = json_object();
    for (size_t i = 0; i < sizeof(own_media) / sizeof(own_media[0]); i++) {
        const struct own_media *m = &own_media[i];
        if (strcmp(name, m->name))
            continue;
        json_object_set_new(out, request ? m->sent : m->answered, schema_of(name));
        if (!request && m->json_too)
            json_object_set_new(out, "application/json", schema_of(name));
        return out;
    }
    if (r->flags & ROUTE_YAML)
        json_object_set_new(out, "application/x-yaml", schema_of(name));
    if (request && !strcmp(r->method, "PATCH"))
        json_object_set_new(out, "application/merge-patch+json", schema_of(name));
    if (!request || !(r->flags & ROUTE_YAML))
        json_object_set_new(out, "application/json", schema_of(name));
    return out;
}

/* The answers: each success status with the route's answer, and every other status in the
 * error form of the route's family. */
static json_t *responses(const struct route *r)
{
    json_t *out = json_object();
    const char *s = r->status ? r->status : "200";
    const char *error = r->flags & ROUTE_CHEF          ? "ChefOrNginxError"
                        : r->flags & ROUTE_YAML        ? "DeckhandOrNginxError"
                        : r->flags & ROUTE_PAGE_ERRORS ? "PageOrError"
                                                       : "Error";
    while (*s) {
        size_t n = strcspn(s, " ");
        char status[8];
        json_t *answer = json_pack("{s:s}", "description", r->summary);
        snprintf(status, sizeof(status), "%.*s", (int)n, s);
        if (r->answer)
            json_object_set_new(answer, "content", content(r, r->answer, 0));
        if (r->answer && (!strcmp(r->answer, "Resource") || (r->flags & ROUTE_ETAG)))
            json_object_set_new(answer, "headers",
                                json_pack("{s:{s:s, s:{s:s}}}", "ETag", "description",
                                          "the resource's metadata.revision", "schema", "type",
                                          "string"));
        if (r->answer && !strcmp(r->answer, "Documents") && r->query &&
            strstr(r->query, "page_size"))
            json_object_set_new(
                answer, "headers",
                json_pack("{s:{s:s, s:{s:s}}, s:{s:s, s:{s:s}}}", "X-Total-Count", "description",
                          "with page_size, page_token or filter: the documents the filters "
                          "select",
                          "schema", "type", "integer", "X-Next-Page-Token", "description",
                          "the next page's page_token (absent on the last page)", "schema", "type",
                          "string"));
        json_object_set_new(out, status, answer);
        s += n + (s[n] == ' ');
    }
    for (const char *const *range = (const char *const[]){"4XX", "5XX", NULL}; *range; range++)
        json_object_set_new(out, *range,
                            json_pack("{s:s, s:o}", "description",
                                      r->flags & ROUTE_CHEF ? "an error, in Chef's form"
                                                            : "an error, in the route's form",
                                      "content", content(r, error, 0)));
    return out;
}

/* A unique name for the operation: its method and its path's words ("getOrganizationsOrgPolicies"
 * for GET /organizations/{org}/policies). */
static json_t *operation_id(const struct route *r)
{
    char id[256];
    size_t n = 0;
    int upper = 0;
    for (const char *m = r->method; *m && n < sizeof(id) - 1; m++)
        id[n++] = (char)(*m | 0x20);
    upper = 1;
    for (const char *p = r->pattern; *p && n < sizeof(id) - 1; p++) {
        if (!isalnum((unsigned char)*p)) {
            upper = 1;
            continue;
        }
        id[n++] = upper ? (char)toupper((unsigned char)*p) : *p;
        upper = 0;
    }
    id[n] = '\0';
    return json_string(id);
}

static json_t *operation(const struct route *r)
{
    json_t *params = json_array();
    json_t *op;
    path_parameters(params, r->pattern);
    other_parameters(params, r);
    op = json_pack("{s:o, s:s, s:o, s:o}", "operationId", operation_id(r), "summary", r->summary,
                   "parameters", params, "responses", responses(r));
    if (r->body)
        json_object_set_new(
            op, "requestBody",
            json_pack("{s:b, s:o}", "required",
                      /* an empty stream empties a bucket */
                      strcmp(r->body, "DeckhandAny") && strcmp(r->body, "Documents"), "content",
                      content(r, r->body, 1)));
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

/* The components of fcgi/openapi.yaml with the security schemes and the headers. */
static int components(json_t **out, struct purser_error *err)
{
    json_t *docs = NULL, *c;
    int rc = yaml_codec_parse(&docs, openapi_components, openapi_components_len, NULL, err);
    if (rc)
        return rc;
    c = json_incref(json_object_get(json_array_get(docs, 0), "components"));
    json_decref(docs);
    if (!json_is_object(c)) {
        json_decref(c);
        return purser_error_set(err, PURSER_EINTERNAL, "fcgi/openapi.yaml has no components");
    }
    json_object_set_new(c, "securitySchemes",
                        json_pack("{s:{s:s, s:s}, s:{s:s, s:s, s:s, s:s}}", "bearer", "type",
                                  "http", "scheme", "bearer", "chefSignedHeaders", "type", "apiKey",
                                  "in", "header", "name", "X-Ops-Authorization-1", "description",
                                  "Chef's signed request (protocols 1.0, 1.1, 1.3): X-Ops-UserId, "
                                  "X-Ops-Timestamp, X-Ops-Content-Hash, X-Ops-Sign and "
                                  "X-Ops-Authorization-N"));
    json_object_update(
        json_object_get(c, "parameters"),
        json_pack("{s:{s:s, s:s, s:s, s:{s:s}}, s:{s:s, s:s, s:s, s:{s:s}},"
                  " s:{s:s, s:s, s:s, s:{s:s, s:i, s:i}}}",
                  "If-Match", "name", "If-Match", "in", "header", "description",
                  "the revision a write expects (or metadata.revision in the body); stale: 412",
                  "schema", "type", "string", "If-None-Match", "name", "If-None-Match", "in",
                  "header", "description", "an ETag the client holds: 304 when it is current",
                  "schema", "type", "string", "X-Ops-Server-API-Version", "name",
                  "X-Ops-Server-API-Version", "in", "header", "description",
                  "Chef's API version (0 to 2)", "schema", "type", "integer", "minimum",
                  API_VERSION_MIN, "maximum", API_VERSION_MAX));
    *out = c;
    return 0;
}

/* The whole document (a new reference). */
static int document(struct request *req, json_t **doc)
{
    json_t *paths = json_object(), *parts = NULL;
    int rc = components(&parts, &req->err);
    if (rc) {
        json_decref(paths);
        return rc;
    }
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
    /* x-purser-kinds: the registry of kinds, which the admin pages walk (navigation, event
     * links, the reference's areas) */
    *doc = json_pack("{s:s, s:{s:s, s:s, s:s, s:{s:s}}, s:[{s:s, s:s}], s:o, s:o, s:o}", "openapi",
                     "3.0.3", "info", "title", "purser", "version", "1", "description",
                     "A configuration ledger for fleets: Chef's Policyfile API, Deckhand's "
                     "document API, an inventory of clusters and an event feed",
                     "license", "name", "see the purser package's copyright file", "servers", "url",
                     "/", "description", "the server that serves this document", "paths", paths,
                     "components", parts, "x-purser-kinds", registry_json());
    return 0;
}

int docs_openapi(struct request *req)
{
    json_t *doc = NULL;
    int rc = document(req, &doc);
    if (!rc)
        rc = respond_json(req, 200, doc, NULL);
    json_decref(doc);
    return rc;
}

int docs_openapi_yaml(struct request *req)
{
    json_t *doc = NULL, *stream;
    struct buf out = BUF_INIT;
    int rc = document(req, &doc);
    stream = rc ? NULL : json_pack("[o]", doc);
    if (!rc)
        rc = yaml_codec_emit(&out, stream, &req->err);
    if (!rc)
        rc = respond_text(req, 200, "application/x-yaml", buf_cstr(&out), out.len, NULL);
    json_decref(stream);
    buf_release(&out);
    return rc;
}
