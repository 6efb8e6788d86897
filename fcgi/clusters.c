/* clusters.c: the inventory's clusters (resource convention), their facts, bootstrap tokens and
 * the open install route that redeems one. */
#include "handlers.h"

#include "auth/identity.h"
#include "base/buf.h"
#include "config/config.h"
#include "inventory/cluster.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The organization's scope for the resource calls. */
static int scope_of(struct request *req, struct resource_scope *s)
{
    s->store = req->svc->store;
    s->arena = req->arena;
    s->actor = req->principal;
    return identity_org_id(req->svc->store, req->arena, request_param(req, "org"), &s->org_id,
                           &req->err);
}

/* The JSON body and the organization's scope: what every writing handler starts with. */
static int body_and_scope(struct request *req, json_t **body, struct resource_scope *s)
{
    int rc = request_json(req, body);
    return rc ? rc : scope_of(req, s);
}

/* A resource with its revision as ETag; 304 when If-None-Match names it (GET and HEAD). */
static int respond_resource(struct request *req, int rc, int status, json_t *out)
{
    if (!rc) {
        const char *rev = json_string_value(
            json_object_get(json_object_get(out, "metadata"), "revision"));
        const char *header = arena_sprintf(req->arena, "ETag: \"%s\"\r\n", rev ? rev : "");
        if (status == 200 && (!strcmp(req->method, "GET") || !strcmp(req->method, "HEAD")) &&
            rev && request_etag_fresh(req, rev))
            rc = respond_text(req, 304, "application/json", "", 0, header);
        else
            rc = respond_json(req, status, out, header);
    }
    json_decref(out);
    return rc;
}

int clusters_list(struct request *req)
{
    struct resource_scope s;
    struct resource_query q = {.page_size = request_query(req, "page_size"),
                               .page_token = request_query(req, "page_token"),
                               .labels = request_query(req, "labels"),
                               .filter = request_query(req, "filter"),
                               .sort = request_query(req, "sort"),
                               .owner = req->owner_only}; /* a cluster's credential: its own */
    struct buf out = BUF_INIT;
    int rc = scope_of(req, &s);
    if (!rc)
        rc = resource_list(&cluster_kind, &s, &q, &out, &req->err);
    if (!rc)
        rc = respond_text(req, 200, "application/json", buf_cstr(&out), out.len, NULL);
    buf_release(&out);
    return rc;
}

int clusters_create(struct request *req)
{
    struct resource_scope s;
    json_t *body, *out = NULL;
    int rc = body_and_scope(req, &body, &s);
    if (!rc)
        rc = cluster_create(&s, body, req->svc->config->bootstrap_ttl, request_base_url(req), &out,
                            &req->err);
    return respond_resource(req, rc, 201, out);
}

int cluster_get(struct request *req)
{
    struct resource_scope s;
    json_t *out = NULL;
    int rc = scope_of(req, &s);
    if (!rc)
        rc = resource_get(&cluster_kind, &s, request_param(req, "id"), &out, NULL, &req->err);
    if (!rc)
        rc = cluster_owner_check(out, req->owner_only, "read_cluster", &req->err);
    return respond_resource(req, rc, 200, out);
}

int cluster_replace(struct request *req)
{
    struct resource_scope s;
    json_t *body, *out = NULL;
    int rc = body_and_scope(req, &body, &s);
    if (!rc)
        rc = resource_replace(&cluster_kind, &s, request_param(req, "id"), body,
                              request_header(req, "If-Match"), &out, &req->err);
    return respond_resource(req, rc, 200, out);
}

int cluster_patch(struct request *req)
{
    struct resource_scope s;
    const char *type = request_header(req, "Content-Type");
    json_t *body, *out = NULL;
    int rc;
    if (!type || strncmp(type, "application/merge-patch+json", 28) != 0)
        return purser_error_set(&req->err, HTTP_EMEDIATYPE,
                                "PATCH takes Content-Type: application/merge-patch+json (RFC "
                                "7396), not '%.60s'",
                                type ? type : "");
    rc = body_and_scope(req, &body, &s);
    if (!rc)
        rc = resource_patch(&cluster_kind, &s, request_param(req, "id"), body,
                            request_header(req, "If-Match"), &out, &req->err);
    return respond_resource(req, rc, 200, out);
}

int clusters_delete(struct request *req)
{
    struct resource_scope s;
    int rc = scope_of(req, &s);
    if (!rc)
        rc = cluster_delete(&s, request_param(req, "id"), request_header(req, "If-Match"),
                            &req->err);
    return rc ? rc : respond_text(req, 204, "application/json", "", 0, NULL);
}

int cluster_facts_write(struct request *req)
{
    struct resource_scope s;
    json_t *body, *out = NULL;
    int rc = body_and_scope(req, &body, &s);
    if (!rc)
        rc = cluster_facts_put(&s, request_param(req, "id"), body, req->svc->config->facts_versions,
                               req->owner_only, &out, &req->err);
    return respond_resource(req, rc, 200, out);
}

int cluster_facts_list(struct request *req)
{
    struct resource_scope s;
    json_t *out = NULL;
    int rc = scope_of(req, &s);
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
    int rc = scope_of(req, &s);
    if (!rc)
        rc = cluster_token_reset(&s, request_param(req, "id"), req->svc->config->bootstrap_ttl,
                                 request_base_url(req), &out, &req->err);
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
        json_object_set_new(out, "api_url", json_string(request_base_url(req)));
        json_object_set_new(out, "ca_certificate", ca ? json_string(ca) : json_null());
        free(ca);
        rc = respond_json(req, 200, out, "Cache-Control: no-store\r\n");
    }
    json_decref(out);
    return rc;
}
