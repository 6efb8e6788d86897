/* docstore_checks.c: Deckhand's own validations of a revision, recorded as it is written (the
 * seed's "Deckhand-provided validations"): deckhand-schema-validation (its concrete documents,
 * layered and substituted, against their DataSchema or built-in schema) and
 * deckhand-policy-validation (each document's layer in the LayeringPolicy's layerOrder), entry
 * 0 of each with Deckhand's error entries. What they find is recorded; the write lands, as
 * Deckhand's does. */
#include "docs/docstore_private.h"

#include "base/json_text.h"
#include "docs/dataschema.h"
#include "docs/render.h"

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

static const char *str(const json_t *v)
{
    return json_is_string(v) ? json_string_value(v) : "";
}

/* Appends to errors the entry {schema, name, layer, path, message}. */
static int check_error(json_t *errors, const char *schema, const char *name, const char *layer,
                       const char *path, const char *message, struct purser_error *err)
{
    json_t *e = json_pack("{s:s, s:s, s:s, s:s, s:s}", "schema", schema, "name", name, "layer",
                          layer, "path", path, "message", message ? message : "");
    return json_array_append_new(errors, e) ? purser_error_set(err, PURSER_EINTERNAL, "oom") : 0;
}

/* Appends to errors, when more is not 0, the note that more failures were not listed. */
static int check_more(json_t *errors, size_t more, struct purser_error *err)
{
    char message[128];
    if (!more)
        return 0;
    snprintf(message, sizeof(message), "%zu more failures are not listed (the first %d are)", more,
             DOCSTORE_CHECK_MAX_ERRORS);
    return check_error(errors, "", "", "", ".", message, err);
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
    if (!rc && rows.count > 0) {
        *policy = store_cell(&rows, 0, 0);
        data = json_loadb(store_cell(&rows, 0, 1), rows.lengths[1], JSON_DECODE_ANY, &jerr);
        if (json_is_array(json_object_get(data, "layerOrder")))
            *order = json_incref(json_object_get(data, "layerOrder"));
        json_decref(data);
    }
    return rc;
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
    rc = layer_order(w, &order, &policy, err);
    if (!rc) {
        if (!(bad = misplaced(arena, docs, n, order, &count)))
            rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
        for (i = 0; !rc && i < count && i < DOCSTORE_CHECK_MAX_ERRORS; i++) {
            const struct checked *d = bad[i];
            const char *message =
                order
                    ? arena_sprintf(arena,
                                    "Invalid layer '%s' for document [%s] %s was not found in "
                                    "layerOrder for the LayeringPolicy %s.",
                                    d->layer, d->schema, d->name, policy)
                    : arena_sprintf(arena,
                                    "Required LayeringPolicy was not found for layering: document "
                                    "[%s] %s names the layer '%s', and no LayeringPolicy orders "
                                    "it.",
                                    d->schema, d->name, d->layer);
            rc = check_error(errors, d->schema, d->name, d->layer,
                             ".metadata.layeringDefinition.layer", message, err);
        }
        if (!rc)
            rc = check_more(errors, count > i ? count - i : 0, err);
        json_decref(order);
    }
    return rc;
}

/* ---- deckhand-schema-validation: the revision's documents, rendered when they must be ---- */

/* "$.a[0]" (jsonschema's path into data) as Deckhand writes a path into the document:
 * ".data.a[0]"; "#/properties/a" (a schema path) as ".properties.a". In arena. */
static const char *deckhand_path(struct arena *arena, const char *prefix, const char *path)
{
    char *out =
        arena_concat(arena, prefix, path + (*path == '$' || *path == '#'), (const char *)NULL);
    for (char *c = out && *prefix == '\0' ? out : NULL; c && *c; c++)
        if (*c == '/')
            *c = '.';
    return out ? out : "";
}

/* What a write records of the failures: Deckhand's error entries (errors), each DataSchema
 * that does not compile once (broken), and how many failures were past the limit (more). */
struct recorded {
    struct arena *arena;
    json_t *errors, *broken;
    size_t more;
};

static json_t *failure_entry(struct arena *arena, const struct docstore_found *f)
{
    const json_t *meta = json_object_get(f->doc, "metadata");
    if (f->sealed) /* (nothing of the schema, nor where it fails) */
        return json_pack("{s:s, s:s, s:s, s:s, s:s}", "schema",
                         str(json_object_get(f->doc, "schema")), "name",
                         str(json_object_get(meta, "name")), "layer",
                         str(json_object_get(json_object_get(meta, "layeringDefinition"), "layer")),
                         "path", ".data", "message", DOCSTORE_SECRET_SCHEMA);
    return json_pack(
        "{s:s, s:s, s:s, s:s, s:s, s:s, s:O}", "schema", str(json_object_get(f->doc, "schema")),
        "name", str(json_object_get(meta, "name")), "layer",
        str(json_object_get(json_object_get(meta, "layeringDefinition"), "layer")), "path",
        deckhand_path(arena, ".data", str(json_object_get(f->failure, "path"))), "schema_path",
        deckhand_path(arena, "", str(json_object_get(f->failure, "schema_path"))), "message",
        str(json_object_get(f->failure, "message")), "validation_schema", f->match->source);
}

static json_t *broken_entry(const struct docstore_found *f)
{
    const char *name = f->match->dataschema;
    char message[PURSER_ERROR_MESSAGE_SIZE + 128];
    snprintf(message, sizeof(message),
             "the DataSchema %s is no valid JSON schema (%s): the documents it names are not "
             "checked",
             name, f->sealed ? "it is encrypted: why is not shown" : f->compiling->message);
    return json_pack("{s:s, s:s, s:s, s:s, s:s}", "schema", "deckhand/DataSchema/v1", "name", name,
                     "layer", "", "path", ".data", "message", message);
}

static int found_entry(void *arg, const struct docstore_found *f, struct purser_error *err)
{
    struct recorded *r = arg;
    json_t *e;
    if (f->compiling) { /* (a built-in schema always compiles) */
        if (!f->match->dataschema || json_object_get(r->broken, f->match->dataschema))
            return 0;
        json_object_set_new_nocheck(r->broken, f->match->dataschema, json_true());
    }
    if (json_array_size(r->errors) >= DOCSTORE_CHECK_MAX_ERRORS) {
        r->more++;
        return 0;
    }
    e = f->compiling ? broken_entry(f) : failure_entry(r->arena, f);
    return json_array_append_new(r->errors, e) ? purser_error_set(err, PURSER_EINTERNAL, "oom") : 0;
}

/* The concrete documents that render as they are (no parent to look for, no substitution, no
 * replacement): what can still be checked of a revision that does not render. */
static json_t *as_they_are(const json_t *docs)
{
    json_t *out = json_array();
    const json_t *d;
    size_t i;
    json_array_foreach (docs, i, d) {
        const json_t *meta = json_object_get(d, "metadata");
        const json_t *ld = json_object_get(meta, "layeringDefinition");
        if (!json_is_true(json_object_get(ld, "abstract")) &&
            !json_object_size(json_object_get(ld, "parentSelector")) &&
            !json_array_size(json_object_get(meta, "substitutions")) &&
            !json_is_true(json_object_get(meta, "replacement")))
            json_array_append(out, (json_t *)d);
    }
    return out;
}

/* Checks revision id rendered whole; a revision that does not render gets an entry saying
 * why, and its documents that render as they are are checked as they are. */
static int check_rendering(const struct docstore_ctx *ctx, long long id, struct recorded *r,
                           struct purser_error *err)
{
    json_t *docs = NULL, *rendered = NULL, *secrets = NULL, *fallback = NULL;
    struct purser_error why;
    int rc = docstore_render_load(ctx, id, 0, &docs, &fallback, err);

    purser_error_clear(&why);
    if (!rc &&
        (rc = render_documents(docs, fallback, ctx->render_limits, &rendered, &secrets, &why))) {
        if (why.code == PURSER_EINTERNAL)
            rc = purser_error_set(err, why.code, "%s", why.message);
        else
            rc = check_error(r->errors, "", "", "", ".",
                             arena_sprintf(ctx->arena,
                                           "the revision does not render, so only its "
                                           "documents that need no rendering are "
                                           "checked: %s",
                                           why.message),
                             err);
        if (!rc && !(rendered = as_they_are(docs)))
            rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    }
    if (!rc) /* (a rendering that failed: its documents as they are, encrypted ones marked) */
        rc =
            docstore_check_rendered(docs, rendered, why.code ? NULL : secrets, found_entry, r, err);
    /* a big revision takes a while to free: after the answer, not in the write's transaction */
    docstore_release_later(ctx, rendered);
    docstore_release_later(ctx, docs);
    json_decref(secrets);
    json_decref(fallback);
    return rc;
}

#define NARROW_SCHEMAS 100 /* schemas read by name (two bound values each), at most */

/* The revision's documents of schemas and its DataSchemas checked as they are, when every
 * concrete one of them renders as it is (*done: the whole check, without rendering). */
static int check_as_they_are(const struct docstore_ctx *ctx, long long id, const char **schemas,
                             size_t n, struct recorded *r, int *done, struct purser_error *err)
{
    const char **names =
        n <= NARROW_SCHEMAS ? arena_alloc(ctx->arena, (n + 1) * sizeof(*names)) : NULL;
    struct docstore_filter f = {
        .schemas = names, .schema_count = n + 1, .abstract = -1, .limit = -1, .shared_values = 1};
    json_t *docs = NULL, *plain = NULL;
    const json_t *d;
    size_t i, concrete = 0;
    int rc;

    *done = 0;
    if (!schemas || !names)
        return 0;
    memcpy(names, schemas, n * sizeof(*names));
    names[n] = "deckhand/DataSchema";
    rc = docstore_documents(ctx, id, &f, &docs, err);
    if (!rc) {
        json_array_foreach (docs, i, d)
            concrete += !json_is_true(json_object_get(
                json_object_get(json_object_get(d, "metadata"), "layeringDefinition"), "abstract"));
        if (!(plain = as_they_are(docs)))
            rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
        else if ((*done = json_array_size(plain) == concrete))
            rc = docstore_check_rendered(docs, plain, NULL, found_entry, r, err);
        docstore_release_later(ctx, plain);
        docstore_release_later(ctx, docs);
    }
    return rc;
}

/* deckhand-schema-validation's errors of revision id, whose concrete documents of schemas
 * (schema_count distinct names) have a schema to pass (dataschema.h): *errors a new array of
 * Deckhand's entries {schema, name, layer, path, schema_path, message, validation_schema},
 * empty when all pass. Those documents are read as ctx may read them and checked as they are
 * when none of them needs rendering (a parent, a substitution, a replacement); otherwise (and
 * at once when schemas is NULL) the revision is rendered and each concrete document checked
 * as rendered, and a revision that does not render gets one entry saying why. Errors: the
 * store's, and running out of memory. */
static int render_check(const struct docstore_ctx *ctx, long long id, const char **schemas,
                        size_t schema_count, json_t **errors, struct purser_error *err)
{
    struct recorded r = {.arena = ctx->arena, .errors = json_array(), .broken = json_object()};
    int done = 0;
    int rc = r.errors && r.broken
                 ? check_as_they_are(ctx, id, schemas, schema_count, &r, &done, err)
                 : purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    if (!rc && !done)
        rc = check_rendering(ctx, id, &r, err);
    if (!rc)
        rc = check_more(r.errors, r.more, err);
    json_decref(r.broken);
    *errors = rc ? NULL : r.errors;
    if (rc)
        json_decref(r.errors);
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
    if (!rc && !count && !(*errors = json_array()))
        rc = purser_error_set(err, PURSER_EINTERNAL, "oom");
    if (!rc && count) {
        /* every document counts, the encrypted ones too (what is recorded never quotes a
         * value) */
        reader.read_encrypted = reader.keyring != NULL;
        /* when most of the revision is to be checked, some of it surely needs rendering: it is
         * read once, whole, rather than its checked part first */
        rc = render_check(&reader, w->revision, 4 * documents <= n ? schemas : NULL, count, errors,
                          err);
    }
    return rc;
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
