/* docstore_validations.c: a revision's validations (Deckhand's /revisions/{id}/validations):
 * recording one, listing them, an entry with its errors (docstore_read.c reads the
 * revisions and their ValidationPolicy status). */
#include "docs/docstore_private.h"
#include "store/events.h"

#include "base/json_text.h"

#include <string.h>

/* ---- validations ---- */

static int validation_txn(struct store *store, void *arg, struct purser_error *err);

int docstore_validation_reserved(const char *name)
{
    return strncmp(name, "deckhand", 8) == 0;
}

struct validation_write {
    const struct docstore_ctx *ctx;
    long long id;
    const char *name, *status, *validator, *errors;
    long long entry;
};

int docstore_validation_create(const struct docstore_ctx *ctx, long long id, const char *name,
                               const json_t *body, json_t **out, struct purser_error *err)
{
    const json_t *status = json_object_get(body, "status");
    const json_t *validator = json_object_get(body, "validator");
    const json_t *errors = json_object_get(body, "errors");
    struct validation_write v = {.ctx = ctx, .id = id, .name = name};
    char *validator_text, *errors_text;
    int rc;

    *out = NULL;
    rc = document_name_check("validation name", name, err);
    if (!rc && docstore_validation_reserved(name))
        rc = purser_error_set(err, PURSER_EINVAL,
                              "validation name '%.64s' is reserved: names beginning with "
                              "deckhand are Deckhand's own, recorded by every write",
                              name);
    if (!rc && !json_is_object(body))
        rc = purser_error_set(err, PURSER_EINVAL, "the body must be a mapping with status");
    if (!rc && (!json_is_string(status) || (!docstore_is_success(json_string_value(status)) &&
                                            strcmp(json_string_value(status), "failure") &&
                                            strcmp(json_string_value(status), "failed"))))
        rc = purser_error_set(err, PURSER_EINVAL,
                              "status must be success, succeeded, failure or failed");
    if (!rc && validator && !json_is_object(validator))
        rc = purser_error_set(err, PURSER_EINVAL, "validator must be a mapping (name, version)");
    if (!rc && errors && !json_is_array(errors))
        rc = purser_error_set(err, PURSER_EINVAL, "errors must be a list");
    if (!rc)
        rc = docstore_revision_check(ctx, id, err);
    if (!rc) {
        validator_text =
            json_text(validator ? validator : json_null(), JSON_COMPACT | JSON_ENCODE_ANY);
        errors_text = errors ? json_text(errors, JSON_COMPACT) : strdup("[]");
        v.status = json_string_value(status);
        v.validator = validator_text ? validator_text : "null";
        v.errors = errors_text ? errors_text : "[]";
        rc = store_txn(ctx->store, 0, validation_txn, &v, err);
        free(validator_text);
        free(errors_text);
        if (!rc)
            rc = docstore_validation_entry(ctx, id, name, v.entry, out, err);
    }
    return rc;
}

static int validation_txn(struct store *store, void *arg, struct purser_error *err)
{
    struct validation_write *v = arg;
    struct store_value key[] = {STORE_INT(v->ctx->org_id), STORE_INT(v->id), STORE_STR(v->name)};
    struct store_rows rows;
    int rc;
    rc = docstore_query(
        v->ctx, &rows,
        "SELECT COALESCE(MAX(entry_id) + 1, 0) FROM doc_validations WHERE org_id = ? AND"
        " revision_id = ? AND name = ? FOR UPDATE",
        key, 3, err);
    if (!rc) {
        v->entry = atoll(store_cell(&rows, 0, 0));
        {
            struct store_value p[] = {key[0],
                                      key[1],
                                      key[2],
                                      STORE_INT(v->entry),
                                      STORE_STR(v->status),
                                      STORE_STR(v->validator),
                                      STORE_STR(v->errors)};
            rc = docstore_exec(
                v->ctx,
                "INSERT INTO doc_validations (org_id, revision_id, name, entry_id, status,"
                " validator, errors) VALUES (?, ?, ?, ?, ?, ?, ?)",
                p, 7, NULL, err);
        }
        if (!rc)
            rc = event_append(store, v->ctx->principal, v->ctx->org_id, "validation",
                              arena_sprintf(v->ctx->arena, "%lld/%s", v->id, v->name), "put", NULL,
                              NULL, err);
    }
    return rc;
}

/* The full entry of a row: name, entry_id, status, createdAt, validator, errors, age. */
static json_t *entry_json(const struct docstore_ctx *ctx, long long id,
                          const struct store_rows *rows, size_t i)
{
    json_error_t jerr;
    const char *name = store_cell(rows, i, 0);
    char *entry_path = arena_sprintf(ctx->arena, "/validations/%s/entries/", name);
    return json_pack("{s:s, s:I, s:s, s:s, s:s, s:n, s:n, s:o, s:o}", "name", name, "id",
                     (json_int_t)atoll(store_cell(rows, i, 1)), "url",
                     docstore_url_of(ctx, id, entry_path ? entry_path : "", store_cell(rows, i, 1)),
                     "status", store_cell(rows, i, 2), "createdAt", store_cell(rows, i, 3),
                     "expiresAfter", "expiresAt", "validator",
                     json_loads(store_cell(rows, i, 4), JSON_DECODE_ANY, &jerr), "errors",
                     json_loads(store_cell(rows, i, 5), JSON_DECODE_ANY, &jerr));
}

#define ENTRY_COLUMNS "name, entry_id, status, " STORE_ISO_TIME("created_at") ", validator, errors"

/* The validation entries of revision id (of the validation named name, or all when NULL), in
 * ENTRY_COLUMNS, by name and entry; 404 for a revision that does not exist. */
static int entry_rows(const struct docstore_ctx *ctx, long long id, const char *name,
                      struct store_rows *rows, struct purser_error *err)
{
    struct store_value p[] = {STORE_INT(ctx->org_id), STORE_INT(id), STORE_STR(name ? name : "")};
    int rc = docstore_revision_check(ctx, id, err);
    if (!rc)
        rc = docstore_query(ctx, rows,
                            name ? "SELECT " ENTRY_COLUMNS " FROM doc_validations WHERE"
                                   " org_id = ? AND revision_id = ? AND name = ?"
                                   " ORDER BY entry_id"
                                 : "SELECT " ENTRY_COLUMNS " FROM doc_validations WHERE"
                                   " org_id = ? AND revision_id = ? ORDER BY name, entry_id",
                            p, name ? 3 : 2, err);
    return rc;
}

int docstore_validation_list(const struct docstore_ctx *ctx, long long id, int detail, json_t **out,
                             struct purser_error *err)
{
    struct store_rows rows;
    json_t *results;
    int rc;
    *out = NULL;
    rc = entry_rows(ctx, id, NULL, &rows, err);
    if (!rc) {
        results = json_array();
        for (size_t i = 0; i < rows.count; i++) {
            int last = i + 1 == rows.count ||
                       strcmp(store_cell(&rows, i, 0), store_cell(&rows, i + 1, 0)) != 0;
            if (detail)
                json_array_append_new(results, entry_json(ctx, id, &rows, i));
            else if (last)
                json_array_append_new(
                    results,
                    json_pack("{s:s, s:s, s:s}", "name", store_cell(&rows, i, 0), "url",
                              docstore_url_of(ctx, id, "/validations/", store_cell(&rows, i, 0)),
                              "status", store_cell(&rows, i, 2)));
        }
        rc = docstore_listing(results, out, err);
    }
    return rc;
}

int docstore_validation_entries(const struct docstore_ctx *ctx, long long id, const char *name,
                                json_t **out, struct purser_error *err)
{
    struct store_rows rows;
    json_t *results;
    int rc;
    *out = NULL;
    rc = entry_rows(ctx, id, name, &rows, err);
    if (!rc) {
        results = json_array();
        for (size_t i = 0; i < rows.count; i++) {
            json_t *e = entry_json(ctx, id, &rows, i);
            json_array_append_new(results,
                                  json_pack("{s:O, s:O, s:O}", "id", json_object_get(e, "id"),
                                            "url", json_object_get(e, "url"), "status",
                                            json_object_get(e, "status")));
            json_decref(e);
        }
        rc = docstore_listing(results, out, err);
    }
    return rc;
}

int docstore_validation_entry(const struct docstore_ctx *ctx, long long id, const char *name,
                              long long entry, json_t **out, struct purser_error *err)
{
    struct store_value p[] = {STORE_INT(ctx->org_id), STORE_INT(id), STORE_STR(name),
                              STORE_INT(entry)};
    struct store_rows rows;
    int rc;
    *out = NULL;
    rc = docstore_revision_check(ctx, id, err);
    if (!rc)
        rc = docstore_query(ctx, &rows,
                            "SELECT " ENTRY_COLUMNS " FROM doc_validations WHERE org_id = ? AND"
                            " revision_id = ? AND name = ? AND entry_id = ?",
                            p, 4, err);
    if (!rc && rows.count == 0)
        rc = purser_error_set(err, PURSER_ENOTFOUND,
                              "The requested validation entry %lld was not found for validation "
                              "name %s and revision ID %lld.",
                              entry, name, id);
    if (!rc) {
        *out = entry_json(ctx, id, &rows, 0);
        rc = *out ? 0 : purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    }
    return rc;
}
