/* transfer.c: import of an organization (transfer.h), and what export shares with it. */
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

const char *transfer_meta_name(const json_t *doc)
{
    return json_string_value(json_object_get(json_object_get(doc, "metadata"), "name"));
}

int transfer_org_id(const struct transfer_ctx *c, long long *id, struct purser_error *err)
{
    return identity_org_id(c->store, c->arena, c->org, id, err);
}

void transfer_docs_ctx(const struct transfer_ctx *c, long long org_id, struct docstore_ctx *d)
{
    memset(d, 0, sizeof(*d));
    d->store = c->store;
    d->arena = c->arena;
    d->keyring = c->keyring;
    d->org_id = org_id;
    d->principal = c->actor;
    d->base_url = arena_concat(c->arena, c->base_url, "/api/v1.0", (const char *)NULL);
    d->read_encrypted = 1;
    d->write_encrypted = 1;
}

/* ---- import --------------------------------------------------------------------------------- */

/* "document 7 (Node web1): " before err's message. */
static int at_doc(struct purser_error *err, int rc, size_t index, const json_t *doc)
{
    char message[PURSER_ERROR_MESSAGE_SIZE];
    const char *kind = json_string_value(json_object_get(doc, "kind"));
    const char *name = transfer_meta_name(doc);
    snprintf(message, sizeof(message), "%s", err ? err->message : "");
    return purser_error_set(err, rc, "document %zu (%.40s %.80s): %s", index + 1, kind ? kind : "?",
                            name ? name : "?", message);
}

static int invalid(struct purser_error *err, size_t index, const json_t *doc, const char *what)
{
    purser_error_set(err, PURSER_EINVAL, "%s", what);
    return at_doc(err, PURSER_EINVAL, index, doc);
}

struct import {
    const struct transfer_ctx *c;
    const json_t *docs;
    json_t *summary;  /* {kind: count} */
    json_t *left_out; /* [{bucket, schema, name}]: encrypted documents whose data was not there */
    long long oid;
    int made; /* the document being imported made something (0: left out, not counted) */
};

/* A kind of an export (the table is transfer_kinds below). */
struct transfer_kind {
    const char *kind;
    /* what a document of the kind needs beyond the envelope: 0, or invalid()'s error */
    int (*check)(const json_t *doc, const json_t *seen, size_t index, struct purser_error *err);
    /* writes one document (*out: what the write answered, freed by the caller) */
    int (*import)(struct import *im, const json_t *doc, const char *name, const json_t *spec,
                  json_t **out, struct purser_error *err);
};

static int import_empty(const struct transfer_ctx *c, long long oid, struct purser_error *err)
{
    json_t *contents = json_object();
    const char *held = NULL;
    int rc = identity_org_contents(c->store, c->arena, oid, c->org, contents, &held, err);
    json_decref(contents);
    if (!rc && held)
        rc = purser_error_set(err, PURSER_EEXISTS,
                              "organization '%s' is not empty (%s): an import goes into an "
                              "organization that has nothing but its validator and members",
                              c->org, held);
    return rc;
}

static int import_principal(const struct transfer_ctx *c, const char *org, const char *name,
                            const json_t *spec, const json_t *profile, struct purser_error *err)
{
    json_t *body = json_deep_copy(profile), *out = NULL, *key;
    long long pid;
    size_t i;
    int exists = 0, rc;
    json_object_del(body, "keys");
    json_object_del(body, "active");
    json_object_set_new(body, org ? "name" : "username", json_string(name));
    json_object_set_new(body, "create_key", json_false());
    if (!org) { /* a user: another organization of this installation may have made it */
        rc = identity_principal_id(c->store, c->arena, NULL, name, &pid, err);
        exists = rc == 0;
    }
    rc = exists
             ? 0
             : identity_principal_create(c->store, c->actor, org, body, NULL, c->links, &out, err);
    json_decref(body);
    json_decref(out);
    out = NULL;
    if (!rc)
        rc = identity_principal_id(c->store, c->arena, org, name, &pid, err);
    if (!rc && exists)
        return 0; /* an existing user's profile and keys stay as they are */
    json_array_foreach (json_object_get(spec, "keys"), i, key) {
        if (!rc)
            rc = identity_key_create(c->store, c->actor, pid, key, "", &out, err);
        if (rc)
            break;
        json_decref(out);
        out = NULL;
    }
    if (!rc && json_is_false(json_object_get(profile, "active"))) {
        json_t *off = json_pack("{s:b}", "active", 0);
        rc = identity_principal_update(c->store, c->actor, c->arena, org, name, off, NULL, &out,
                                       err);
        json_decref(off);
        json_decref(out);
    }
    return rc;
}

/* ---- each kind's import (and its check beyond the envelope) ------------------------------- */

static int import_organization(struct import *im, const json_t *doc, const char *name,
                               const json_t *spec, json_t **out, struct purser_error *err)
{ /* the organization's labels, full name and external ids */
    json_t *body = json_pack("{s:O?, s:O?}", "full_name", json_object_get(spec, "full_name"),
                             "external_ids", json_object_get(spec, "external_ids"));
    json_t *labels = json_object_get(json_object_get(doc, "metadata"), "labels");
    int rc;
    (void)name;
    if (labels)
        json_object_set(body, "labels", labels);
    rc = identity_org_update(im->c->store, im->c->actor, im->c->arena, im->c->org, body, NULL, out,
                             err);
    json_decref(body);
    return rc;
}

static int import_member(struct import *im, const json_t *doc, const char *name, const json_t *spec,
                         json_t **out, struct purser_error *err)
{
    const struct transfer_ctx *c = im->c;
    json_t *body =
        json_pack("{s:s, s:O?, s:O*}", "username", name, "roles", json_object_get(spec, "roles"),
                  "policy_groups", json_object_get(spec, "policy_groups"));
    int rc = import_principal(c, NULL, name, json_object_get(spec, "user"),
                              json_object_get(spec, "user"), err);
    (void)doc;
    if (!rc)
        rc = identity_member_add(c->store, c->actor, c->org, body, c->valid_role, c->role_ctx, out,
                                 err);
    json_decref(body);
    return rc;
}

/* A client's roles and their limits as exported: roles when not the one its creation gives
 * (validator or node), policy_groups for the limited ones. */
static int client_roles(struct import *im, const char *name, const json_t *spec,
                        struct purser_error *err)
{
    json_t *body = json_pack("{s:O*, s:O*}", "roles", json_object_get(spec, "roles"),
                             "policy_groups", json_object_get(spec, "policy_groups"));
    int rc;
    if (!json_object_get(body, "roles"))
        json_object_set_new(body, "roles", json_pack("[s]", identity_client_role(spec)));
    rc = identity_client_roles_set(im->c->store, im->c->org, name, body, im->c->valid_role,
                                   im->c->role_ctx, err);
    json_decref(body);
    return rc;
}

static int import_client(struct import *im, const json_t *doc, const char *name, const json_t *spec,
                         json_t **out, struct purser_error *err)
{
    json_t *profile =
        json_pack("{s:O?, s:O?, s:O*, s:O*}", "validator", json_object_get(spec, "validator"),
                  "labels", json_object_get(spec, "labels"), "sub_kind",
                  json_object_get(spec, "sub_kind"), "expires", json_object_get(spec, "expires"));
    int rc;
    (void)doc;
    (void)out;
    if (json_is_false(json_object_get(spec, "active")))
        json_object_set_new(profile, "active", json_false());
    rc = import_principal(im->c, im->c->org, name, spec, profile, err);
    json_decref(profile);
    if (!rc && (json_object_get(spec, "roles") || json_object_get(spec, "policy_groups")))
        rc = client_roles(im, name, spec, err);
    return rc;
}

static int import_policy_revision(struct import *im, const json_t *doc, const char *name,
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

/* PolicyGroup: each pointer's revision is in the stream. */
static int check_policy_group(const json_t *doc, const json_t *seen, size_t i,
                              struct purser_error *err)
{
    const char *policy;
    json_t *rev;
    int rc = 0;
    json_object_foreach (json_object_get(json_object_get(doc, "spec"), "policies"), policy, rev) {
        json_t *id = json_sprintf("PolicyRevision %s/%s", policy,
                                  json_is_string(rev) ? json_string_value(rev) : "");
        if (!json_is_string(rev) || !json_object_get(seen, json_string_value(id)))
            rc = invalid(err, i, doc, "spec.policies: a revision that is not in the stream");
        json_decref(id);
        if (rc)
            break;
    }
    return rc;
}

static int import_policy_group(struct import *im, const json_t *doc, const char *name,
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

static int import_node(struct import *im, const json_t *doc, const char *name, const json_t *spec,
                       json_t **out, struct purser_error *err)
{
    (void)doc;
    (void)name;
    return policy_node_create(im->c->store, im->c->actor, im->c->org, spec, 0, im->c->links, out,
                              err);
}

/* CookbookArtifact: every file's content is in the stream. */
static int check_artifact(const json_t *doc, const json_t *seen, size_t i, struct purser_error *err)
{
    const json_t *spec = json_object_get(doc, "spec");
    const json_t *files = json_object_get(spec, "files");
    json_t *file;
    size_t j;
    (void)seen;
    json_array_foreach (json_object_get(json_object_get(spec, "manifest"), "all_files"), j, file) {
        const char *sum = json_string_value(json_object_get(file, "checksum"));
        if (!sum || !json_is_string(json_object_get(files, sum)))
            return invalid(err, i, doc, "spec.files: a file of the manifest is missing");
    }
    return 0;
}

static int import_artifact(struct import *im, const json_t *doc, const char *name,
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

/* A document of a bucket as its export names it when redacted: "schema/name" (a new string). */
static json_t *document_id(const json_t *d)
{
    return json_sprintf("%s/%s", json_string_value(json_object_get(d, "schema")),
                        json_string_value(json_object_get(json_object_get(d, "metadata"), "name")));
}

/* Whether a bucket's spec.redacted (an export without secrets) names d. */
static int is_redacted(const json_t *spec, const json_t *d)
{
    json_t *id = document_id(d), *r;
    size_t k;
    int found = 0;
    json_array_foreach (json_object_get(spec, "redacted"), k, r)
        found |= json_equal(r, id);
    json_decref(id);
    return found;
}

/* DocumentBucket: spec.redacted, when there, names encrypted documents of the bucket (an export
 * without secrets): they are left out of the import, for the operator to supply. */
static int check_bucket(const json_t *doc, const json_t *seen, size_t i, struct purser_error *err)
{
    const json_t *spec = json_object_get(doc, "spec"),
                 *redacted = json_object_get(spec, "redacted");
    json_t *r, *d;
    size_t k, n;
    (void)seen;
    if (redacted && !json_is_array(redacted))
        return invalid(err, i, doc, "spec.redacted: a list of schema/name of documents");
    json_array_foreach (redacted, k, r) {
        int named = 0;
        json_array_foreach (json_object_get(spec, "documents"), n, d) {
            json_t *id = document_id(d);
            named |= json_equal(r, id);
            json_decref(id);
        }
        if (!named)
            return invalid(err, i, doc,
                           "spec.redacted: names a document that is not in spec.documents");
    }
    return 0;
}

static int import_bucket(struct import *im, const json_t *doc, const char *name, const json_t *spec,
                         json_t **out, struct purser_error *err)
{
    struct document *docs = NULL;
    struct docstore_ctx d;
    size_t count = 0, k;
    json_t *details = NULL, *kept = json_array(), *one;
    struct buf text = BUF_INIT;
    int rc;
    (void)doc;
    (void)out;
    json_array_foreach (json_object_get(spec, "documents"), k, one) {
        if (!is_redacted(spec, one))
            json_array_append(kept, one);
        else
            json_array_append_new(
                im->left_out, json_pack("{s:s, s:O, s:O}", "bucket", name, "schema",
                                        json_object_get(one, "schema"), "name",
                                        json_object_get(json_object_get(one, "metadata"), "name")));
    }
    rc = document_prepare(im->c->arena, kept, &docs, &count, &details, err);
    transfer_docs_ctx(im->c, im->oid, &d);
    json_decref(details);
    if (!rc && json_array_size(kept)) /* (every document left out: no bucket to write) */
        rc = docstore_write(&d, name, DOCSTORE_PUT_BUCKET, docs, count, &text, err);
    json_decref(kept);
    buf_release(&text);
    return rc;
}

/* The latest revision, which a RevisionTag or a Validation of the stream is about. */
static int latest_revision(struct import *im, struct docstore_ctx *d, const char *what,
                           long long *rev, struct purser_error *err)
{
    int rc;
    transfer_docs_ctx(im->c, im->oid, d);
    rc = docstore_latest(d, rev, err);
    if (!rc && !*rev)
        rc = purser_error_set(err, PURSER_EINVAL,
                              "no DocumentBucket before it: there is no revision to %s", what);
    return rc;
}

static int import_tag(struct import *im, const json_t *doc, const char *name, const json_t *spec,
                      json_t **out, struct purser_error *err)
{
    struct docstore_ctx d;
    long long rev;
    int rc = latest_revision(im, &d, "tag", &rev, err);
    (void)doc;
    if (!rc)
        rc = docstore_tag_create(&d, rev, name, json_object_get(spec, "data"), out, err);
    return rc;
}

static int import_validation(struct import *im, const json_t *doc, const char *name,
                             const json_t *spec, json_t **out, struct purser_error *err)
{
    struct docstore_ctx d;
    long long rev;
    int rc = latest_revision(im, &d, "validate", &rev, err);
    (void)doc;
    if (!rc)
        rc = docstore_validation_create(&d, rev, name, spec, out, err);
    return rc;
}

/* Identity providers are the server's: lib/auth/oidc_provider.c says what of them an
 * organization's export carries and its import makes (never the client secret). */
static int import_identity_provider(struct import *im, const json_t *doc, const char *name,
                                    const json_t *spec, json_t **out, struct purser_error *err)
{
    const json_t *mapping;
    size_t i;
    int rc = 0;
    *out = NULL;
    im->made = 0;
    if (!im->c->identity_providers) { /* an organization's importer: the server's are not its */
        json_array_append_new(im->left_out,
                              json_pack("{s:s, s:s?, s:s}", "kind", "IdentityProvider", "name",
                                        name, "reason",
                                        "identity providers are the server's: only a holder of "
                                        "write_identity_providers imports them"));
        return 0;
    }
    json_array_foreach (json_object_get(spec, "mappings"), i, mapping) {
        const char *role = json_string_value(json_object_get(mapping, "role"));
        if (!rc && role && !im->c->valid_role(role, im->c->role_ctx))
            rc = purser_error_set(err, PURSER_EINVAL,
                                  "spec.mappings[%zu].role: unknown role %.64s (the policy "
                                  "file's roles only)",
                                  i, role);
    }
    if (!rc)
        rc = oidc_provider_import_org(im->c->store, im->c->arena, im->c->actor, im->c->org, doc,
                                      im->left_out, &im->made, err);
    return rc;
}

/* The kinds of an export, in the order they are written (each refers only to kinds before
 * it; the Organization first): a document's check beyond the envelope (NULL: none) and its
 * import. A kind of the core is a row here and a writer in exports[]; the resource kinds come
 * after them, as the registry lists them (transfer_resource_kinds). */
static const struct transfer_kind transfer_kinds[] = {
    {"Organization", NULL, import_organization},
    {"Member", NULL, import_member},
    {"Client", NULL, import_client},
    {"PolicyRevision", NULL, import_policy_revision},
    {"PolicyGroup", check_policy_group, import_policy_group},
    {"Node", NULL, import_node},
    {"CookbookArtifact", check_artifact, import_artifact},
    {"DocumentBucket", check_bucket, import_bucket},
    {"RevisionTag", NULL, import_tag},
    {"Validation", NULL, import_validation},
    {"IdentityProvider", NULL, import_identity_provider},
};
#define KIND_COUNT (sizeof(transfer_kinds) / sizeof(transfer_kinds[0]))

size_t transfer_resource_kinds(const struct resource_kind **out, size_t max)
{
    return registry_resources(out, max, 1);
}

/* The registry's kinds of the resource convention after the core's: the one at k. */
static const struct resource_kind *resource_kind_at(int k)
{
    const struct resource_kind *kinds[16];
    size_t count = transfer_resource_kinds(kinds, 16);
    return k >= (int)KIND_COUNT && (size_t)k - KIND_COUNT < count ? kinds[k - KIND_COUNT] : NULL;
}

/* A document kind's index: the core's in their table, then the registry's resource kinds. */
static int kind_index(const char *kind)
{
    const struct resource_kind *kinds[16];
    size_t count = transfer_resource_kinds(kinds, 16);
    for (size_t i = 0; kind && i < KIND_COUNT; i++)
        if (!strcmp(transfer_kinds[i].kind, kind))
            return (int)i;
    for (size_t i = 0; kind && i < count; i++)
        if (!strcmp(kinds[i]->export_kind, kind))
            return (int)(KIND_COUNT + i);
    return -1;
}

static const char *kind_name(int k)
{
    return (size_t)k < KIND_COUNT ? transfer_kinds[k].kind : resource_kind_at(k)->export_kind;
}

/* The whole stream before anything is written. */
static int check_stream(const json_t *docs, struct purser_error *err)
{
    json_t *seen = json_object(), *doc;
    size_t i;
    int last = -1, rc = 0;
    if (!json_is_array(docs) || json_array_size(docs) == 0)
        return purser_error_set(err, PURSER_EINVAL, "the import is not a list of documents");
    json_array_foreach (docs, i, doc) {
        const char *kind = json_string_value(json_object_get(doc, "kind"));
        const char *name = transfer_meta_name(doc);
        int k = kind_index(kind);
        if (!json_is_object(doc))
            rc = invalid(err, i, doc, "not a mapping");
        else if (k < 0)
            rc = invalid(err, i, doc, "kind: not one an export makes");
        else if (!json_is_string(json_object_get(doc, "version")) ||
                 strcmp(json_string_value(json_object_get(doc, "version")), "v1"))
            rc = invalid(err, i, doc, "version: must be v1");
        else if (!name || !*name)
            rc = invalid(err, i, doc, "metadata.name: missing");
        else if (!json_is_object(json_object_get(doc, "spec")))
            rc = invalid(err, i, doc, "spec: must be a mapping");
        else if ((k == 0) != (i == 0))
            rc = invalid(err, i, doc, "kind: the Organization comes first, once");
        else if (k < last)
            rc = invalid(err, i, doc,
                         "kind: out of the export's order (what it refers to comes first)");
        if (rc)
            break;
        last = k;
        {
            json_t *id = json_sprintf("%s %s", kind, name);
            if (json_object_get(seen, json_string_value(id)))
                rc = invalid(err, i, doc, "metadata.name: a second document of this kind and name");
            else
                json_object_set_new(seen, json_string_value(id), json_true());
            json_decref(id);
        }
        if (rc)
            break;
        if ((size_t)k < KIND_COUNT && transfer_kinds[k].check)
            rc = transfer_kinds[k].check(doc, seen, i, err);
        if (rc)
            break;
    }
    json_decref(seen);
    return rc;
}

/* One document through its kind's import: the core's table, or a resource kind's import_doc. */
static int import_one(struct import *im, int k, const json_t *doc, json_t **out,
                      struct purser_error *err)
{
    const struct transfer_ctx *c = im->c;
    struct resource_scope s = {c->store, c->arena, im->oid, c->actor};
    struct resource_import in = {.base_url = c->base_url, .token_ttl = c->bootstrap_ttl};
    if ((size_t)k < KIND_COUNT)
        return transfer_kinds[k].import(im, doc, transfer_meta_name(doc),
                                        json_object_get(doc, "spec"), out, err);
    return resource_kind_at(k)->import_doc(&s, doc, &in, out, err);
}

static int import_txn(struct store *store, void *ctx, struct purser_error *err)
{
    struct import *im = ctx;
    const json_t *doc;
    size_t i;
    int rc = import_empty(im->c, im->oid, err);
    (void)store;
    json_object_clear(im->summary);
    json_array_clear(im->left_out);
    json_array_foreach (im->docs, i, doc) {
        int k = kind_index(json_string_value(json_object_get(doc, "kind")));
        const char *kind = kind_name(k);
        json_t *n, *out = NULL;
        if (rc)
            break;
        im->made = 1;
        rc = import_one(im, k, doc, &out, err);
        json_decref(out);
        if (rc)
            return at_doc(err, rc, i, doc);
        n = json_object_get(im->summary, kind);
        if (im->made)
            json_object_set_new(im->summary, kind, json_integer(json_integer_value(n) + 1));
        if (im->c->progress)
            im->c->progress(im->c->progress_ctx, i + 1, kind);
    }
    return rc;
}

int transfer_import(const struct transfer_ctx *c, const json_t *docs, json_t **summary,
                    struct purser_error *err)
{
    struct import im = {.c = c, .docs = docs, .summary = json_object(), .left_out = json_array()};
    int rc = check_stream(docs, err);
    if (!rc)
        rc = transfer_org_id(c, &im.oid, err);
    if (!rc)
        rc = store_txn(c->store, 1, import_txn, &im, err);
    if (!rc && !(*summary = json_pack("{s:O}", "imported", im.summary)))
        rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    if (!rc && json_array_size(im.left_out))
        json_object_set(*summary, "left_out", im.left_out);
    json_decref(im.summary);
    json_decref(im.left_out);
    return rc;
}
