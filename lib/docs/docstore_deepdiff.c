/* docstore_deepdiff.c: the deepdiff of two rendered revisions (Deckhand's shape), the values
 * that came from encrypted documents redacted. */
#include "docs/docstore_private.h"

#include "codec/jsondiff.h"
#include "codec/jsonmask.h"

#include <stdio.h>
#include <string.h>

static const char *str(const json_t *v)
{
    return json_is_string(v) ? json_string_value(v) : "";
}

/* doc with the values mask marks redacted in its data, the data as rendered kept under
 * DOCSTORE_CLEAR_DATA (a new reference; NULL when out of memory). */
static json_t *marked_copy(const json_t *doc, const json_t *mask)
{
    json_t *copy = json_copy((json_t *)doc);
    json_t *data = jsonmask_apply(json_object_get(doc, "data"), mask, REDACTED);
    if (!copy || !data || json_object_set_new(copy, "data", data) ||
        json_object_set(copy, DOCSTORE_CLEAR_DATA, json_object_get(doc, "data"))) {
        json_decref(copy);
        return NULL;
    }
    return copy;
}

/* {bucket: {"('schema', 'name')": document}} of a rendered revision (empty for 0), the values
 * that came from encrypted documents redacted (marked_copy). */
static int rendered_buckets(const struct docstore_ctx *ctx, long long id, json_t **out,
                            json_t **messages, struct purser_error *err)
{
    json_t *rendered = NULL;
    const json_t *doc;
    size_t i;
    char *cached_as = id ? docstore_render_key(ctx, id, err) : NULL;
    int rc = id && !cached_as ? err->code : 0;
    if (!rc && id)
        rc = docstore_rendering(ctx, id, cached_as, 1, &rendered, messages, err);
    *out = rc ? NULL : json_object();
    json_array_foreach (json_object_get(rendered, "documents"), i, doc) {
        const char *bucket = str(json_object_get(json_object_get(doc, "status"), "bucket"));
        char key[2 * DOCUMENT_NAME_MAX + 16];
        json_t *b = json_object_get(*out, bucket);
        if (!b)
            json_object_set_new(*out, bucket, b = json_object());
        const json_t *mask = json_array_get(json_object_get(rendered, "secrets"), i);
        json_t *entry = jsonmask_any(mask) ? marked_copy(doc, mask) : json_incref((json_t *)doc);
        snprintf(key, sizeof(key), "('%s', '%s')", str(json_object_get(doc, "schema")),
                 str(json_object_get(json_object_get(doc, "metadata"), "name")));
        if (!entry || json_object_set_new(b, key, entry)) {
            rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
            break;
        }
    }
    json_decref(rendered);
    if (rc) {
        json_decref(*out);
        *out = NULL;
    }
    return rc;
}

static json_t *key_pair(const json_t *doc)
{
    return json_pack("[s, s]", str(json_object_get(doc, "schema")),
                     str(json_object_get(json_object_get(doc, "metadata"), "name")));
}

/* How the documents of one bucket differ: added, deleted and changed documents. */
static json_t *bucket_details(const json_t *before, const json_t *after)
{
    json_t *out = json_object(), *added = json_array(), *deleted = json_array();
    json_t *changed = json_object();
    const char *key;
    json_t *doc;
    json_object_foreach ((json_t *)after, key, doc) {
        if (!json_object_get(before, key))
            json_array_append_new(added, key_pair(doc));
    }
    json_object_foreach ((json_t *)before, key, doc) {
        const json_t *now = json_object_get(after, key);
        int secret;
        if (!now) {
            json_array_append_new(deleted, key_pair(doc));
            continue;
        }
        if (json_equal(doc, (json_t *)now))
            continue;
        secret = strcmp(str(json_object_get(json_object_get(now, "metadata"), "storagePolicy")),
                        "encrypted") == 0;
        json_object_set_new(
            changed, key,
            json_pack(
                "{s:o, s:o}", "data_changed",
                secret ? json_pack("{s:b}", "encrypted", 1)
                       : jsondiff_deep(json_object_get(doc, "data"), json_object_get(now, "data")),
                "metadata_changed",
                jsondiff_deep(json_object_get(doc, "metadata"), json_object_get(now, "metadata"))));
    }
    if (json_array_size(added))
        json_object_set_new(
            out, "document_added",
            json_pack("{s:I, s:O}", "count", (json_int_t)json_array_size(added), "details", added));
    if (json_array_size(deleted))
        json_object_set_new(out, "document_deleted",
                            json_pack("{s:I, s:O}", "count", (json_int_t)json_array_size(deleted),
                                      "details", deleted));
    if (json_object_size(changed))
        json_object_set_new(out, "document_changed",
                            json_pack("{s:I, s:O}", "count", (json_int_t)json_object_size(changed),
                                      "details", changed));
    json_decref(added);
    json_decref(deleted);
    json_decref(changed);
    return out;
}

/* Documents compared without status (where a content first appeared is no change). */
static void drop_status(json_t *buckets)
{
    const char *bucket, *key;
    json_t *docs, *doc;
    json_object_foreach (buckets, bucket, docs) {
        json_object_foreach (docs, key, doc) {
            json_t *copy = json_copy(doc);
            json_object_del(copy, "status");
            json_object_del(copy, DOCSTORE_YAML_HEAD);
            json_object_set_new(docs, key, copy);
        }
    }
}

int docstore_deepdiff(const struct docstore_ctx *ctx, long long a, long long b, json_t **out,
                      json_t **messages, struct purser_error *err)
{
    json_t *older = NULL, *newer = NULL, *result;
    const char *bucket;
    json_t *docs;
    int rc;

    *out = NULL;
    *messages = NULL;
    if (a > b) {
        long long t = a;
        a = b;
        b = t;
    }
    rc = rendered_buckets(ctx, a, &older, messages, err);
    if (!rc)
        rc = rendered_buckets(ctx, b, &newer, messages, err);
    if (rc) {
        json_decref(older);
        return rc;
    }
    drop_status(older);
    drop_status(newer);
    result = json_object();
    json_object_foreach (newer, bucket, docs) {
        const json_t *before = json_object_get(older, bucket);
        if (!before)
            json_object_set_new(result, bucket, json_string("created"));
        else if (json_equal((json_t *)before, docs))
            json_object_set_new(result, bucket, json_string("unmodified"));
        else {
            char *label = arena_sprintf(ctx->arena, "%s diff", bucket);
            json_object_set_new(result, bucket, json_string("modified"));
            json_object_set_new(result, label, bucket_details(before, docs));
        }
    }
    json_object_foreach (older, bucket, docs) {
        if (!json_object_get(newer, bucket))
            json_object_set_new(result, bucket, json_string("deleted"));
    }
    json_decref(older);
    json_decref(newer);
    *out = result;
    return 0;
}
