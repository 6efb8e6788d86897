/* cookbooks.c: sandboxes, the file store and cookbook artifacts (what chef push uses). */
#include "handlers.h"
#include "policy/cookbook.h"

int sandboxes_create(struct request *req)
{
    json_t *body, *out = NULL;
    int rc = request_json(req, &body);
    if (!rc)
        rc = cookbook_sandbox_create(req->svc->store, request_param(req, "org"), body,
                                     request_links(req), &out, &req->err);
    return respond_owned(req, rc, 201, out);
}

int sandboxes_commit(struct request *req)
{
    json_t *body, *out = NULL;
    int rc = request_json(req, &body);
    if (!rc)
        rc = cookbook_sandbox_commit(req->svc->store, req->arena, request_param(req, "org"),
                                     request_param(req, "id"), body, &out, &req->err);
    return respond_owned(req, rc, 200, out);
}

int files_put(struct request *req)
{
    int rc = cookbook_file_put(req->svc->store, request_param(req, "org"),
                               request_param(req, "checksum"), req->body ? req->body : "",
                               req->body_len, &req->err);
    if (rc)
        return rc;
    return respond_text(req, 200, "application/json", "{}", 2, NULL);
}

int files_get(struct request *req)
{
    const char *data;
    size_t len;
    int rc = cookbook_file_get(req->svc->store, req->arena, request_param(req, "org"),
                               request_param(req, "checksum"), &data, &len, &req->err);
    if (rc)
        return rc;
    return respond_text(req, 200, "application/x-binary", data, len,
                        "Cache-Control: private, max-age=31536000, immutable\r\n");
}

int artifacts_list(struct request *req)
{
    json_t *out = NULL;
    int rc =
        cookbook_artifact_list(req->svc->store, req->arena, request_param(req, "org"),
                               request_param(req, "name"), request_links(req), &out, &req->err);
    return respond_owned(req, rc, 200, out);
}

int artifacts_put(struct request *req)
{
    json_t *body, *out = NULL;
    int created = 0;
    int rc = request_json(req, &body);
    if (!rc)
        rc = cookbook_artifact_put(req->svc->store, req->arena, request_param(req, "org"),
                                   request_param(req, "name"), request_param(req, "identifier"),
                                   body, req->who.name, &created, &out, &req->err);
    return respond_owned(req, rc, created ? 201 : 200, out);
}

int artifacts_get(struct request *req)
{
    json_t *out = NULL;
    int rc = cookbook_artifact_get(req->svc->store, req->arena, request_param(req, "org"),
                                   request_param(req, "name"), request_param(req, "identifier"),
                                   request_links(req), &out, &req->err);
    return respond_owned(req, rc, 200, out);
}

int artifacts_delete(struct request *req)
{
    json_t *out = NULL;
    /* what a group's lock names is what the group runs: write_policy_group on each such group */
    int rc =
        artifact_users_check(req, request_param(req, "name"), request_param(req, "identifier"));
    if (!rc)
        rc = cookbook_artifact_delete(req->svc->store, req->principal, req->arena,
                                      request_param(req, "org"), request_param(req, "name"),
                                      request_param(req, "identifier"), &out, &req->err);
    return respond_owned(req, rc, 200, out);
}
