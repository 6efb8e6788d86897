/* policy_transfer.c: policy revisions, policy groups, nodes and cookbook artifacts in an
 * organization's export and import (policy.h's and cookbook.h's *_transfer,
 * lib/resource/transfer_hooks.h). */
#include "base/crypto.h"
#include "policy/cookbook.h"
#include "policy/policy.h"
#include "resource/transfer_hooks.h"

#include <stdlib.h>
#include <string.h>

/* ---- PolicyRevision ------------------------------------------------------------------------- */

static int export_revisions(const struct transfer_ctx *c, long long oid, json_t *out,
                            struct purser_error *err)
{
    json_t *policies = NULL, *p;
    const char *name;
    int rc = policy_list(c->store, c->arena, c->org, c->links, &policies, err);
    (void)oid; /* one signature for every export */
    json_object_foreach (policies, name, p) {
        const char *rev;
        json_t *meta;
        json_object_foreach (json_object_get(p, "revisions"), rev, meta) {
            json_t *lock = NULL;
            if (!rc)
                rc = policy_revision_get(c->store, c->arena, c->org, name, rev, &lock, err);
            if (rc)
                break;
            json_object_del(lock, "policy_group_list");
            transfer_append(c, out,
                            transfer_envelope(
                                "PolicyRevision",
                                arena_concat(c->arena, name, "/", rev, (const char *)NULL), lock));
        }
    }
    json_decref(policies);
    return rc;
}

static int import_revision(struct transfer_import *im, const json_t *doc, const char *name,
                           const json_t *spec, json_t **out, struct purser_error *err)
{
    const struct transfer_ctx *c = im->c;
    const char *slash = strchr(name, '/');
    (void)doc;
    if (!slash)
        return purser_error_set(err, PURSER_EINVAL, "metadata.name: not <policy>/<revision>");
    return policy_revision_create(c->store, c->org,
                                  arena_strndup(c->arena, name, (size_t)(slash - name)), spec,
                                  c->actor, out, err);
}

/* ---- PolicyGroup ---------------------------------------------------------------------------- */

static int export_groups(const struct transfer_ctx *c, long long oid, json_t *out,
                         struct purser_error *err)
{
    json_t *groups = NULL, *g;
    const char *group;
    int rc = policy_group_list(c->store, c->arena, c->org, c->links, &groups, err);
    (void)oid; /* one signature for every export */
    json_object_foreach (groups, group, g) {
        json_t *pointers = json_object(), *ptr;
        const char *name;
        json_object_foreach (json_object_get(g, "policies"), name, ptr)
            json_object_set(pointers, name, json_object_get(ptr, "revision_id"));
        if (json_object_size(pointers))
            transfer_append(
                c, out,
                transfer_envelope("PolicyGroup", group, json_pack("{s:o}", "policies", pointers)));
        else
            json_decref(pointers);
    }
    json_decref(groups);
    return rc;
}

/* Each pointer's revision is in the stream. */
static int check_group(const json_t *doc, const json_t *seen, struct purser_error *err)
{
    const char *policy;
    json_t *rev;
    int rc = 0;
    json_object_foreach (json_object_get(json_object_get(doc, "spec"), "policies"), policy, rev) {
        json_t *id = json_sprintf("PolicyRevision %s/%s", policy,
                                  json_is_string(rev) ? json_string_value(rev) : "");
        if (!json_is_string(rev) || !json_object_get(seen, json_string_value(id)))
            rc = purser_error_set(err, PURSER_EINVAL,
                                  "spec.policies: a revision that is not in the stream");
        json_decref(id);
        if (rc)
            break;
    }
    return rc;
}

static int import_group(struct transfer_import *im, const json_t *doc, const char *name,
                        const json_t *spec, json_t **out, struct purser_error *err)
{
    const struct transfer_ctx *c = im->c;
    const char *policy;
    json_t *rev;
    int rc = 0, created = 0;
    (void)doc;
    json_object_foreach (json_object_get(spec, "policies"), policy, rev) {
        const char *lock_name =
            arena_concat(c->arena, policy, "/", json_string_value(rev), (const char *)NULL);
        const json_t *lock = NULL, *other;
        size_t i;
        json_array_foreach (im->docs, i, other)
            if (!strcmp(json_string_value(json_object_get(other, "kind")), "PolicyRevision") &&
                !strcmp(transfer_meta_name(other), lock_name))
                lock = json_object_get(other, "spec");
        json_decref(*out);
        *out = NULL;
        if ((rc = policy_group_policy_put(c->store, c->org, name, policy, lock, c->actor, &created,
                                          out, err)))
            break;
    }
    return rc;
}

/* ---- Node ----------------------------------------------------------------------------------- */

static int export_nodes(const struct transfer_ctx *c, long long oid, json_t *out,
                        struct purser_error *err)
{
    json_t *nodes = NULL, *v;
    const char *name;
    int rc = policy_node_list(c->store, c->arena, c->org, c->links, &nodes, err);
    (void)oid; /* one signature for every export */
    json_object_foreach (nodes, name, v) {
        json_t *node = NULL;
        if (!rc)
            rc = policy_node_get(c->store, c->arena, c->org, name, &node, err);
        if (rc)
            break;
        transfer_append(c, out, transfer_envelope("Node", name, node));
    }
    json_decref(nodes);
    return rc;
}

static int import_node(struct transfer_import *im, const json_t *doc, const char *name,
                       const json_t *spec, json_t **out, struct purser_error *err)
{
    (void)doc;
    (void)name;
    return policy_node_create(im->c->store, im->c->actor, im->c->org, spec, 0, im->c->links, out,
                              err);
}

/* ---- CookbookArtifact ----------------------------------------------------------------------- */

/* The files of one artifact's manifest (their url dropped), their content in base64 by
 * checksum into files. */
static int artifact_files(const struct transfer_ctx *c, json_t *manifest, json_t *files,
                          struct purser_error *err)
{
    json_t *file;
    size_t j;
    int rc = 0;
    json_array_foreach (json_object_get(manifest, "all_files"), j, file) {
        const char *sum = json_string_value(json_object_get(file, "checksum"));
        const char *data;
        char *b64;
        size_t len;
        json_object_del(file, "url");
        if (!sum || json_object_get(files, sum))
            continue;
        if ((rc = cookbook_file_get(c->store, c->arena, c->org, sum, &data, &len, err)))
            break;
        b64 = crypto_base64(data, len);
        json_object_set_new(files, sum, json_string(b64 ? b64 : ""));
        free(b64);
    }
    return rc;
}

static int export_artifacts(const struct transfer_ctx *c, long long oid, json_t *out,
                            struct purser_error *err)
{
    json_t *list = NULL, *entry;
    const char *name;
    int rc = cookbook_artifact_list(c->store, c->arena, c->org, NULL, c->links, &list, err);
    (void)oid; /* one signature for every export */
    json_object_foreach (list, name, entry) {
        json_t *version;
        size_t i;
        json_array_foreach (json_object_get(entry, "versions"), i, version) {
            const char *identifier = json_string_value(json_object_get(version, "identifier"));
            json_t *manifest = NULL, *files = json_object();
            if (!rc)
                rc = cookbook_artifact_get(c->store, c->arena, c->org, name, identifier, c->links,
                                           &manifest, err);
            if (rc) {
                json_decref(files);
                break;
            }
            rc = artifact_files(c, manifest, files, err);
            transfer_append(
                c, out,
                transfer_envelope("CookbookArtifact",
                                  arena_concat(c->arena, name, "/", identifier, (const char *)NULL),
                                  json_pack("{s:o, s:o}", "manifest", manifest, "files", files)));
        }
    }
    json_decref(list);
    return rc;
}

/* Every file's content is in the stream. */
static int check_artifact(const json_t *doc, const json_t *seen, struct purser_error *err)
{
    const json_t *spec = json_object_get(doc, "spec");
    const json_t *files = json_object_get(spec, "files");
    json_t *file;
    size_t j;
    (void)seen;
    json_array_foreach (json_object_get(json_object_get(spec, "manifest"), "all_files"), j, file) {
        const char *sum = json_string_value(json_object_get(file, "checksum"));
        if (!sum || !json_is_string(json_object_get(files, sum)))
            return purser_error_set(err, PURSER_EINVAL,
                                    "spec.files: a file of the manifest is missing");
    }
    return 0;
}

static int import_artifact(struct transfer_import *im, const json_t *doc, const char *name,
                           const json_t *spec, json_t **out, struct purser_error *err)
{
    const struct transfer_ctx *c = im->c;
    const char *slash = strchr(name, '/'), *sum;
    json_t *content;
    int created = 0, rc = 0;
    (void)doc;
    if (!slash)
        return purser_error_set(err, PURSER_EINVAL, "metadata.name: not <name>/<identifier>");
    json_object_foreach (json_object_get(spec, "files"), sum, content) {
        size_t len = 0;
        unsigned char *data = crypto_base64_decode(json_string_value(content), &len);
        rc = data ? cookbook_file_import(c->store, c->org, sum, (const char *)data, len, err)
                  : purser_error_set(err, PURSER_EINVAL, "spec.files.%s: not base64", sum);
        free(data);
        if (rc)
            break;
    }
    if (!rc)
        rc = cookbook_artifact_put(c->store, c->arena, c->org,
                                   arena_strndup(c->arena, name, (size_t)(slash - name)), slash + 1,
                                   json_object_get(spec, "manifest"), c->actor, &created, out, err);
    return rc;
}

const struct transfer_hooks policy_revision_transfer = {{{"PolicyRevision", NULL, import_revision}},
                                                        export_revisions};
const struct transfer_hooks policy_group_transfer = {{{"PolicyGroup", check_group, import_group}},
                                                     export_groups};
const struct transfer_hooks policy_node_transfer = {{{"Node", NULL, import_node}}, export_nodes};
const struct transfer_hooks cookbook_transfer = {
    {{"CookbookArtifact", check_artifact, import_artifact}}, export_artifacts};
