/* git_catalog_status.c: a catalog's rendering made visible (issue 49): a revision that does not
 * render is skipped and fetches serve the last good rendering, as Argo CD shows a sync error
 * beside the last synced state; the failure shows in the cluster's status.catalog and as an
 * event of kind "catalog" (the metric is counted where the render failed). */
#include "git/gitrepo.h"

#include "inventory/cluster.h"
#include "resource/resource.h"

/* The status.catalog a sync calls for, or NULL when the one there already says it (nothing to
 * write): {revision, error: {revision, message}} after a failure, {revision} once a later
 * revision rendered, where an error was shown. */
static json_t *catalog_state(const json_t *shown, const struct gitrepo_sync *done)
{
    const json_t *error = json_object_get(shown, "error");
    if (done->failed) {
        if (json_integer_value(json_object_get(error, "revision")) == done->failed)
            return NULL; /* (another host, or a fetch before, wrote it already) */
        return json_pack("{s:I, s:{s:I, s:s}}", "revision", (json_int_t)done->revision, "error",
                         "revision", (json_int_t)done->failed, "message", done->failure);
    }
    if (done->rendered && error)
        return json_pack("{s:I}", "revision", (json_int_t)done->revision);
    return NULL;
}

int gitrepo_catalog_report(const struct resource_scope *s, const char *cluster,
                           const json_t *status, const struct gitrepo_sync *done,
                           struct purser_error *err)
{
    json_t *state = catalog_state(json_object_get(status, "catalog"), done), *members, *out = NULL;
    int rc;
    if (!state)
        return 0;
    members = json_pack("{s:o}", "catalog", state);
    rc = members ? resource_set_status(&cluster_kind, s, cluster, members, "catalog", NULL, NULL,
                                       &out, err)
                 : purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    json_decref(members);
    json_decref(out);
    return rc;
}
