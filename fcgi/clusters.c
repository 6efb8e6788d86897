/* clusters.c: what clusters have beyond the resource convention (whose routes are
 * resources.c's): their creation with a bootstrap token, their facts, the token's reset and the
 * open install route that redeems one. */
#include "auth.h"
#include "handlers.h"

#include "auth/identity.h"
#include "base/buf.h"
#include "config/config.h"
#include "inventory/cluster.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A bootstrap token made by a member limited to some policy groups carries the limit: the
 * cluster's credential its redemption makes reaches no further than its maker. */
int clusters_create(struct request *req)
{
    struct resource_scope s;
    json_t *body, *out = NULL;
    const char *limit = NULL;
    int rc = resource_body_and_scope(req, &body, &s);
    if (!rc)
        rc = auth_made_limit(req, "cluster", &limit);
    if (!rc)
        rc = cluster_create(&s, body, req->svc->config->bootstrap_ttl, limit, request_base_url(req),
                            &out, &req->err);
    return respond_resource(req, rc, 201, out);
}

int cluster_facts_write(struct request *req)
{
    struct resource_scope s;
    json_t *body, *out = NULL;
    int rc = resource_body_and_scope(req, &body, &s);
    if (!rc)
        rc = cluster_facts_put(&s, request_param(req, "id"), body, req->svc->config->facts_versions,
                               req->owner_only, &out, &req->err);
    return respond_resource(req, rc, 200, out);
}

int cluster_facts_list(struct request *req)
{
    struct resource_scope s;
    json_t *out = NULL;
    int rc = resource_scope_of(req, &s);
    if (!rc)
        rc = cluster_facts_history(&s, request_param(req, "id"), request_query(req, "page_size"),
                                   request_query(req, "page_token"), req->owner_only, &out,
                                   &req->err);
    return respond_owned(req, rc, 200, out);
}

int cluster_token_new(struct request *req)
{
    struct resource_scope s;
    json_t *out = NULL;
    const char *limit = NULL;
    int rc = resource_scope_of(req, &s);
    if (!rc)
        rc = auth_made_limit(req, "cluster", &limit);
    if (!rc)
        rc = cluster_token_reset(&s, request_param(req, "id"), req->svc->config->bootstrap_ttl,
                                 limit, request_base_url(req), &out, &req->err);
    return respond_owned(req, rc, 201, out);
}

/* The CA certificate the manifest carries (inventory.ca_file), or NULL. */
static char *ca_certificate(const char *path)
{
    FILE *f = path && *path ? fopen(path, "r") : NULL;
    char *text = NULL;
    size_t n = 0;
    if (!f)
        return NULL;
    if (!(text = malloc(65537)) || !(n = fread(text, 1, 65536, f))) {
        free(text);
        text = NULL;
    } else {
        text[n] = '\0';
    }
    fclose(f);
    return text;
}

int install_bootstrap(struct request *req)
{
    json_t *out = NULL;
    int rc =
        cluster_redeem(req->svc->store, req->arena, request_query(req, "token"), &out, &req->err);
    if (!rc) {
        char *ca = ca_certificate(req->svc->config->ca_file);
        if (!json_object_get(out, "api_url")) /* the cluster's api_endpoint, else this URL */
            json_object_set_new(out, "api_url", json_string(request_base_url(req)));
        json_object_set_new(out, "ca_certificate", ca ? json_string(ca) : json_null());
        free(ca);
        rc = respond_json(req, 200, out, "Cache-Control: no-store\r\n");
    }
    json_decref(out);
    return rc;
}
