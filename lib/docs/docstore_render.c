/* docstore_render.c: a revision's rendered documents: loading, rendering, schema validation,
 * the per-worker cache of rendered revisions, and the filters applied after rendering. */
#include "docs/docstore_private.h"

#include "base/json_text.h"
#include "base/lru.h"
#include "codec/jsonmask.h"
#include "codec/jsonschema.h"
#include "codec/yaml_codec.h"
#include "docs/dataschema.h"
#include "docs/render.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void decref_cleanup(void *value)
{
    json_decref(value);
}

void docstore_release_later(const struct docstore_ctx *ctx, json_t *value)
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
    struct store_value p[] = {STORE_INT(ctx->org_id), STORE_INT(id), STORE_INT(id)};
    struct store_rows rows;
    json_error_t jerr;
    int rc = store_query(ctx->store, ctx->arena, &rows,
                         "SELECT c.schema_name, c.metadata, c.data FROM doc_revision_documents m"
                         " JOIN doc_contents c ON c.id = m.content_id WHERE m.org_id = ? AND"
                         " m.revision_id < ? AND m.schema_name LIKE 'deckhand/LayeringPolicy/%'"
                         " ORDER BY LEAST(m.until_revision, ?) DESC LIMIT 1",
                         p, 3, err);
    if (rc || rows.count == 0)
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

/* The steps of at a failure may name in a document whose data mask marks (render.h), as
 * "$.a[0]" into out: down to the first value marked whole (its own key a redaction shows too,
 * not those under it). 1 when steps were left out. */
static int told_path(const json_t *mask, const struct jsonpath *at, struct buf *out)
{
    const json_t *m = mask;
    int rc = buf_adds(out, "$");
    for (size_t i = 0; !rc && i < jsonpath_length(at); i++) {
        size_t index;
        const char *key = jsonpath_step(at, i, &index);
        char name[24];
        if (json_is_true(m))
            return 1;
        snprintf(name, sizeof(name), "%zu", index);
        rc = !key                      ? buf_printf(out, "[%zu]", index)
             : !strpbrk(key, ".[]'\"") ? buf_printf(out, ".%s", key)
             : strchr(key, '\'')       ? buf_printf(out, ".\"%s\"", key)
                                       : buf_printf(out, ".'%s'", key);
        m = json_is_object(m) ? json_object_get(m, key ? key : name) : NULL;
    }
    return 0;
}

/* failure as it may be told of a document whose data mask marks (render.h), against a
 * DataSchema that is encrypted or not (sealed): a new reference. The validator quotes the
 * schema and, for additionalProperties (a key) and uniqueItems, the value; never a secret's:
 * its path stops where a secret starts (told_path), and its message is DOCSTORE_SECRET_VALUE when
 * that cut the path or would name a marked value's key; against an encrypted DataSchema, nothing
 * but DOCSTORE_SECRET_SCHEMA. */
static json_t *told_failure(const json_t *failure, const json_t *mask, int sealed)
{
    const char *path = str(json_object_get(failure, "path"));
    const char *schema_path = str(json_object_get(failure, "schema_path"));
    const char *keyword = strrchr(schema_path, '/');
    struct jsonpath *at = NULL;
    struct buf told = BUF_INIT;
    json_t *out;
    int quiet;
    if (sealed)
        return json_pack("{s:s, s:s, s:s}", "path", "$", "schema_path", "", "message",
                         DOCSTORE_SECRET_SCHEMA);
    if (!jsonmask_any(mask))
        return json_incref((json_t *)failure);
    if (jsonpath_compile(&at, *path ? path : "$", NULL)) /* (one it cannot follow: not told) */
        return json_pack("{s:s, s:s, s:s}", "path", "$", "schema_path", schema_path, "message",
                         DOCSTORE_SECRET_VALUE);
    keyword = keyword ? keyword + 1 : schema_path;
    quiet = told_path(mask, at, &told) ||
            ((!strcmp(keyword, "additionalProperties") || !strcmp(keyword, "uniqueItems")) &&
             jsonmask_get(mask, at));
    out = json_pack("{s:s, s:s, s:s}", "path", told.data ? buf_cstr(&told) : "$", "schema_path",
                    schema_path, "message",
                    quiet ? DOCSTORE_SECRET_VALUE : str(json_object_get(failure, "message")));
    buf_release(&told);
    jsonpath_free(at);
    return out;
}

/* The mask of rendered document i (secrets: the render's, or NULL: documents as they are,
 * an encrypted one marked whole). */
static const json_t *mask_of(const json_t *secrets, size_t i, const json_t *doc)
{
    const char *policy = str(json_object_get(json_object_get(doc, "metadata"), "storagePolicy"));
    if (secrets)
        return json_array_get(secrets, i);
    return strcmp(policy, "encrypted") == 0 ? json_true() : NULL;
}

/* The schemas of a revision: the built-in ones and its DataSchemas (sources); *sealed: the
 * names of the encrypted ones (a new object). */
static struct dataschema_set *schemas_of(const json_t *sources, json_t **sealed)
{
    struct dataschema_set *set = dataschema_set_new();
    const json_t *d;
    size_t i;
    *sealed = json_object();
    json_array_foreach (sources, i, d) {
        const json_t *meta = json_object_get(d, "metadata");
        const char *name = str(json_object_get(meta, "name"));
        if (!set || !*sealed ||
            !document_schema_is(str(json_object_get(d, "schema")), "deckhand/DataSchema"))
            continue;
        if (dataschema_set_add(set, name, json_object_get(d, "data")) ||
            (strcmp(str(json_object_get(meta, "storagePolicy")), "encrypted") == 0 &&
             json_object_set_new(*sealed, name, json_true()))) {
            dataschema_set_free(set);
            set = NULL;
        }
    }
    return set;
}

/* Metadata is not checked again: rendering never changes it, and every document's metadata
 * passed the metadata schemas (D001) when it was written. */
int docstore_check_rendered(const json_t *sources, const json_t *rendered, const json_t *secrets,
                            docstore_found_fn found, void *arg, struct purser_error *err)
{
    json_t *sealed = NULL;
    struct dataschema_set *set = schemas_of(sources, &sealed);
    json_t *failures = json_array();
    const json_t *doc;
    size_t i;
    int rc = set && failures && sealed ? 0 : purser_error_set(err, PURSER_EINTERNAL, "oom");

    json_array_foreach (rendered, i, doc) {
        struct dataschema_match m;
        struct purser_error compiling;
        struct docstore_found f = {.doc = doc, .match = &m};
        const json_t *data = json_object_get(doc, "data"), *failure;
        size_t j;
        if (rc)
            break;
        purser_error_clear(&compiling);
        if (dataschema_set_find(set, str(json_object_get(doc, "schema")), &m, &compiling)) {
            f.compiling = &compiling;
            f.sealed = m.dataschema && json_object_get(sealed, m.dataschema);
            rc = compiling.code == PURSER_EINTERNAL ? (*err = compiling, compiling.code)
                                                    : found(arg, &f, err);
            continue;
        }
        json_array_clear(failures);
        if (m.compiled)
            jsonschema_validate(m.compiled, data ? data : json_null(), failures, 10);
        f.sealed = m.dataschema && json_object_get(sealed, m.dataschema);
        json_array_foreach (failures, j, failure) {
            json_t *told = rc ? NULL : told_failure(failure, mask_of(secrets, i, doc), f.sealed);
            f.failure = told;
            if (!rc)
                rc = told ? found(arg, &f, err)
                          : purser_error_set(err, PURSER_EINTERNAL, "out of memory");
            json_decref(told);
        }
    }
    json_decref(failures);
    json_decref(sealed);
    dataschema_set_free(set);
    return rc;
}

/* What rendered-documents answers for failures: D002 messages, or the first schema that does
 * not compile. */
static int found_d002(void *arg, const struct docstore_found *f, struct purser_error *err)
{
    const char *schema = str(json_object_get(f->doc, "schema"));
    if (f->compiling)
        return purser_error_set(err, f->compiling->code, "the DataSchema for %s: %s", schema,
                                f->sealed ? "is encrypted, and does not compile"
                                          : f->compiling->message);
    return json_array_append_new(arg, schema_message(f->doc, f->failure, schema))
               ? purser_error_set(err, PURSER_EINTERNAL, "out of memory")
               : 0;
}

/* Validates every rendered document's data; *messages gets the D002 entries (NULL when
 * none). */
static int validate(const json_t *sources, const json_t *rendered, const json_t *secrets,
                    json_t **messages, struct purser_error *err)
{
    json_t *found = json_array();
    int rc = found ? docstore_check_rendered(sources, rendered, secrets, found_d002, found, err)
                   : purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    if (!rc && json_array_size(found)) {
        rc = purser_error_set(
            err, PURSER_EINVAL, "%zu rendered documents failed schema validation; the first: %s",
            json_array_size(found), str(json_object_get(json_array_get(found, 0), "message")));
        *messages = json_incref(found);
    }
    json_decref(found);
    return rc;
}

int docstore_render_load(const struct docstore_ctx *ctx, long long id, int with_yaml_head,
                         json_t **docs, json_t **fallback, struct purser_error *err)
{
    struct docstore_filter all = {.abstract = -1,
                                  .limit = -1,
                                  .with_yaml_head = with_yaml_head,
                                  .shared_values = 1}; /* (rendering only reads them) */
    int rc = docstore_documents(ctx, id, &all, docs, err), has_policy = 0;
    const json_t *d;
    size_t i;

    *fallback = NULL;
    if (!rc) {
        json_array_foreach (*docs, i, d)
            has_policy |=
                document_schema_is(str(json_object_get(d, "schema")), "deckhand/LayeringPolicy");
        if (!has_policy)
            *fallback = earlier_policy(ctx, id, err);
    }
    return rc;
}

/* Renders revision id and validates it: *out {documents, secrets} (a new reference). */
static int render_revision(const struct docstore_ctx *ctx, long long id, json_t **out,
                           json_t **messages, struct purser_error *err)
{
    json_t *docs = NULL, *rendered = NULL, *secrets = NULL, *fallback = NULL;
    int rc = docstore_render_load(ctx, id, 1, &docs, &fallback, err);

    *out = NULL;
    if (!rc) {
        rc = render_documents(docs, fallback, ctx->render_limits, &rendered, &secrets, err);
        if (!rc)
            rc = validate(docs, rendered, secrets, messages, err);
        if (!rc)
            *out = json_pack("{s:o, s:o}", "documents", rendered, "secrets", secrets);
        else {
            json_decref(rendered);
            json_decref(secrets);
        }
        json_decref(fallback);
        docstore_release_later(ctx, docs);
    }
    return rc;
}

char *docstore_render_key(const struct docstore_ctx *ctx, long long id, struct purser_error *err)
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

/* The documents the filter lets through, redacted when asked: the data of encrypted ones, and
 * in the others every value the render marked as coming from one (render_documents). */
static json_t *select_rendered(const json_t *cached, const struct docstore_filter *f, json_t *flags)
{
    const json_t *docs = json_object_get(cached, "documents");
    const json_t *secrets = json_object_get(cached, "secrets");
    json_t *out = json_array();
    size_t i;
    const json_t *doc;
    json_array_foreach (docs, i, doc) {
        const json_t *mask = json_array_get(secrets, i);
        json_t *copy;
        if (!passes(doc, f) || !docstore_page_matches(f->page, doc))
            continue;
        if (flags && json_array_append_new(flags, json_boolean(jsonmask_any(mask)))) {
            json_decref(out);
            return NULL;
        }
        if (!f->redact || !jsonmask_any(mask)) { /* as rendered: shared */
            json_array_append(out, (json_t *)doc);
            continue;
        }
        if (!(copy = docstore_redacted_copy(doc, mask)) || json_array_append_new(out, copy)) {
            json_decref(out);
            return NULL;
        }
    }
    return out;
}

int docstore_rendering(const struct docstore_ctx *ctx, long long id, const char *key, int keep,
                       json_t **out, json_t **messages, struct purser_error *err)
{
    int rc;

    if ((*out = docstore_cache_get(ctx, key)))
        return 0;
    rc = render_revision(ctx, id, out, messages, err);
    if (!rc) {
        if (ctx->render_cache && keep) /* (a rendering not kept is rendered again next time) */
            docstore_cache_put(ctx, key, *out);
    }
    return rc;
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
        if (!rc)
            rc = buf_adds(out, "---\n") ? purser_error_set(err, PURSER_EINTERNAL, "oom") : 0;
        if (rc)
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
           !f->bucket_count && !f->sort_count && !f->descending && f->limit < 0 && !f->redact &&
           !f->page;
}

int docstore_rendered_yaml(const struct docstore_ctx *ctx, long long id,
                           const struct docstore_filter *f, struct buf *out, json_t **messages,
                           struct purser_error *err)
{
    json_t *rendered = NULL, *selected;
    char *key = docstore_render_key(ctx, id, err), *whole_key = NULL;
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
    /* a page of the documents as they lie reads only its own from the cache */
    if ((rc = docstore_cache_page(ctx, key, f, &selected)) < 0)
        return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    if (rc) {
        rc = emit_rendered(out, selected, err);
        docstore_release_later(ctx, selected);
        return rc;
    }
    rc = docstore_rendering(ctx, id, key, !whole_key, &rendered, messages, err);
    if (!rc) {
        selected = select_rendered(rendered, f, NULL);
        docstore_release_later(ctx, rendered);
        if (!selected || docstore_sort_json(selected, f) ||
            (f->page && docstore_page_slice(selected, f->page)))
            rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
        else
            rc = emit_rendered(out, selected, err);
        if (!rc && whole_key)
            lru_put(ctx->render_cache, whole_key, out->data ? out->data : "", out->len, time(NULL));
        docstore_release_later(ctx, selected);
    }
    return rc;
}

int docstore_rendered_marked(const struct docstore_ctx *ctx, long long id,
                             const struct docstore_filter *f, struct buf *out, json_t **secrets,
                             struct purser_error *err)
{
    json_t *rendered = NULL, *messages = NULL, *selected = NULL;
    char *key = docstore_render_key(ctx, id, err);
    int rc = key ? docstore_rendering(ctx, id, key, 1, &rendered, &messages, err) : err->code;

    *secrets = NULL;
    json_decref(messages);
    if (!rc && !(*secrets = json_array()))
        rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    if (!rc && !(selected = select_rendered(rendered, f, *secrets)))
        rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    if (!rc)
        rc = emit_rendered(out, selected, err);
    json_decref(selected);
    json_decref(rendered);
    return rc;
}

/* ---- deepdiff ---- */
