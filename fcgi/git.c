/* git.c: the access checks nginx asks (auth_request) before it hands a git request to
 * git-http-backend: a repository is read (fetched or cloned) with the API's credentials and
 * RBAC, never pushed to; each check first brings the repository up to the database. */
#include "auth.h"
#include "handlers.h"
#include "router.h"

#include "auth/identity.h"
#include "base/log.h"
#include "config/config.h"
#include "git/gitrepo.h"
#include "inventory/cluster.h"

#include <string.h>

/* ?service=git-upload-pack (a fetch or clone); git-receive-pack (a push) is refused. The
 * service is read as git-http-backend reads it: the last service= of the query, percent-decoded
 * (name and value), so that no spelling of a push reaches git as anything but a push. */
static int service_check(struct request *req)
{
    const char **values;
    size_t count = request_query_all(req, "service", &values);
    const char *service = count ? values[count - 1] : NULL;
    if (!service || !*service)
        return purser_error_set(&req->err, PURSER_EINVAL,
                                "service: git-upload-pack or git-receive-pack is required");
    if (strcmp(service, "git-receive-pack") == 0)
        return purser_error_set(&req->err, PURSER_EDENIED,
                                "purser's git repositories are read-only: write through the API");
    if (strcmp(service, "git-upload-pack") != 0)
        return purser_error_set(&req->err, PURSER_EINVAL,
                                "service must be git-upload-pack or git-receive-pack, not '%.40s'",
                                service);
    return 0;
}

int git_access_history(struct request *req)
{
    struct gitrepo_ctx g = {.store = req->svc->store,
                            .root = req->svc->config->git_root,
                            .org = request_param(req, "org")};
    struct gitrepo_sync done;
    int rc = service_check(req);
    if (!rc)
        rc = identity_org_id(g.store, req->arena, g.org, &g.org_id, &req->err);
    if (!rc)
        rc = gitrepo_history_sync(&g, 0, &done, &req->err);
    if (!rc)
        rc = respond_text(req, 204, "text/plain", "", 0, NULL);
    return rc;
}

/* What the catalog's sync found, in the cluster's status (gitrepo_catalog_report); a failure
 * to write it is logged, and the fetch is served all the same. */
static void catalog_report(struct request *req, const struct resource_scope *s, const char *id,
                           const json_t *cluster, const struct gitrepo_sync *done)
{
    struct purser_error err = {0};
    json_t *fields;
    if (!gitrepo_catalog_report(s, id, json_object_get(cluster, "status"), done, &err))
        return;
    fields = json_pack("{s:s, s:s, s:s}", "request_id", req->request_id, "cluster", id, "error",
                       err.message);
    log_message("warning", "a catalog's status could not be written", fields);
    json_decref(fields);
}

int git_access_catalog(struct request *req)
{
    struct resource_scope s;
    struct docstore_ctx docs;
    struct gitrepo_selector sel;
    struct gitrepo_sync done;
    const char *id = request_param(req, "id");
    json_t *cluster = NULL, *repo;
    long long cluster_id = 0;
    const char *type;
    int rc = service_check(req);
    if (!rc)
        rc = resource_scope_of(req, &s);
    if (!rc)
        rc = resource_get(&cluster_kind, &s, id, &cluster, &cluster_id, &req->err);
    if (!rc) /* a cluster's own credential reads its own catalog only */
        rc = resource_owner_check(&cluster_kind, cluster, req->owner_only, req->route->action,
                                  &req->err);
    if (!rc) /* the catalog holds rendered documents: who may not read those may not fetch it */
        rc = auth_require(req, "read_cleartext_document");
    repo = json_object_get(json_object_get(cluster, "spec"), "git_repo");
    type = json_string_value(json_object_get(repo, "type"));
    if (!rc && (!type || strcmp(type, "auto") != 0))
        rc = purser_error_set(
            &req->err, PURSER_ENOTFOUND,
            "Cluster '%s' has no catalog here: its spec.git_repo.type is not auto", id);
    if (!rc)
        rc = gitrepo_selector_of(repo, req->arena, &sel, &req->err);
    docs = (struct docstore_ctx){.store = s.store,
                                 .arena = req->arena,
                                 .keyring = req->svc->keyring,
                                 .org_id = s.org_id,
                                 .principal = req->principal,
                                 .read_encrypted = 1, /* (to know what secrets went into) */
                                 .render_cache = req->svc->render_cache,
                                 .render_limits = req->svc->render_limits};
    if (!rc)
        rc = gitrepo_catalog_sync(&docs, req->svc->config->git_root, request_param(req, "org"), id,
                                  cluster_id, &sel, &done, &req->err);
    if (!rc)
        catalog_report(req, &s, id, cluster, &done);
    json_decref(cluster);
    if (!rc)
        rc = respond_text(req, 204, "text/plain", "", 0, NULL);
    return rc;
}
