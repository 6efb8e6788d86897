/* docstore_render.c: a revision's rendered documents: loading, rendering, schema validation,
 * the per-worker cache of rendered revisions, and the filters applied after rendering. */
#include "docs/docstore_private.h"

#include "base/json_text.h"
#include "base/lru.h"
#include "codec/jsondiff.h"
#include "codec/jsonpath.h"
#include "codec/jsonschema.h"
#include "codec/yaml_codec.h"
#include "docs/render.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The schemas purser knows without a DataSchema: the data of Deckhand's own kinds. */
static const struct {
    const char *kind;
    const char *schema;
} builtin[] = {
    {"deckhand/Certificate", "{\"type\":\"string\"}"},
    {"deckhand/CertificateKey", "{\"type\":\"string\"}"},
    {"deckhand/CertificateAuthority", "{\"type\":\"string\"}"},
    {"deckhand/CertificateAuthorityKey", "{\"type\":\"string\"}"},
    {"deckhand/PrivateKey", "{\"type\":\"string\"}"},
    {"deckhand/PublicKey", "{\"type\":\"string\"}"},
    {"deckhand/Passphrase", "{\"type\":\"string\"}"},
    {"deckhand/LayeringPolicy",
     "{\"type\":\"object\",\"required\":[\"layerOrder\"],\"properties\":{\"layerOrder\":"
     "{\"type\":\"array\",\"items\":{\"type\":\"string\"}}}}"},
    {"deckhand/ValidationPolicy",
     "{\"type\":\"object\",\"required\":[\"validations\"],\"properties\":{\"validations\":"
     "{\"type\":\"array\",\"items\":{\"type\":\"object\",\"required\":[\"name\"],\"properties\":"
     "{\"name\":{\"type\":\"string\"},\"expiresAfter\":{\"type\":\"string\"}}}}}}"},
    {"deckhand/DataSchema", "{\"type\":\"object\"}"},
};

static void decref_cleanup(void *value)
{
    json_decref(value);
}

/* Releases value with the request's arena, after the answer is out (large renders take a
 * while to free). */
static void release_later(const struct docstore_ctx *ctx, json_t *value)
{
    if (value && arena_add_cleanup(ctx->arena, decref_cleanup, value))
        json_decref(value);
}

static const char *str(const json_t *v)
{
    return json_is_string(v) ? json_string_value(v) : "";
}

/* The LayeringPolicy of the latest earlier revision holding one, or NULL. */
static json_t *earlier_policy(const struct docstore_ctx *ctx, long long id,
                              struct purser_error *err)
{
    struct store_value p[] = {STORE_INT(ctx->org_id), STORE_INT(id)};
    struct store_rows rows;
    json_error_t jerr;
    if (store_query(ctx->store, ctx->arena, &rows,
                    "SELECT c.schema_name, c.metadata, c.data FROM doc_revision_documents m"
                    " JOIN doc_contents c ON c.id = m.content_id WHERE m.org_id = ? AND"
                    " m.revision_id < ? AND m.schema_name LIKE 'deckhand/LayeringPolicy/%'"
                    " ORDER BY m.revision_id DESC LIMIT 1",
                    p, 2, err) ||
        rows.count == 0)
        return NULL;
    return json_pack("{s:s, s:o, s:o}", "schema", store_cell(&rows, 0, 0), "metadata",
                     json_loads(store_cell(&rows, 0, 1), 0, &jerr), "data",
                     json_loads(store_cell(&rows, 0, 2), JSON_DECODE_ANY, &jerr));
}

static json_t *schema_message(const json_t *doc, const json_t *failure, const char *against)
{
    char message[PURSER_ERROR_MESSAGE_SIZE + 128];
    const json_t *meta = json_object_get(doc, "metadata");
    snprintf(message, sizeof(message), "%s %s: %s (schema %s, path %s)",
             str(json_object_get(failure, "path")), str(json_object_get(failure, "message")),
             against, str(json_object_get(failure, "schema_path")),
             str(json_object_get(failure, "path")));
    return document_message(
        "D002", message, str(json_object_get(doc, "schema")), str(json_object_get(meta, "name")),
        str(json_object_get(json_object_get(meta, "layeringDefinition"), "layer")));
}

/* The compiled schema for a document's schema name: its DataSchema (by name, or by name
 * without the version), else a built-in one; NULL when none applies. */
static struct jsonschema *schema_for(json_t *compiled, const json_t *docs, const char *schema,
                                     struct purser_error *err)
{
    json_t *cached = json_object_get(compiled, schema);
    const json_t *d, *source = NULL;
    size_t i;
    if (cached)
        return json_is_null(cached) ? NULL : (struct jsonschema *)json_integer_value(cached);
    json_array_foreach (docs, i, d) {
        const char *name = str(json_object_get(json_object_get(d, "metadata"), "name"));
        size_t n = strlen(name);
        if (document_schema_is(str(json_object_get(d, "schema")), "deckhand/DataSchema") &&
            (strcmp(name, schema) == 0 || (strncmp(schema, name, n) == 0 && schema[n] == '/')))
            source = json_object_get(d, "data");
    }
    for (i = 0; !source && i < sizeof(builtin) / sizeof(builtin[0]); i++)
        if (document_schema_is(schema, builtin[i].kind)) {
            json_error_t jerr;
            json_t *s = json_loads(builtin[i].schema, 0, &jerr);
            struct jsonschema *c = NULL;
            if (s && !jsonschema_compile(&c, s, err))
                json_object_set_new(compiled, schema, json_integer((json_int_t)(intptr_t)c));
            json_decref(s);
            return c;
        }
    if (!source) {
        json_object_set_new(compiled, schema, json_null());
        return NULL;
    }
    {
        struct jsonschema *c = NULL;
        if (jsonschema_compile(&c, (json_t *)source, err))
            return NULL;
        json_object_set_new(compiled, schema, json_integer((json_int_t)(intptr_t)c));
        return c;
    }
}

static void free_compiled(json_t *compiled)
{
    const char *key;
    json_t *v;
    json_object_foreach (compiled, key, v) {
        if (json_is_integer(v))
            jsonschema_free((struct jsonschema *)(intptr_t)json_integer_value(v));
    }
    json_decref(compiled);
}

/* Validates every rendered document's data; *messages gets the D002 entries (NULL when
 * none). Metadata is not checked again: rendering never changes it, and every document's
 * metadata passed the metadata schemas (D001) when it was written. */
static int validate(const json_t *sources, const json_t *rendered, json_t **messages,
                    struct purser_error *err)
{
    json_t *compiled = json_object(), *found = json_array();
    struct purser_error compiling;
    const json_t *doc;
    size_t i;
    int rc = 0;

    if (!compiled || !found)
        rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    json_array_foreach (rendered, i, doc) {
        const char *schema = str(json_object_get(doc, "schema"));
        struct jsonschema *s;
        json_t *failures = json_array();
        size_t j;
        const json_t *f;
        if (rc)
            break;
        purser_error_clear(&compiling);
        if ((s = schema_for(compiled, sources, schema, &compiling)))
            jsonschema_validate(
                s, json_object_get(doc, "data") ? json_object_get(doc, "data") : json_null(),
                failures, 10);
        else if (compiling.code != PURSER_OK)
            rc = purser_error_set(err, compiling.code, "the DataSchema for %s: %s", schema,
                                  compiling.message);
        json_array_foreach (failures, j, f)
            json_array_append_new(found, schema_message(doc, f, schema));
        json_decref(failures);
    }
    if (!rc && json_array_size(found)) {
        rc = purser_error_set(
            err, PURSER_EINVAL, "%zu rendered documents failed schema validation; the first: %s",
            json_array_size(found), str(json_object_get(json_array_get(found, 0), "message")));
        *messages = json_incref(found);
    }
    json_decref(found);
    free_compiled(compiled);
    return rc;
}

/* Renders revision id and validates it: *out {documents, secrets} (a new reference). */
static int render_revision(const struct docstore_ctx *ctx, long long id, json_t **out,
                           json_t **messages, struct purser_error *err)
{
    struct docstore_filter all = {.abstract = -1,
                                  .limit = -1,
                                  .with_yaml_head = 1,
                                  .shared_values = 1}; /* (rendering only reads them) */
    json_t *docs = NULL, *rendered = NULL, *secrets = NULL, *fallback = NULL;
    int rc = docstore_documents(ctx, id, &all, &docs, err);
    size_t i;
    const json_t *d;
    int has_policy = 0;

    *out = NULL;
    if (rc)
        return rc;
    json_array_foreach (docs, i, d)
        has_policy |=
            document_schema_is(str(json_object_get(d, "schema")), "deckhand/LayeringPolicy");
    if (!has_policy)
        fallback = earlier_policy(ctx, id, err);
    rc = render_documents(docs, fallback, ctx->render_limits, &rendered, &secrets, err);
    if (!rc)
        rc = validate(docs, rendered, messages, err);
    if (!rc)
        *out = json_pack("{s:o, s:o}", "documents", rendered, "secrets", secrets);
    else {
        json_decref(rendered);
        json_decref(secrets);
    }
    json_decref(fallback);
    release_later(ctx, docs);
    return rc;
}

/* The cache key: organization, revision, its creation time, who may see secrets. */
static char *cache_key(const struct docstore_ctx *ctx, long long id, struct purser_error *err)
{
    struct store_value p[] = {STORE_INT(ctx->org_id), STORE_INT(id)};
    struct store_rows rows;
    if (store_query(ctx->store, ctx->arena, &rows,
                    "SELECT DATE_FORMAT(created_at, '%Y%m%d%H%i%s%f') FROM doc_revisions"
                    " WHERE org_id = ? AND id = ?",
                    p, 2, err))
        return NULL;
    if (rows.count == 0) {
        purser_error_set(err, PURSER_ENOTFOUND, "The requested revision=%lld was not found.", id);
        return NULL;
    }
    return arena_sprintf(ctx->arena, "rendered/%lld/%lld/%s/%d", ctx->org_id, id,
                         store_cell(&rows, 0, 0), ctx->read_encrypted);
}

static int matches_schema(const char *schema, const char *want)
{
    size_t n = strlen(want);
    return strncmp(schema, want, n) == 0 && (schema[n] == '\0' || schema[n] == '/');
}

static int any_equal(const char *value, const char **list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(value, list[i]) == 0)
            return 1;
    return !n;
}

static int passes(const json_t *doc, const struct docstore_filter *f)
{
    const json_t *meta = json_object_get(doc, "metadata");
    const char *schema = str(json_object_get(doc, "schema"));
    size_t i, ok = !f->schema_count;
    for (i = 0; i < f->schema_count; i++)
        ok |= matches_schema(schema, f->schemas[i]);
    if (!ok || !any_equal(str(json_object_get(meta, "name")), f->names, f->name_count) ||
        !any_equal(str(json_object_get(json_object_get(meta, "layeringDefinition"), "layer")),
                   f->layers, f->layer_count) ||
        !any_equal(str(json_object_get(json_object_get(doc, "status"), "bucket")), f->buckets,
                   f->bucket_count))
        return 0;
    for (i = 0; i < f->label_count; i++) {
        const char *eq = strchr(f->labels[i], '=');
        const json_t *have;
        char key[256];
        snprintf(key, sizeof(key), "%.*s", eq ? (int)(eq - f->labels[i]) : 0, f->labels[i]);
        have = json_object_get(json_object_get(meta, "labels"), key);
        if (!eq || !have) {
            return 0;
        } else {
            char *text = yaml_codec_key_text(have);
            int same = text && strcmp(text, eq + 1) == 0;
            free(text);
            if (!same)
                return 0;
        }
    }
    return 1;
}

/* The documents the filter lets through, encrypted data redacted when asked. */
static json_t *select_rendered(const json_t *cached, const struct docstore_filter *f)
{
    const json_t *docs = json_object_get(cached, "documents");
    const json_t *secrets = json_object_get(cached, "secrets");
    json_t *out = json_array();
    size_t i;
    const json_t *doc;
    json_array_foreach (docs, i, doc) {
        json_t *copy;
        const json_t *paths = json_array_get(secrets, i), *p;
        size_t j;
        int sealed;
        if (!passes(doc, f))
            continue;
        sealed = f->redact &&
                 strcmp(str(json_object_get(json_object_get(doc, "metadata"), "storagePolicy")),
                        "encrypted") == 0;
        if (!sealed && !(f->redact && json_array_size(paths))) { /* as rendered: shared */
            json_array_append(out, (json_t *)doc);
            continue;
        }
        copy = json_copy((json_t *)doc);
        if (sealed)
            json_object_set_new(copy, "data", json_string(REDACTED));
        else {
            json_t *data = json_deep_copy(json_object_get(doc, "data"));
            json_array_foreach (paths, j, p) {
                struct jsonpath *path = NULL;
                if (!jsonpath_compile(&path, str(p), NULL))
                    jsonpath_set(path, &data, json_string(REDACTED), NULL);
                jsonpath_free(path);
            }
            json_object_set_new(copy, "data", data);
        }
        json_array_append_new(out, copy);
    }
    return out;
}

/* The rendered revision {documents, secrets} under cache key (cache_key: it also proves the
 * revision exists), from the cache or rendered now (a new reference); keep: put it in the
 * cache (an unfiltered answer keeps its YAML instead). */
static int rendered_revision(const struct docstore_ctx *ctx, long long id, const char *key,
                             int keep, json_t **out, json_t **messages, struct purser_error *err)
{
    const char *hit;
    size_t hit_len = 0;
    json_error_t jerr;
    int rc;

    *out = NULL;
    hit = ctx->render_cache ? lru_get(ctx->render_cache, key, &hit_len, time(NULL)) : NULL;
    if (hit && (*out = json_loadb(hit, hit_len, 0, &jerr)))
        return 0;
    if ((rc = render_revision(ctx, id, out, messages, err)))
        return rc;
    if (ctx->render_cache && keep) {
        char *text = json_text(*out, JSON_COMPACT);
        if (text)
            lru_put(ctx->render_cache, key, text, strlen(text), time(NULL));
        free(text);
    }
    return 0;
}

/* The YAML of rendered documents: the stored schema and metadata lines when there are (the
 * rendering changed only data), then data and status emitted now. */
static int emit_rendered(struct buf *out, const json_t *docs, struct purser_error *err)
{
    const json_t *doc;
    size_t i;
    int rc = 0;
    json_array_foreach (docs, i, doc) {
        const json_t *head = json_object_get(doc, DOCSTORE_YAML_HEAD);
        const json_t *status = json_object_get(doc, "status");
        if (rc ||
            (rc = buf_adds(out, "---\n") ? purser_error_set(err, PURSER_EINTERNAL, "oom") : 0))
            break;
        if (head)
            rc = buf_add(out, json_string_value(head), json_string_length(head))
                     ? purser_error_set(err, PURSER_EINTERNAL, "out of memory")
                     : document_data_yaml(out, json_object_get(doc, "data"), err);
        else
            rc = document_yaml(out, str(json_object_get(doc, "schema")),
                               json_object_get(doc, "metadata"), json_object_get(doc, "data"), err);
        if (!rc)
            rc = document_status_yaml(out, str(json_object_get(status, "bucket")),
                                      json_integer_value(json_object_get(status, "revision")), err);
    }
    return rc;
}

/* A request for every rendered document as it is: its YAML can be kept whole. */
static int unfiltered(const struct docstore_filter *f)
{
    return !f->schema_count && !f->name_count && !f->layer_count && !f->label_count &&
           !f->bucket_count && !f->sort_count && !f->descending && f->limit < 0 && !f->redact;
}

int docstore_rendered_yaml(const struct docstore_ctx *ctx, long long id,
                           const struct docstore_filter *f, struct buf *out, json_t **messages,
                           struct purser_error *err)
{
    json_t *rendered = NULL, *selected;
    char *key = cache_key(ctx, id, err), *whole_key = NULL;
    int rc;

    *messages = NULL;
    if (!key)
        return err->code;
    if (ctx->render_cache && unfiltered(f)) {
        const char *hit;
        size_t len = 0;
        if (!(whole_key = arena_concat(ctx->arena, key, "/yaml", (const char *)NULL)))
            return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
        if ((hit = lru_get(ctx->render_cache, whole_key, &len, time(NULL))))
            return buf_add(out, hit, len) ? purser_error_set(err, PURSER_EINTERNAL, "oom") : 0;
    }
    if ((rc = rendered_revision(ctx, id, key, !whole_key, &rendered, messages, err)))
        return rc;
    selected = select_rendered(rendered, f);
    release_later(ctx, rendered);
    if (!selected || docstore_sort_json(selected, f))
        rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    else
        rc = emit_rendered(out, selected, err);
    if (!rc && whole_key)
        lru_put(ctx->render_cache, whole_key, out->data ? out->data : "", out->len, time(NULL));
    release_later(ctx, selected);
    return rc;
}

/* ---- deepdiff ---- */

/* {bucket: {"('schema', 'name')": document}} of a rendered revision (empty for 0). */
static int rendered_buckets(const struct docstore_ctx *ctx, long long id, json_t **out,
                            json_t **messages, struct purser_error *err)
{
    json_t *rendered = NULL;
    const json_t *doc;
    size_t i;
    char *cached_as = id ? cache_key(ctx, id, err) : NULL;
    int rc = id && !cached_as ? err->code : 0;
    if (!rc && id)
        rc = rendered_revision(ctx, id, cached_as, 1, &rendered, messages, err);
    *out = rc ? NULL : json_object();
    json_array_foreach (json_object_get(rendered, "documents"), i, doc) {
        const char *bucket = str(json_object_get(json_object_get(doc, "status"), "bucket"));
        char key[2 * DOCUMENT_NAME_MAX + 16];
        json_t *b = json_object_get(*out, bucket);
        if (!b)
            json_object_set_new(*out, bucket, b = json_object());
        snprintf(key, sizeof(key), "('%s', '%s')", str(json_object_get(doc, "schema")),
                 str(json_object_get(json_object_get(doc, "metadata"), "name")));
        json_object_set(b, key, (json_t *)doc);
    }
    json_decref(rendered);
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
    if ((rc = rendered_buckets(ctx, a, &older, messages, err)) ||
        (rc = rendered_buckets(ctx, b, &newer, messages, err))) {
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
