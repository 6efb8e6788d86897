/* docstore_diff.c: the diff of two revisions from the rows that changed between them. */
#include "docs/docstore_private.h"

#include <stdlib.h>
#include <string.h>

/* The sorted JSON array of revision id's bucket names (empty for 0); 404 for no such revision. */
static int revision_buckets(const struct docstore_ctx *ctx, long long id, json_t **out,
                            struct purser_error *err)
{
    struct store_value p[] = {STORE_INT(ctx->org_id), STORE_INT(id)};
    struct store_rows rows;
    json_error_t jerr;
    int rc = id ? docstore_query(ctx, &rows,
                                 "SELECT buckets FROM doc_revisions WHERE org_id = ? AND id = ?", p,
                                 2, err)
                : 0;
    if (!rc && id && rows.count == 0)
        rc = purser_error_set(err, PURSER_ENOTFOUND, "The requested revision=%lld was not found.",
                              id);
    if (!rc) {
        *out = id ? json_loads(store_cell(&rows, 0, 0), 0, &jerr) : json_array();
        rc = json_is_array(*out) ? 0 : purser_error_set(err, PURSER_EINTERNAL, "bad bucket list");
    }
    return rc;
}

static int holds(const json_t *names, const char *name)
{
    size_t i;
    const json_t *v;
    json_array_foreach (names, i, v)
        if (strcmp(json_string_value(v), name) == 0)
            return 1;
    return 0;
}

/* {bucket: true} for each bucket whose contents differ between revisions a < b: the rows held
 * by one of them only (those that began or ended between them), compared bucket by bucket (a
 * content may have left a row and come back in another, the same in both). */
static int changed_buckets(const struct docstore_ctx *ctx, long long a, long long b,
                           json_t *changed, struct purser_error *err)
{
    struct store_value p[] = {STORE_INT(a), STORE_INT(a),           STORE_INT(b),
                              STORE_INT(b), STORE_INT(ctx->org_id), STORE_INT(a),
                              STORE_INT(b), STORE_INT(a),           STORE_INT(b)};
    struct store_rows rows;
    int rc = docstore_query(
        ctx, &rows,
        "SELECT b.name, m.content_id, m.revision_id <= ? AND m.until_revision > ?,"
        " m.revision_id <= ? AND m.until_revision > ?"
        " FROM doc_revision_documents m JOIN doc_buckets b ON b.id = m.bucket_id"
        " WHERE m.org_id = ? AND ((m.revision_id > ? AND m.revision_id <= ?) OR"
        " (m.until_revision > ? AND m.until_revision <= ?)) ORDER BY b.name, m.content_id",
        p, 9, err);
    if (!rc) {
        for (size_t i = 0, j; i < rows.count; i = j) { /* one bucket's rows: i to j */
            const char *bucket = store_cell(&rows, i, 0);
            json_t *only_a = json_array(), *only_b = json_array();
            for (j = i; j < rows.count && strcmp(store_cell(&rows, j, 0), bucket) == 0; j++) {
                json_t *content = json_integer(atoll(store_cell(&rows, j, 1)));
                int in_a = atoi(store_cell(&rows, j, 2)), in_b = atoi(store_cell(&rows, j, 3));
                if (in_a != in_b) /* (a row that began and ended between a and b is in neither) */
                    json_array_append(in_a ? only_a : only_b, content);
                json_decref(content);
            }
            if (!json_equal(only_a, only_b))
                json_object_set_new(changed, bucket, json_true());
            json_decref(only_a);
            json_decref(only_b);
        }
    }
    return rc;
}

/* Each bucket of the newer revision created, modified or unmodified, then those of the older
 * one it lacks deleted. */
static json_t *diff_json(const json_t *older, const json_t *newer, const json_t *changed)
{
    json_t *result = json_object();
    size_t i;
    const json_t *v;
    if (!result)
        return NULL;
    json_array_foreach (newer, i, v) {
        const char *name = json_string_value(v);
        json_object_set_new(result, name,
                            json_string(!holds(older, name)              ? "created"
                                        : json_object_get(changed, name) ? "modified"
                                                                         : "unmodified"));
    }
    json_array_foreach (older, i, v)
        if (!holds(newer, json_string_value(v)))
            json_object_set_new(result, json_string_value(v), json_string("deleted"));
    return result;
}

int docstore_diff(const struct docstore_ctx *ctx, long long a, long long b, json_t **out,
                  struct purser_error *err)
{
    json_t *older = NULL, *newer = NULL, *changed = json_object();
    int rc;

    *out = NULL;
    if (a < 0 || b < 0)
        rc = purser_error_set(err, PURSER_EINVAL, "revision ids are 0 or more");
    else {
        long long lo = a < b ? a : b, hi = a < b ? b : a;
        rc = changed ? 0 : purser_error_set(err, PURSER_EINTERNAL, "out of memory");
        if (!rc)
            rc = revision_buckets(ctx, lo, &older, err);
        if (!rc)
            rc = revision_buckets(ctx, hi, &newer, err);
        /* rows matter only where both revisions hold a bucket (revision 0 holds none) */
        if (!rc && lo && lo != hi)
            rc = changed_buckets(ctx, lo, hi, changed, err);
        if (!rc && !(*out = diff_json(older, newer, changed)))
            rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    }
    json_decref(older);
    json_decref(newer);
    json_decref(changed);
    return rc;
}
