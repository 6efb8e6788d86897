/* docstore_transfer.c: the documents of an organization in its export and import: its buckets,
 * the latest revision's tags and validations (docstore.h's docstore_transfer,
 * lib/resource/transfer_hooks.h). */
#include "docs/docstore.h"
#include "docs/document.h"
#include "resource/transfer_hooks.h"

#include <string.h>

/* A document store context for c's organization (oid), reading and writing encrypted
 * documents. */
static void docs_ctx(const struct transfer_ctx *c, long long oid, struct docstore_ctx *d)
{
    memset(d, 0, sizeof(*d));
    d->store = c->store;
    d->arena = c->arena;
    d->keyring = c->keyring;
    d->org_id = oid;
    d->principal = c->actor;
    d->base_url = arena_concat(c->arena, c->base_url, "/api/v1.0", (const char *)NULL);
    d->read_encrypted = 1;
    d->write_encrypted = 1;
}

/* ---- export --------------------------------------------------------------------------------- */

/* The revision's documents by bucket: {bucket: {documents, redacted?}}, redacted the encrypted
 * ones whose data an export without secrets leaves out. */
static json_t *buckets_of(const struct transfer_ctx *c, const json_t *docs)
{
    json_t *buckets = json_object(), *doc, *spec;
    size_t i;
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
    return buckets;
}

/* The revision's tags and validations (not Deckhand's own). */
static int export_tags(const struct transfer_ctx *c, struct docstore_ctx *d, long long rev,
                       json_t *out, struct purser_error *err)
{
    json_t *tags = NULL, *data, *vals = NULL, *v;
    const char *tag;
    size_t i;
    int rc = docstore_tag_list(d, rev, &tags, err);
    json_object_foreach (tags, tag, data)
        transfer_append(c, out,
                        transfer_envelope("RevisionTag", tag, json_pack("{s:O}", "data", data)));
    json_decref(tags);
    if (!rc)
        rc = docstore_validation_list(d, rev, 1, &vals, err);
    json_array_foreach (json_object_get(vals, "results"), i, v) {
        const char *vname = json_string_value(json_object_get(v, "name"));
        if (vname && docstore_validation_reserved(vname))
            continue; /* every write records Deckhand's own: an import makes them again */
        transfer_append(c, out,
                        transfer_envelope("Validation", vname,
                                          json_pack("{s:O?, s:O?, s:O?}", "status",
                                                    json_object_get(v, "status"), "validator",
                                                    json_object_get(v, "validator"), "errors",
                                                    json_object_get(v, "errors"))));
    }
    json_decref(vals);
    return rc;
}

static int export_documents(const struct transfer_ctx *c, long long oid, json_t *out,
                            struct purser_error *err)
{
    struct docstore_ctx d;
    struct docstore_filter f = {.abstract = -1, .limit = -1, .redact = !c->secrets};
    json_t *docs = NULL, *buckets, *spec;
    const char *bucket;
    long long rev;
    int rc;
    docs_ctx(c, oid, &d);
    rc = docstore_latest(&d, &rev, err);
    if (!rc && rev)
        rc = docstore_documents(&d, rev, &f, &docs, err);
    buckets = buckets_of(c, docs);
    json_object_foreach (buckets, bucket, spec)
        transfer_append(c, out, transfer_envelope("DocumentBucket", bucket, json_incref(spec)));
    json_decref(buckets);
    json_decref(docs);
    if (!rc && rev)
        rc = export_tags(c, &d, rev, out, err);
    return rc;
}

/* ---- import --------------------------------------------------------------------------------- */

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

/* spec.redacted, when there, names encrypted documents of the bucket (an export without
 * secrets): they are left out of the import, for the operator to supply. */
static int check_bucket(const json_t *doc, const json_t *seen, struct purser_error *err)
{
    const json_t *spec = json_object_get(doc, "spec"),
                 *redacted = json_object_get(spec, "redacted");
    json_t *r, *d;
    size_t k, n;
    (void)seen;
    if (redacted && !json_is_array(redacted))
        return purser_error_set(err, PURSER_EINVAL,
                                "spec.redacted: a list of schema/name of documents");
    json_array_foreach (redacted, k, r) {
        int named = 0;
        json_array_foreach (json_object_get(spec, "documents"), n, d) {
            json_t *id = document_id(d);
            named |= json_equal(r, id);
            json_decref(id);
        }
        if (!named)
            return purser_error_set(
                err, PURSER_EINVAL,
                "spec.redacted: names a document that is not in spec.documents");
    }
    return 0;
}

static int import_bucket(struct transfer_import *im, const json_t *doc, const char *name,
                         const json_t *spec, json_t **out, struct purser_error *err)
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
    docs_ctx(im->c, im->oid, &d);
    json_decref(details);
    if (!rc && json_array_size(kept)) /* (every document left out: no bucket to write) */
        rc = docstore_write(&d, name, DOCSTORE_PUT_BUCKET, docs, count, &text, err);
    json_decref(kept);
    buf_release(&text);
    return rc;
}

/* The latest revision, which a RevisionTag or a Validation of the stream is about. */
static int latest_revision(struct transfer_import *im, struct docstore_ctx *d, const char *what,
                           long long *rev, struct purser_error *err)
{
    int rc;
    docs_ctx(im->c, im->oid, d);
    rc = docstore_latest(d, rev, err);
    if (!rc && !*rev)
        rc = purser_error_set(err, PURSER_EINVAL,
                              "no DocumentBucket before it: there is no revision to %s", what);
    return rc;
}

static int import_tag(struct transfer_import *im, const json_t *doc, const char *name,
                      const json_t *spec, json_t **out, struct purser_error *err)
{
    struct docstore_ctx d;
    long long rev;
    int rc = latest_revision(im, &d, "tag", &rev, err);
    (void)doc;
    if (!rc)
        rc = docstore_tag_create(&d, rev, name, json_object_get(spec, "data"), out, err);
    return rc;
}

static int import_validation(struct transfer_import *im, const json_t *doc, const char *name,
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

const struct transfer_hooks docstore_transfer = {{{"DocumentBucket", check_bucket, import_bucket},
                                                  {"RevisionTag", NULL, import_tag},
                                                  {"Validation", NULL, import_validation}},
                                                 export_documents};
