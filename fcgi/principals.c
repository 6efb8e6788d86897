/* principals.c: /users and /organizations/{org}/clients (Chef's shapes; one code path, the
 * organization telling which). */
#include "auth/identity.h"
#include "handlers.h"

#include <string.h>

/* The {client} or {user} of the path. */
static const char *principal_name(struct request *req)
{
    const char *client = request_param(req, "client");
    return client ? client : request_param(req, "user");
}

/* GET /organizations/{org}/principals/{name}: open, as Chef's is (push jobs and knife find
 * public keys through it). API version 0 answers the first principal, 1 and later all of
 * them; 404s carry Chef's {error: "...", not_found: "..."} (a string, not a list). */
int principal_lookup(struct request *req)
{
    const char *org = request_param(req, "org"), *name = request_param(req, "name");
    json_t *found = NULL, *out;
    int rc = identity_principal_lookup(req->svc->store, req->arena, org, name, &found, &req->err);
    int status = 200;
    if (rc == PURSER_ENOTFOUND) {
        status = 404;
        out = json_pack("{s:o, s:s}", "error", json_sprintf("Cannot find org %s", org), "not_found",
                        "org");
    } else if (rc)
        return rc;
    else if (json_array_size(found) == 0) {
        status = 404;
        out = json_pack("{s:o, s:s}", "error", json_sprintf("Cannot find principal %s", name),
                        "not_found", "principal");
    } else if (req->api_version == 0)
        out = json_incref(json_array_get(found, 0));
    else
        out = json_pack("{s:O}", "principals", found);
    json_decref(found);
    rc = respond_json(req, status, out, NULL);
    json_decref(out);
    return rc;
}

int principal_list(struct request *req)
{
    json_t *out = NULL;
    int rc = identity_principal_list(req->svc->store, req->arena, request_param(req, "org"),
                                     request_base_url(req), &out, &req->err);
    return respond_owned(req, rc, 200, out);
}

int principal_create(struct request *req)
{
    json_t *body, *out = NULL;
    int rc = request_json(req, &body);
    if (!rc)
        rc = identity_principal_create(req->svc->store, request_param(req, "org"), body,
                                       request_base_url(req), &out, &req->err);
    return respond_owned(req, rc, 201, out);
}

int principal_get(struct request *req)
{
    json_t *out = NULL;
    int rc = identity_principal_get(req->svc->store, req->arena, request_param(req, "org"),
                                    principal_name(req), &out, &req->err);
    return respond_owned(req, rc, 200, out);
}

int principal_update(struct request *req)
{
    json_t *body, *out = NULL;
    int rc = request_json(req, &body);
    if (!rc)
        rc = identity_principal_update(req->svc->store, req->arena, request_param(req, "org"),
                                       principal_name(req), body, &out, &req->err);
    return respond_owned(req, rc, 200, out);
}

int principal_delete(struct request *req)
{
    json_t *out = NULL;
    int rc = identity_principal_delete(req->svc->store, req->arena, request_param(req, "org"),
                                       principal_name(req), &out, &req->err);
    return respond_owned(req, rc, 200, out);
}

/* The id of the path's user or client, for the keys and tokens below it. */
static int path_principal(struct request *req, long long *id)
{
    return identity_principal_id(req->svc->store, req->arena, request_param(req, "org"),
                                 principal_name(req), id, &req->err);
}

/* The URL of the keys collection of this path: base + the path up to ".../keys". */
static const char *collection_uri(struct request *req)
{
    const char *keys = strstr(req->path, "/keys");
    size_t len = keys ? (size_t)(keys - req->path) + 5 : strlen(req->path);
    return arena_sprintf(req->arena, "%s%.*s", request_base_url(req), (int)len, req->path);
}

int key_list(struct request *req)
{
    json_t *out = NULL;
    long long id;
    int rc = path_principal(req, &id);
    if (!rc)
        rc = identity_key_list(req->svc->store, req->arena, id, collection_uri(req), &out,
                               &req->err);
    return respond_owned(req, rc, 200, out);
}

int key_create(struct request *req)
{
    json_t *body, *out = NULL;
    long long id;
    int rc = request_json(req, &body);
    if (!rc)
        rc = path_principal(req, &id);
    if (!rc)
        rc = identity_key_create(req->svc->store, id, body, collection_uri(req), &out, &req->err);
    return respond_owned(req, rc, 201, out);
}

int key_get(struct request *req)
{
    json_t *out = NULL;
    long long id;
    int rc = path_principal(req, &id);
    if (!rc)
        rc = identity_key_get(req->svc->store, req->arena, id, request_param(req, "key"), &out,
                              &req->err);
    return respond_owned(req, rc, 200, out);
}

int key_update(struct request *req)
{
    json_t *body, *out = NULL;
    long long id;
    int rc = request_json(req, &body);
    if (!rc)
        rc = path_principal(req, &id);
    if (!rc)
        rc = identity_key_update(req->svc->store, req->arena, id, request_param(req, "key"), body,
                                 &out, &req->err);
    return respond_owned(req, rc, 200, out);
}

int key_delete(struct request *req)
{
    json_t *out = NULL;
    long long id;
    int rc = path_principal(req, &id);
    if (!rc)
        rc = identity_key_delete(req->svc->store, req->arena, id, request_param(req, "key"), &out,
                                 &req->err);
    return respond_owned(req, rc, 200, out);
}

int token_list(struct request *req)
{
    json_t *out = NULL;
    long long id;
    int rc = path_principal(req, &id);
    if (!rc)
        rc = identity_token_list(req->svc->store, req->arena, id, &out, &req->err);
    return respond_owned(req, rc, 200, out);
}

int token_create(struct request *req)
{
    json_t *body = NULL, *out = NULL;
    long long id;
    int rc = req->body_len ? request_json(req, &body) : 0;
    if (!rc)
        rc = path_principal(req, &id);
    if (!rc)
        rc = identity_token_create(req->svc->store, id, body, &out, &req->err);
    return respond_owned(req, rc, 201, out);
}

int token_update(struct request *req)
{
    long long id;
    json_t *body, *out = NULL;
    int rc = path_principal(req, &id);
    if (!rc)
        rc = request_json(req, &body);
    if (!rc)
        rc = identity_token_update(req->svc->store, req->arena, id, request_param(req, "id"), body,
                                   &out, &req->err);
    return respond_owned(req, rc, 200, out);
}

int token_delete(struct request *req)
{
    long long id;
    int rc = path_principal(req, &id);
    if (!rc)
        rc = identity_token_delete(req->svc->store, id, request_param(req, "id"), &req->err);
    if (rc)
        return rc;
    return respond_text(req, 204, "application/json", "", 0, NULL);
}
