/* resources.c: the resource convention's routes, once for every kind (docs/inventory.md):
 * list, show, replace, merge-patch and delete of the kind the route row names (its .kind),
 * with the ETag, 304 and owner checks every kind shares. A kind's own routes (a cluster's
 * creation with its bootstrap token, its facts) use the helpers below. */
#include "handlers.h"
#include "router.h"

#include "auth/identity.h"

#include <string.h>

int resource_scope_of(struct request *req, struct resource_scope *s)
{
    s->store = req->svc->store;
    s->arena = req->arena;
    s->actor = req->principal;
    return identity_org_id(req->svc->store, req->arena, request_param(req, "org"), &s->org_id,
                           &req->err);
}

int resource_body_and_scope(struct request *req, json_t **body, struct resource_scope *s)
{
    int rc = request_json(req, body);
    if (!rc)
        rc = resource_scope_of(req, s);
    return rc;
}

int respond_revision(struct request *req, int rc, int status, json_t *out, const char *rev)
{
    if (!rc) {
        const char *header = arena_sprintf(req->arena, "ETag: \"%s\"\r\n", rev ? rev : "");
        if (status == 200 && (!strcmp(req->method, "GET") || !strcmp(req->method, "HEAD")) && rev &&
            request_etag_fresh(req, rev))
            rc = respond_text(req, 304, "application/json", "", 0, header);
        else
            rc = respond_json(req, status, out, rev ? header : NULL);
    }
    json_decref(out);
    return rc;
}

int respond_resource(struct request *req, int rc, int status, json_t *out)
{
    const char *rev =
        json_string_value(json_object_get(json_object_get(out, "metadata"), "revision"));
    return respond_revision(req, rc, status, out, rev);
}

int resources_list(struct request *req)
{
    struct resource_scope s;
    struct resource_query q = {.page_size = request_query(req, "page_size"),
                               .page_token = request_query(req, "page_token"),
                               .labels = request_query(req, "labels"),
                               .filter = request_query(req, "filter"),
                               .sort = request_query(req, "sort"),
                               .owner = req->owner_only}; /* an `own` credential: its own */
    struct buf out = BUF_INIT;
    int rc = resource_scope_of(req, &s);
    if (!rc)
        rc = resource_list(req->route->kind, &s, &q, &out, &req->err);
    if (!rc)
        rc = respond_text(req, 200, "application/json", buf_cstr(&out), out.len, NULL);
    buf_release(&out);
    return rc;
}

/* Every organization's resources of the kind (GET /clusters), each naming its organization;
 * organization=a,b narrows to theirs. */
int resources_list_all(struct request *req)
{
    struct resource_scope s = {
        .store = req->svc->store, .arena = req->arena, .actor = req->principal};
    struct resource_query q = {.page_size = request_query(req, "page_size"),
                               .page_token = request_query(req, "page_token"),
                               .labels = request_query(req, "labels"),
                               .filter = request_query(req, "filter"),
                               .sort = request_query(req, "sort"),
                               .all_organizations = 1,
                               .organizations = request_query(req, "organization")};
    struct buf out = BUF_INIT;
    int rc = resource_list(req->route->kind, &s, &q, &out, &req->err);
    if (!rc)
        rc = respond_text(req, 200, "application/json", buf_cstr(&out), out.len, NULL);
    buf_release(&out);
    return rc;
}

int resource_show(struct request *req)
{
    struct resource_scope s;
    json_t *out = NULL;
    int rc = resource_scope_of(req, &s);
    if (!rc)
        rc = resource_get(req->route->kind, &s, request_param(req, "id"), &out, NULL, &req->err);
    if (!rc)
        rc = resource_owner_check(req->route->kind, out, req->owner_only, req->route->action,
                                  &req->err);
    return respond_resource(req, rc, 200, out);
}

int resource_put(struct request *req)
{
    struct resource_scope s;
    json_t *body, *out = NULL;
    int rc = resource_body_and_scope(req, &body, &s);
    if (!rc)
        rc = resource_replace(req->route->kind, &s, request_param(req, "id"), body,
                              request_header(req, "If-Match"), &out, &req->err);
    return respond_resource(req, rc, 200, out);
}

int merge_patch_type(struct request *req)
{
    const char *type = request_header(req, "Content-Type");
    /* one rule for every PATCH: a merge patch, or plain JSON, which means the same */
    if (request_media_is(req, "application/merge-patch+json") ||
        request_media_is(req, "application/json"))
        return 0;
    return purser_error_set(&req->err, HTTP_EMEDIATYPE,
                            "PATCH takes Content-Type: application/merge-patch+json (RFC 7396) or "
                            "application/json (the same), not '%.60s'",
                            type ? type : "");
}

int resource_merge(struct request *req)
{
    struct resource_scope s;
    json_t *body, *out = NULL;
    int rc = merge_patch_type(req);
    if (!rc)
        rc = resource_body_and_scope(req, &body, &s);
    if (!rc)
        rc = resource_patch(req->route->kind, &s, request_param(req, "id"), body,
                            request_header(req, "If-Match"), &out, &req->err);
    return respond_resource(req, rc, 200, out);
}

int resource_remove(struct request *req)
{
    struct resource_scope s;
    int rc = resource_scope_of(req, &s);
    if (!rc)
        rc = resource_delete(req->route->kind, &s, request_param(req, "id"),
                             request_header(req, "If-Match"), &req->err);
    if (!rc)
        rc = respond_text(req, 204, "application/json", "", 0, NULL);
    return rc;
}
