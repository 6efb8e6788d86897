/* docstore_common.c: what the document store's files share: SQL helpers, revision lookups,
 * a revision's members, opening sealed data, and the answer's document shape. */
#include "docs/docstore_private.h"

#include "store/events.h"

#include "auth/keyring.h"
#include "base/crypto.h"
#include "codec/yaml_codec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int docstore_query(const struct docstore_ctx *ctx, struct store_rows *rows, const char *sql,
                   const struct store_value *params, size_t n, struct purser_error *err)
{
    return store_query(ctx->store, ctx->arena, rows, sql, params, n, err);
}

int docstore_exec(const struct docstore_ctx *ctx, const char *sql, const struct store_value *params,
                  size_t n, unsigned long long *affected, struct purser_error *err)
{
    return store_exec(ctx->store, sql, params, n, affected, NULL, err);
}

int docstore_exec_event(const struct docstore_ctx *ctx, const char *sql,
                        const struct store_value *params, size_t n, unsigned long long *affected,
                        const char *kind, const char *name, const char *op,
                        struct purser_error *err)
{
    return event_exec(ctx->store, ctx->principal, ctx->org_id, NULL, sql, params, n, affected, kind,
                      name, op, err);
}

int docstore_revision_check(const struct docstore_ctx *ctx, long long id, struct purser_error *err)
{
    struct store_rows rows;
    struct store_value p[] = {STORE_INT(ctx->org_id), STORE_INT(id)};
    int rc = docstore_query(ctx, &rows, "SELECT 1 FROM doc_revisions WHERE org_id = ? AND id = ?",
                            p, 2, err);
    if (!rc && rows.count == 0)
        rc = purser_error_set(err, PURSER_ENOTFOUND, "The requested revision=%lld was not found.",
                              id);
    return rc;
}

int docstore_latest(const struct docstore_ctx *ctx, long long *out, struct purser_error *err)
{
    struct store_rows rows;
    struct store_value p[] = {STORE_INT(ctx->org_id)};
    int rc =
        docstore_query(ctx, &rows, "SELECT MAX(id) FROM doc_revisions WHERE org_id = ?", p, 1, err);
    *out = !rc && store_cell(&rows, 0, 0) ? atoll(store_cell(&rows, 0, 0)) : 0;
    return rc;
}

int docstore_members(const struct docstore_ctx *ctx, long long id, struct member **out,
                     size_t *count, struct purser_error *err)
{
    struct store_rows rows;
    struct store_value p[] = {STORE_INT(ctx->org_id), STORE_INT(id), STORE_INT(id)};
    struct member *list;
    int rc;

    *out = NULL;
    *count = 0;
    if (id == 0)
        return 0;
    rc = docstore_query(
        ctx, &rows,
        "SELECT m.content_id, m.bucket_id, b.name, m.since_revision, c.content_sha256,"
        " m.schema_name, m.layer, m.name, m.abstract, m.encrypted, m.revision_id"
        " FROM doc_revision_documents m JOIN doc_buckets b ON b.id = m.bucket_id"
        " JOIN doc_contents c ON c.id = m.content_id"
        " WHERE m.org_id = ? AND" DOCSTORE_IN_REVISION " ORDER BY m.content_id",
        p, 3, err);
    if (!rc && !(list = arena_calloc(ctx->arena, rows.count ? rows.count : 1, sizeof(*list))))
        rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    if (!rc) {
        for (size_t i = 0; i < rows.count; i++) {
            struct member *m = &list[i];
            m->content_id = atoll(store_cell(&rows, i, 0));
            m->bucket_id = atoll(store_cell(&rows, i, 1));
            m->bucket = store_cell(&rows, i, 2);
            m->since = atoll(store_cell(&rows, i, 3));
            m->sha = (const unsigned char *)store_cell(&rows, i, 4);
            m->schema = store_cell(&rows, i, 5);
            m->layer = store_cell(&rows, i, 6);
            m->name = store_cell(&rows, i, 7);
            m->abstract = atoi(store_cell(&rows, i, 8));
            m->encrypted = atoi(store_cell(&rows, i, 9));
            m->from = atoll(store_cell(&rows, i, 10));
        }
        *out = list;
        *count = rows.count;
    }
    return rc;
}

int docstore_open_data(const struct docstore_ctx *ctx, const char *schema, const char *layer,
                       const char *name, int key_id, const char *sealed, size_t sealed_len,
                       json_t **out, struct purser_error *err)
{
    size_t aad_len = 0, plain_len = 0;
    char *aad = document_aad(ctx->arena, ctx->org_id, schema, layer, name, &aad_len), *plain;
    json_error_t jerr;
    int rc;

    *out = NULL;
    if (!aad)
        return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    if (!ctx->keyring)
        return purser_error_set(err, PURSER_EUNAVAIL,
                                "no keyring is configured: encrypted documents cannot be read");
    rc = keyring_open(ctx->keyring, key_id, aad, aad_len, (const unsigned char *)sealed, sealed_len,
                      &plain, &plain_len, err);
    if (!rc) {
        *out = json_loadb(plain, plain_len, JSON_DECODE_ANY, &jerr);
        keyring_free_plain(plain, plain_len);
        rc = *out ? 0 : purser_error_set(err, PURSER_EINTERNAL, "a sealed record is not JSON");
    }
    return rc;
}

int docstore_param(struct docstore_params *p, struct store_value v)
{
    if (p->n == sizeof(p->v) / sizeof(p->v[0]))
        return PURSER_EINVAL;
    p->v[p->n++] = v;
    return 0;
}

int docstore_query_failed(int rc, const char *too_many, struct purser_error *err)
{
    if (rc == PURSER_EINVAL)
        return purser_error_set(err, PURSER_EINVAL, "%s", too_many);
    return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
}

int docstore_filter_in(struct buf *sql, struct docstore_params *p, const char *col,
                       const char **values, size_t n)
{
    int rc;
    if (!n)
        return 0;
    rc = buf_printf(sql, " AND %s IN (", col);
    for (size_t i = 0; i < n && !rc; i++) {
        rc = buf_adds(sql, i ? ",?" : "?");
        if (!rc)
            rc = docstore_param(p, STORE_STR(values[i]));
    }
    if (!rc)
        rc = buf_addc(sql, ')');
    return rc;
}

/* schema by whole sections: "a" matches a/..., "a/B" a/B/..., "a/B/v1" itself. */
