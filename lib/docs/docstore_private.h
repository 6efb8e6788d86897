/* docstore_private.h: the document store's internals, shared by its files (docstore.c writes,
 * docstore_read.c, docstore_documents.c, docstore_render.c, docstore_keys.c), which include this
 * header and never each other. Defined in docstore_common.c, except docstore_sort_json
 * (docstore_documents.c, beside the filters it shares its comparisons with). */
#ifndef PURSER_DOCSTORE_PRIVATE_H
#define PURSER_DOCSTORE_PRIVATE_H

#include "base/buf.h"
#include "docs/docstore.h"

/* One document of a stored revision. */
struct member {
    long long content_id, bucket_id, since;
    const char *bucket, *schema, *layer, *name;
    const unsigned char *sha; /* 32 bytes */
    int abstract, encrypted;
    int drop; /* not carried into the next revision */
    int kept; /* carried unchanged (its replacement in the payload is identical) */
};

#define REDACTED "[redacted]"

/* store_query and store_exec with the context's store and arena. */
int docstore_query(const struct docstore_ctx *ctx, struct store_rows *rows, const char *sql,
                   const struct store_value *params, size_t n, struct purser_error *err);
int docstore_exec(const struct docstore_ctx *ctx, const char *sql, const struct store_value *params,
                  size_t n, unsigned long long *affected, struct purser_error *err);

/* One statement and its event (events.h) in one transaction; *affected (may be NULL) gets the
 * statement's affected rows, and no event is written when it affected none. */
int docstore_exec_event(const struct docstore_ctx *ctx, const char *sql,
                        const struct store_value *params, size_t n, unsigned long long *affected,
                        const char *kind, const char *name, const char *op,
                        struct purser_error *err);

/* PURSER_ENOTFOUND "The requested revision=N was not found." unless revision id exists. */
int docstore_revision_check(const struct docstore_ctx *ctx, long long id,
                            struct purser_error *err);

/* Every document of revision id (none for 0), ordered by content id, in arena memory. */
int docstore_members(const struct docstore_ctx *ctx, long long id, struct member **out,
                     size_t *count, struct purser_error *err);

/* The data of an encrypted content, opened: a new JSON value. */
int docstore_open_data(const struct docstore_ctx *ctx, const char *schema, const char *layer,
                       const char *name, int key_id, const char *sealed, size_t sealed_len,
                       json_t **out, struct purser_error *err);

/* The bound values of a query built from filters. */
struct docstore_params {
    struct store_value v[256];
    size_t n;
};

/* Adds a value: -1 when full. */
int docstore_param(struct docstore_params *p, struct store_value v);

/* Appends " AND col IN (?,?)" for values (nothing when there are none): -1 when full. */
int docstore_filter_in(struct buf *sql, struct docstore_params *p, const char *col,
                       const char **values, size_t n);

/* Sorts documents (a JSON array) by filter->sort paths and order, stably, then applies
 * filter->limit. -1 when out of memory. */
int docstore_sort_json(json_t *docs, const struct docstore_filter *filter);

#endif
