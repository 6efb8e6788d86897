/* organizations.c: /organizations and /organizations/{org}/users (members), Chef's shapes. */
#include "auth/identity.h"
#include "auth/rbac.h"
#include "handlers.h"

int org_list(struct request *req)
{
    json_t *out = NULL;
    int rc = identity_org_list(req->svc->store, req->arena, &req->who,
                               request_query(req, "filter"), request_base_url(req), &out,
                               &req->err);
    return respond_owned(req, rc, 200, out);
}

int org_create(struct request *req)
{
    json_t *body, *out = NULL;
    int rc = request_json(req, &body);
    if (!rc)
        rc = identity_org_create(req->svc->store, body, request_base_url(req), &out,
                                 &req->err);
    return respond_owned(req, rc, 201, out);
}

int org_get(struct request *req)
{
    json_t *out = NULL;
    int rc = identity_org_get(req->svc->store, req->arena, request_param(req, "org"),
                              &out, &req->err);
    return respond_owned(req, rc, 200, out);
}

int org_update(struct request *req)
{
    json_t *body, *out = NULL;
    int rc = request_json(req, &body);
    if (!rc)
        rc = identity_org_update(req->svc->store, req->arena, request_param(req, "org"),
                                 body, &out, &req->err);
    return respond_owned(req, rc, 200, out);
}

int org_delete(struct request *req)
{
    json_t *out = NULL;
    int rc = identity_org_delete(req->svc->store, req->arena, request_param(req, "org"),
                                 &out, &req->err);
    return respond_owned(req, rc, 200, out);
}

int member_list(struct request *req)
{
    json_t *out = NULL;
    int rc = identity_member_list(req->svc->store, req->arena, request_param(req, "org"),
                                  &out, &req->err);
    return respond_owned(req, rc, 200, out);
}

static int role_known(const char *role, void *ctx)
{
    return rbac_role_exists(ctx, role);
}

int member_add(struct request *req)
{
    json_t *body, *out = NULL;
    int rc = request_json(req, &body);
    if (!rc)
        rc = identity_member_add(req->svc->store, request_param(req, "org"), body,
                                 role_known, (void *)req->svc->policy, &out, &req->err);
    return respond_owned(req, rc, 201, out);
}

int member_remove(struct request *req)
{
    const char *user = request_param(req, "user");
    int rc = identity_member_remove(req->svc->store, request_param(req, "org"), user,
                                    &req->err);
    return respond_owned(req, rc, 200, rc ? NULL : json_pack("{s:s}", "username", user));
}
