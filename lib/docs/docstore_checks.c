/* docstore_checks.c: Deckhand's own validations of a revision, recorded as it is written (the
 * seed's "Deckhand-provided validations"): deckhand-schema-validation (its concrete documents,
 * layered and substituted, against their DataSchema or built-in schema) and
 * deckhand-policy-validation (each document's layer in the LayeringPolicy's layerOrder), entry
 * 0 of each with Deckhand's error entries. What they find is recorded; the write lands, as
 * Deckhand's does. */
#include "docs/docstore_private.h"

#include "base/json_text.h"
#include "docs/dataschema.h"

#include <stdlib.h>
#include <string.h>

/* One document of the revision, as the checks see it. */
struct checked {
    const char *schema, *layer, *name;
    int abstract, control;
};

/* Deckhand's control kinds: a carried row knows its schema, not its metadata schema. Each is
 * checked against its built-in schema by document_check when it is written. */
static int control_kind(const char *schema)
{
    return document_schema_is(schema, "deckhand/LayeringPolicy") ||
           document_schema_is(schema, "deckhand/ValidationPolicy") ||
           document_schema_is(schema, "deckhand/DataSchema");
}

/* The revision's documents: the payload's (not its Tombstones) and those carried. */
static struct checked *gather(struct arena *arena, struct item *const *items, size_t item_count,
                              const struct entry *carried, size_t carried_count, size_t *n)
{
    struct checked *out = arena_alloc(arena, (item_count + carried_count + 1) * sizeof(*out));
    *n = 0;
    for (size_t i = 0; out && i < item_count; i++) {
        const struct document *d = docstore_feed_item(items, i)->doc;
        if (d->kind != DOCUMENT_TOMBSTONE)
            out[(*n)++] = (struct checked){d->schema, d->layer, d->name, d->abstract,
                                           d->kind == DOCUMENT_CONTROL};
    }
    for (size_t i = 0; out && i < carried_count; i++) {
        const struct member *m = carried[i].member;
        out[(*n)++] =
            (struct checked){m->schema, m->layer, m->name, m->abstract, control_kind(m->schema)};
    }
    return out;
}

int docstore_check_error(json_t *errors, const char *schema, const char *name, const char *layer,
                         const char *path, const char *message, struct purser_error *err)
{
    json_t *e = json_pack("{s:s, s:s, s:s, s:s, s:s}", "schema", schema, "name", name, "layer",
                          layer, "path", path, "message", message ? message : "");
    return json_array_append_new(errors, e) ? purser_error_set(err, PURSER_EINTERNAL, "oom") : 0;
}

int docstore_check_more(json_t *errors, size_t more, struct purser_error *err)
{
    char message[128];
    if (!more)
        return 0;
    snprintf(message, sizeof(message), "%zu more failures are not listed (the first %d are)", more,
             DOCSTORE_CHECK_MAX_ERRORS);
    return docstore_check_error(errors, "", "", "", ".", message, err);
}

/* ---- deckhand-policy-validation ---- */

/* The layerOrder of the LayeringPolicy that applies to revision: its own, else the latest
 * earlier one's (as rendering takes it). *order: a new value, NULL when there is none. */
static int layer_order(struct write *w, json_t **order, const char **policy,
                       struct purser_error *err)
{
    struct store_value p[] = {STORE_INT(w->ctx->org_id), STORE_INT(w->revision),
                              STORE_INT(w->revision)};
    struct store_rows rows;
    json_error_t jerr;
    json_t *data;
    int rc = docstore_query(w->ctx, &rows,
                            "SELECT m.name, c.data FROM doc_revision_documents m JOIN doc_contents"
                            " c ON c.id = m.content_id WHERE m.org_id = ? AND m.revision_id <= ?"
                            " AND m.schema_name LIKE 'deckhand/LayeringPolicy/%'"
                            " ORDER BY LEAST(m.until_revision, ? + 1) DESC, m.name LIMIT 1",
                            p, 3, err);
    *order = NULL;
    if (rc || rows.count == 0)
        return rc;
    *policy = store_cell(&rows, 0, 0);
    data = json_loadb(store_cell(&rows, 0, 1), rows.lengths[1], JSON_DECODE_ANY, &jerr);
    if (json_is_array(json_object_get(data, "layerOrder")))
        *order = json_incref(json_object_get(data, "layerOrder"));
    json_decref(data);
    return 0;
}

static int in_order(const json_t *order, const char *layer)
{
    const json_t *l;
    size_t i;
    json_array_foreach (order, i, l)
        if (json_is_string(l) && strcmp(json_string_value(l), layer) == 0)
            return 1;
    return 0;
}

static int identity_order(const void *a, const void *b)
{
    const struct checked *x = *(const struct checked *const *)a;
    const struct checked *y = *(const struct checked *const *)b;
    return document_identity_compare(x->schema, x->name, x->layer, y->schema, y->name, y->layer);
}

/* The documents that name a layer not in order (NULL: any layer), in identity order (arena
 * memory). */
static const struct checked **misplaced(struct arena *arena, const struct checked *docs, size_t n,
                                        const json_t *order, size_t *count)
{
    const struct checked **out = arena_alloc(arena, (n + 1) * sizeof(*out));
    *count = 0;
    for (size_t i = 0; out && i < n; i++)
        if (!docs[i].control && docs[i].layer[0] && (!order || !in_order(order, docs[i].layer)))
            out[(*count)++] = &docs[i];
    if (out)
        qsort(out, *count, sizeof(*out), identity_order);
    return out;
}

/* Every document that names a layer must find it in the LayeringPolicy's layerOrder, and
 * there must be a LayeringPolicy to find it in (rendering answers 400 and 409 otherwise). */
static int check_layers(struct write *w, const struct checked *docs, size_t n, json_t *errors,
                        struct purser_error *err)
{
    struct arena *arena = w->ctx->arena;
    const struct checked **bad;
    const char *policy = "";
    json_t *order = NULL;
    size_t count = 0, i;
    int rc = 0;

    for (i = 0; i < n && (docs[i].control || !docs[i].layer[0]); i++)
        ;
    if (i == n) /* none names a layer */
        return 0;
    if ((rc = layer_order(w, &order, &policy, err)))
        return rc;
    if (!(bad = misplaced(arena, docs, n, order, &count)))
        rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    for (i = 0; !rc && i < count && i < DOCSTORE_CHECK_MAX_ERRORS; i++) {
        const struct checked *d = bad[i];
        const char *message =
            order ? arena_sprintf(arena,
                                  "Invalid layer '%s' for document [%s] %s was not found in "
                                  "layerOrder for the LayeringPolicy %s.",
                                  d->layer, d->schema, d->name, policy)
                  : arena_sprintf(arena,
                                  "Required LayeringPolicy was not found for layering: document "
                                  "[%s] %s names the layer '%s', and no LayeringPolicy orders "
                                  "it.",
                                  d->schema, d->name, d->layer);
        rc = docstore_check_error(errors, d->schema, d->name, d->layer,
                                  ".metadata.layeringDefinition.layer", message, err);
    }
    if (!rc)
        rc = docstore_check_more(errors, count > i ? count - i : 0, err);
    json_decref(order);
    return rc;
}

/* ---- deckhand-schema-validation ---- */

/* The schemas of the concrete documents that have a schema to pass (a built-in one, or a
 * DataSchema of the revision) that document_check has not already held them to, each once
 * (*out, arena memory, *count of them): only those documents are checked. */
static int schemas_to_check(struct arena *arena, const struct checked *docs, size_t n,
                            const char ***out, size_t *count, size_t *documents,
                            struct purser_error *err)
{
    struct dataschema_set *names = dataschema_set_new();
    json_t *seen = json_object();
    int ok = names && seen && (*out = arena_alloc(arena, (n + 1) * sizeof(**out)));
    *count = *documents = 0;
    for (size_t i = 0; ok && i < n; i++)
        if (document_schema_is(docs[i].schema, "deckhand/DataSchema"))
            ok = !dataschema_set_add(names, docs[i].name, NULL);
    for (size_t i = 0; ok && i < n; i++) {
        const char *schema = docs[i].schema;
        if (docs[i].abstract || control_kind(schema) || !dataschema_set_applies(names, schema))
            continue;
        ++*documents;
        if (json_object_get(seen, schema))
            continue;
        ok = !json_object_set_new_nocheck(seen, schema, json_true());
        (*out)[(*count)++] = schema;
    }
    dataschema_set_free(names);
    json_decref(seen);
    return ok ? 0 : purser_error_set(err, PURSER_EINTERNAL, "out of memory");
}

static int check_schemas(struct write *w, const struct checked *docs, size_t n, json_t **errors,
                         struct purser_error *err)
{
    struct docstore_ctx reader = *w->ctx;
    const char **schemas = NULL;
    size_t count = 0, documents = 0;
    int rc = schemas_to_check(w->ctx->arena, docs, n, &schemas, &count, &documents, err);
    *errors = NULL;
    if (rc)
        return rc;
    if (!count)
        return (*errors = json_array()) ? 0 : purser_error_set(err, PURSER_EINTERNAL, "oom");
    /* every document counts, the encrypted ones too (what is recorded never quotes a value) */
    reader.read_encrypted = reader.keyring != NULL;
    /* when most of the revision is to be checked, some of it surely needs rendering: it is read
     * once, whole, rather than its checked part first */
    return docstore_render_check(&reader, w->revision, 4 * documents <= n ? schemas : NULL, count,
                                 errors, err);
}

/* ---- recording ---- */

static int record(struct write *w, const json_t *schema_errors, const json_t *policy_errors,
                  struct purser_error *err)
{
    char *schema_text = json_text(schema_errors, JSON_COMPACT);
    char *policy_text = json_text(policy_errors, JSON_COMPACT);
    struct store_value org = STORE_INT(w->ctx->org_id), rev = STORE_INT(w->revision);
    int rc;
    if (!schema_text || !policy_text) {
        rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    } else {
        struct store_value p[] = {org,
                                  rev,
                                  STORE_STR(json_array_size(policy_errors) ? "failure" : "success"),
                                  STORE_STR(policy_text),
                                  org,
                                  rev,
                                  STORE_STR(json_array_size(schema_errors) ? "failure" : "success"),
                                  STORE_STR(schema_text)};
        rc = docstore_exec(w->ctx,
                           "INSERT INTO doc_validations (org_id, revision_id, name, entry_id,"
                           " status, validator, errors) VALUES"
                           " (?, ?, 'deckhand-policy-validation', 0, ?,"
                           " '{\"name\":\"deckhand\",\"version\":\"1.0\"}', ?),"
                           " (?, ?, 'deckhand-schema-validation', 0, ?,"
                           " '{\"name\":\"deckhand\",\"version\":\"1.0\"}', ?)",
                           p, 8, NULL, err);
    }
    free(schema_text);
    free(policy_text);
    return rc;
}

int docstore_record_checks(struct write *w, struct item *const *items, size_t item_count,
                           const struct entry *carried, size_t carried_count,
                           struct purser_error *err)
{
    size_t n = 0;
    struct checked *docs = gather(w->ctx->arena, items, item_count, carried, carried_count, &n);
    json_t *policy_errors = json_array(), *schema_errors = NULL;
    int rc = docs && policy_errors ? 0 : purser_error_set(err, PURSER_EINTERNAL, "out of memory");

    if (!rc)
        rc = check_layers(w, docs, n, policy_errors, err);
    if (!rc)
        rc = check_schemas(w, docs, n, &schema_errors, err);
    if (!rc)
        rc = record(w, schema_errors, policy_errors, err);
    json_decref(policy_errors);
    json_decref(schema_errors);
    return rc;
}
