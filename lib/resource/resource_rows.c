/* resource_rows.c: a stored resource's row as the API shows it: decoded to JSON
 * (resource_decode) or written straight to text for a list (resource_write_text). */
#include "resource/resource.h"

#include "base/json_text.h"
#include "base/log.h"
#include "codec/json_check.h"
#include "resource/resource_private.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---- reading rows ---- */

/* The JSON of a column (a new reference), or NULL when it does not decode (reason set). */
static json_t *column_json(const struct store_rows *rows, size_t i, int column,
                           const char *fallback, const char **reason)
{
    const char *text = store_cell(rows, i, column);
    json_t *v = json_loads(text ? text : fallback, 0, NULL);
    if (!json_is_object(v)) {
        json_decref(v);
        *reason = column == C_LABELS        ? "labels"
                  : column == C_ANNOTATIONS ? "annotations"
                  : column == C_SPEC        ? "spec"
                                            : "status";
        return NULL;
    }
    return v;
}

static void log_undecodable(const struct resource_kind *k, const char *name, const char *what)
{
    log_message("warning", "a stored resource no longer decodes: skipped",
                json_pack("{s:s, s:s, s:s}", "kind", k->kind, "name", name, "column", what));
}

const char *resource_time(const struct store_rows *rows, size_t i, int column, char out[21])
{
    const char *cell = store_cell(rows, i, column);
    if (!cell)
        return NULL;
    memcpy(out, "0000-00-00T00:00:00Z", 21);
    memcpy(out, cell, rows->lengths[i * rows->columns + (size_t)column] >= 19 ? 19 : 0);
    out[10] = 'T';
    return out;
}

json_t *resource_decode(const struct resource_kind *k, const struct store_rows *rows, size_t i)
{
    char created[21], updated[21], expires[21];
    const char *bad = NULL;
    json_t *labels = column_json(rows, i, C_LABELS, "{}", &bad);
    json_t *ann = bad ? NULL : column_json(rows, i, C_ANNOTATIONS, "{}", &bad);
    json_t *spec = bad ? NULL : column_json(rows, i, C_SPEC, "{}", &bad);
    json_t *status = bad ? NULL : column_json(rows, i, C_STATUS, "{}", &bad);
    const char *desc = store_cell(rows, i, C_DESCRIPTION);
    if (bad) {
        log_undecodable(k, store_cell(rows, i, C_NAME), bad);
        json_decref(labels);
        json_decref(ann);
        json_decref(spec);
        return NULL;
    }
    return json_pack("{s:s, s:s, s:{s:s, s:o, s:o, s:s, s:s, s:s, s:s, s:s*, s:s*}, s:o, s:o}",
                     "kind", k->kind, "version", k->version, "metadata", "name",
                     store_cell(rows, i, C_NAME), "labels", labels, "annotations", ann,
                     "description", desc ? desc : "", "revision", store_cell(rows, i, C_REVISION),
                     "created_at", resource_time(rows, i, C_CREATED, created), "updated_at",
                     resource_time(rows, i, C_UPDATED, updated), "sub_kind",
                     store_cell(rows, i, C_SUB_KIND), "expires",
                     resource_time(rows, i, C_EXPIRES, expires), "spec", spec, "status", status);
}

/* A stored JSON column as it is, when it is JSON (NULL: fallback). */
static const char *column_text(const struct store_rows *rows, size_t i, int column,
                               const char *fallback)
{
    const char *text = store_cell(rows, i, column);
    if (!text)
        return fallback;
    return json_text_valid(text, rows->lengths[i * rows->columns + (size_t)column]) ? text : NULL;
}

/* Appends each text until NULL (a page writes hundreds of envelopes: printf's formatting was a
 * tenth of its time). */
static int add_texts(struct buf *out, ...)
{
    va_list ap;
    const char *text;
    int rc = 0;
    va_start(ap, out);
    while (!rc && (text = va_arg(ap, const char *)))
        rc = buf_adds(out, text);
    va_end(ap);
    return rc;
}

/* ,"key":"value" when value is not NULL. */
static int write_optional(struct buf *out, const char *key, const char *value)
{
    int rc = 0;
    if (value) {
        rc = add_texts(out, ",\"", key, "\":", (const char *)NULL);
        if (!rc)
            rc = log_json_string(out, value);
    }
    return rc;
}

/* A cell that is never NULL in a row of ours ("" if it were). */
static const char *cell_text(const struct store_rows *rows, size_t i, int column)
{
    const char *text = store_cell(rows, i, column);
    return text ? text : "";
}

static const char *time_text(const struct store_rows *rows, size_t i, int column, char out[21])
{
    const char *text = resource_time(rows, i, column, out);
    return text ? text : "";
}

int resource_write_text(const struct resource_kind *k, const struct store_rows *rows, size_t i,
                        struct buf *out)
{
    char created[21], updated[21], expires[21];
    const char *labels = column_text(rows, i, C_LABELS, "{}");
    const char *ann = column_text(rows, i, C_ANNOTATIONS, "{}");
    const char *spec = column_text(rows, i, C_SPEC, "{}");
    const char *status = column_text(rows, i, C_STATUS, "{}");
    const char *desc = store_cell(rows, i, C_DESCRIPTION);
    int rc;
    if (!labels || !ann || !spec || !status) {
        log_undecodable(k, store_cell(rows, i, C_NAME),
                        !labels ? "labels"
                        : !ann  ? "annotations"
                        : !spec ? "spec"
                                : "status");
        return 1;
    }
    /* names, revisions and times are ours: plain text that needs no escaping but the name's */
    rc = add_texts(out, "{\"kind\":\"", k->kind, "\",\"version\":\"", k->version,
                   "\",\"metadata\":{\"name\":", (const char *)NULL);
    if (!rc)
        rc = log_json_string(out, store_cell(rows, i, C_NAME));
    if (!rc)
        rc = buf_adds(out, ",\"labels\":");
    if (!rc)
        rc = buf_adds(out, labels);
    if (!rc)
        rc = buf_adds(out, ",\"annotations\":");
    if (!rc)
        rc = buf_adds(out, ann);
    if (!rc)
        rc = buf_adds(out, ",\"description\":");
    if (!rc)
        rc = log_json_string(out, desc ? desc : "");
    if (!rc)
        rc = add_texts(out, ",\"revision\":\"", cell_text(rows, i, C_REVISION),
                       "\",\"created_at\":\"", time_text(rows, i, C_CREATED, created),
                       "\",\"updated_at\":\"", time_text(rows, i, C_UPDATED, updated), "\"",
                       (const char *)NULL);
    if (!rc)
        rc = write_optional(out, "sub_kind", store_cell(rows, i, C_SUB_KIND));
    if (!rc)
        rc = write_optional(out, "expires", resource_time(rows, i, C_EXPIRES, expires));
    if (!rc)
        rc = write_optional(out, "organization", store_cell(rows, i, C_ORGANIZATION));
    if (!rc)
        rc = buf_adds(out, "},\"spec\":");
    if (!rc)
        rc = buf_adds(out, spec);
    if (!rc)
        rc = buf_adds(out, ",\"status\":");
    if (!rc)
        rc = buf_adds(out, status);
    if (!rc)
        rc = buf_addc(out, '}');
    return rc ? -1 : 0;
}
