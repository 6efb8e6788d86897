/* transfer_export.c: export of an organization (transfer.h): its resources as a stream of
 * envelopes, kind by kind. */
#include "transfer/transfer_private.h"

#include "auth/identity.h"
#include "auth/oidc_provider.h"
#include "base/crypto.h"
#include "docs/docstore.h"
#include "docs/document.h"
#include "policy/cookbook.h"
#include "policy/policy.h"
#include "resource/resource.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static json_t *envelope(const char *kind, const char *name, json_t *spec)
{
    return json_pack("{s:s, s:s, s:{s:s}, s:o}", "kind", kind, "version", "v1", "metadata", "name",
                     name, "spec", spec ? spec : json_object());
}

static void add(const struct transfer_ctx *c, json_t *out, json_t *doc)
{
    json_array_append_new(out, doc);
    if (c->progress)
        c->progress(c->progress_ctx, json_array_size(out),
                    json_string_value(json_object_get(doc, "kind")));
}

/* ---- export --------------------------------------------------------------------------------- */

/* The organization, its members (with their user) and its clients, with public keys. */
static int export_identity(const struct transfer_ctx *c, long long oid, json_t *out,
                           struct purser_error *err)
{
    json_t *org = NULL, *members, *clients, *v, *doc;
    size_t i;
    int rc = identity_org_get(c->store, c->arena, c->org, &org, NULL, err);
    (void)oid; /* one signature for every writer */
    if (!rc)
        rc = identity_org_principals(c->store, c->arena, c->org, &members, &clients, err);
    if (rc) {
        json_decref(org);
        return rc;
    }
    doc = envelope("Organization", c->org,
                   json_pack("{s:O, s:O}", "full_name", json_object_get(org, "full_name"),
                             "external_ids", json_object_get(org, "external_ids")));
    json_object_set(json_object_get(doc, "metadata"), "labels", json_object_get(org, "labels"));
    add(c, out, doc);
    json_array_foreach (members, i, v)
        add(c, out,
            envelope("Member", json_string_value(json_object_get(v, "name")),
                     json_pack("{s:O, s:O*, s:O}", "roles", json_object_get(v, "roles"),
                               "policy_groups", json_object_get(v, "policy_groups"), "user",
                               json_object_get(v, "user"))));
    json_array_foreach (clients, i, v) {
        json_t *spec = json_deep_copy(v);
        json_object_del(spec, "name");
        add(c, out, envelope("Client", json_string_value(json_object_get(v, "name")), spec));
    }
    json_decref(org);
    json_decref(members);
    json_decref(clients);
    return 0;
}

static int export_policies(const struct transfer_ctx *c, long long oid, json_t *out,
                           struct purser_error *err)
{
    json_t *policies = NULL, *groups = NULL, *p, *g;
    const char *name, *group;
    int rc = policy_list(c->store, c->arena, c->org, c->links, &policies, err);
    (void)oid; /* one signature for every writer */
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
            add(c, out,
                envelope("PolicyRevision",
                         arena_concat(c->arena, name, "/", rev, (const char *)NULL), lock));
        }
    }
    if (!rc)
        rc = policy_group_list(c->store, c->arena, c->org, c->links, &groups, err);
    json_object_foreach (groups, group, g) {
        json_t *pointers = json_object(), *ptr;
        json_object_foreach (json_object_get(g, "policies"), name, ptr)
            json_object_set(pointers, name, json_object_get(ptr, "revision_id"));
        if (json_object_size(pointers))
            add(c, out, envelope("PolicyGroup", group, json_pack("{s:o}", "policies", pointers)));
        else
            json_decref(pointers);
    }
    json_decref(policies);
    json_decref(groups);
    return rc;
}

static int export_nodes(const struct transfer_ctx *c, long long oid, json_t *out,
                        struct purser_error *err)
{
    json_t *nodes = NULL, *v;
    const char *name;
    int rc = policy_node_list(c->store, c->arena, c->org, c->links, &nodes, err);
    (void)oid; /* one signature for every writer */
    json_object_foreach (nodes, name, v) {
        json_t *node = NULL;
        if (!rc)
            rc = policy_node_get(c->store, c->arena, c->org, name, &node, err);
        if (rc)
            break;
        add(c, out, envelope("Node", name, node));
    }
    json_decref(nodes);
    return rc;
}

static int export_artifacts(const struct transfer_ctx *c, long long oid, json_t *out,
                            struct purser_error *err)
{
    json_t *list = NULL, *entry;
    const char *name;
    int rc = cookbook_artifact_list(c->store, c->arena, c->org, NULL, c->links, &list, err);
    (void)oid; /* one signature for every writer */
    json_object_foreach (list, name, entry) {
        json_t *version;
        size_t i;
        json_array_foreach (json_object_get(entry, "versions"), i, version) {
            const char *identifier = json_string_value(json_object_get(version, "identifier"));
            json_t *manifest = NULL, *files = json_object(), *file;
            size_t j;
            if (!rc)
                rc = cookbook_artifact_get(c->store, c->arena, c->org, name, identifier, c->links,
                                           &manifest, err);
            if (rc) {
                json_decref(files);
                break;
            }
            json_array_foreach (json_object_get(manifest, "all_files"), j, file) {
                const char *sum = json_string_value(json_object_get(file, "checksum"));
                const char *data;
                size_t len;
                json_object_del(file, "url");
                if (!sum || json_object_get(files, sum))
                    continue;
                if ((rc = cookbook_file_get(c->store, c->arena, c->org, sum, &data, &len, err)))
                    break;
                {
                    char *b64 = crypto_base64(data, len);
                    json_object_set_new(files, sum, json_string(b64 ? b64 : ""));
                    free(b64);
                }
            }
            add(c, out,
                envelope("CookbookArtifact",
                         arena_concat(c->arena, name, "/", identifier, (const char *)NULL),
                         json_pack("{s:o, s:o}", "manifest", manifest, "files", files)));
        }
    }
    json_decref(list);
    return rc;
}

static int export_documents(const struct transfer_ctx *c, long long oid, json_t *out,
                            struct purser_error *err)
{
    struct docstore_ctx d;
    struct docstore_filter f = {.abstract = -1, .limit = -1, .redact = !c->secrets};
    json_t *docs = NULL, *buckets = json_object(), *doc, *spec;
    const char *bucket;
    long long rev;
    size_t i;
    int rc;
    transfer_docs_ctx(c, oid, &d);
    rc = docstore_latest(&d, &rev, err);
    if (!rc && rev)
        rc = docstore_documents(&d, rev, &f, &docs, err);
    json_array_foreach (docs, i, doc) {
        const char *b =
            json_string_value(json_object_get(json_object_get(doc, "status"), "bucket"));
        const char *policy =
            json_string_value(json_object_get(json_object_get(doc, "metadata"), "storagePolicy"));
        if (!b)
            continue;
        if (!(spec = json_object_get(buckets, b))) {
            spec = json_pack("{s:[]}", "documents");
            json_object_set_new(buckets, b, spec);
        }
        json_object_del(doc, "status");
        json_array_append(json_object_get(spec, "documents"), doc);
        if (!c->secrets && policy && !strcmp(policy, "encrypted")) { /* its data is not here */
            if (!json_object_get(spec, "redacted"))
                json_object_set_new(spec, "redacted", json_array());
            json_array_append_new(json_object_get(spec, "redacted"),
                                  json_sprintf("%s/%s",
                                               json_string_value(json_object_get(doc, "schema")),
                                               transfer_meta_name(doc)));
        }
    }
    json_object_foreach (buckets, bucket, spec)
        add(c, out, envelope("DocumentBucket", bucket, json_incref(spec)));
    json_decref(buckets);
    json_decref(docs);
    if (!rc && rev) {
        json_t *tags = NULL, *data, *vals = NULL, *v;
        const char *tag;
        rc = docstore_tag_list(&d, rev, &tags, err);
        json_object_foreach (tags, tag, data)
            add(c, out, envelope("RevisionTag", tag, json_pack("{s:O}", "data", data)));
        json_decref(tags);
        if (!rc)
            rc = docstore_validation_list(&d, rev, 1, &vals, err);
        json_array_foreach (json_object_get(vals, "results"), i, v) {
            const char *vname = json_string_value(json_object_get(v, "name"));
            if (vname && docstore_validation_reserved(vname))
                continue; /* every write records Deckhand's own: an import makes them again */
            add(c, out,
                envelope("Validation", vname,
                         json_pack("{s:O?, s:O?, s:O?}", "status", json_object_get(v, "status"),
                                   "validator", json_object_get(v, "validator"), "errors",
                                   json_object_get(v, "errors"))));
        }
        json_decref(vals);
    }
    return rc;
}

/* The resources of kind k by the convention's own pages, by name. */
static int export_resources(const struct transfer_ctx *c, long long oid,
                            const struct resource_kind *k, json_t *out, struct purser_error *err)
{
    struct resource_scope s = {c->store, c->arena, oid, c->actor};
    struct resource_query q = {.page_size = "1000"};
    struct buf text = BUF_INIT;
    int rc;
    do {
        json_t *page, *item;
        size_t i;
        buf_reset(&text);
        if ((rc = resource_list(k, &s, &q, &text, err)))
            break;
        if (!(page = json_loadb(text.data, text.len, 0, NULL))) {
            rc = purser_error_set(err, PURSER_EINTERNAL, "a page of %ss did not decode", k->stored);
            break;
        }
        json_array_foreach (json_object_get(page, "items"), i, item)
            add(c, out, k->export_doc(item));
        q.page_token = arena_strdup(
            c->arena, json_string_value(json_object_get(page, "next_page_token")) ?: "");
        json_decref(page);
    } while (q.page_token && *q.page_token);
    buf_release(&text);
    return rc;
}

/* The identity providers mapping to the organization, without their client secret. */
static int export_identity_providers(const struct transfer_ctx *c, long long oid, json_t *out,
                                     struct purser_error *err)
{
    size_t before = json_array_size(out);
    /* the server's: only to who may read them (an organization's admin may not) */
    int rc =
        c->identity_providers ? oidc_provider_export_org(c->store, c->arena, c->org, out, err) : 0;
    (void)oid; /* one signature for every writer */
    for (size_t i = before; c->progress && i < json_array_size(out); i++)
        c->progress(c->progress_ctx, i + 1, "IdentityProvider");
    return rc;
}

/* The writers of an export, in the order of transfer_kinds (each writes one or more kinds). */
static int (*const exports[])(const struct transfer_ctx *c, long long oid, json_t *out,
                              struct purser_error *err) = {
    export_identity,  export_policies,  export_nodes,
    export_artifacts, export_documents, export_identity_providers,
};

int transfer_export(const struct transfer_ctx *c, json_t **out, struct purser_error *err)
{
    long long oid;
    int rc = transfer_org_id(c, &oid, err);
    *out = json_array();
    for (size_t i = 0; !rc && i < sizeof(exports) / sizeof(exports[0]); i++)
        rc = exports[i](c, oid, *out, err);
    const struct resource_kind *kinds[16];
    size_t kind_count = transfer_resource_kinds(kinds, 16);
    for (size_t i = 0; !rc && i < kind_count; i++)
        rc = export_resources(c, oid, kinds[i], *out, err);
    if (rc) {
        json_decref(*out);
        *out = NULL;
    }
    return rc;
}
