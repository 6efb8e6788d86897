/* docstore_documents.c: a revision's documents with Deckhand's filters, sort and limit, as
 * JSON values or as the YAML the API sends (cleartext documents as stored at write time). */
#include "docs/docstore_private.h"

#include "base/json_intern.h"

#include <stdlib.h>
#include <string.h>

static int filter_schema(struct arena *arena, struct buf *sql, struct docstore_params *p,
                         const char **schemas, size_t n)
{
    int rc;
    if (!n)
        return 0;
    rc = buf_adds(sql, " AND (");
    for (size_t i = 0; i < n && !rc; i++) {
        char *like = arena_alloc(arena, 2 * strlen(schemas[i]) + 3), *o = like;
        if (!like)
            return PURSER_EINTERNAL;
        for (const char *s = schemas[i]; *s; s++) {
            if (*s == '%' || *s == '_' || *s == '\\')
                *o++ = '\\';
            *o++ = *s;
        }
        memcpy(o, "/%", 3);
        rc = buf_adds(sql, i ? " OR " : "");
        if (!rc)
            rc = buf_adds(sql, "m.schema_name = ? OR m.schema_name LIKE ?");
        if (!rc)
            rc = docstore_param(p, STORE_STR(schemas[i]));
        if (!rc)
            rc = docstore_param(p, STORE_STR(like));
    }
    if (!rc)
        rc = buf_addc(sql, ')');
    return rc;
}

static int filter_labels(struct arena *arena, struct buf *sql, struct docstore_params *p,
                         const char **labels, size_t n)
{
    int rc = 0;
    for (size_t i = 0; !rc && i < n; i++) {
        const char *eq = strchr(labels[i], '=');
        char *key = eq ? arena_strndup(arena, labels[i], (size_t)(eq - labels[i])) : NULL;
        if (!eq)
            continue;
        if (!key)
            return PURSER_EINTERNAL;
        /* (the labels column: ",hex(key)=hex(value),...,", migration 0015) */
        rc = buf_adds(sql, " AND LOCATE(CONCAT(',', LOWER(HEX(?)), '=', LOWER(HEX(?)), ','),"
                           " c.labels) > 0");
        if (!rc)
            rc = docstore_param(p, STORE_STR(key));
        if (!rc)
            rc = docstore_param(p, STORE_STR(eq + 1));
    }
    return rc;
}

enum column {
    C_SINCE,
    C_BUCKET,
    C_SCHEMA,
    C_METADATA,
    C_DATA,
    C_ENCRYPTED,
    C_KEY,
    C_LAYER,
    C_NAME,
    C_YAML
};

/* filter= on a revision's documents, docstore_document_fields' SQL */
static const char *const field_sql[] = {"m.name LIKE ?", "m.schema_name LIKE ?", "m.layer LIKE ?",
                                        "b.name LIKE ?", "m.name LIKE ? OR m.schema_name LIKE ?"};

static int is_column_key(const char *path);
static int needs_documents(const struct docstore_filter *f);

/* A page whose sort the server can do (by columns, or none): only its rows are read. */
static int sql_paged(const struct docstore_filter *f)
{
    return f->page && !needs_documents(f);
}

/* The column of a sort key is_column_key. */
static const char *sort_column(const char *path)
{
    return !strcmp(path, "schema")          ? "m.schema_name"
           : !strcmp(path, "metadata.name") ? "m.name"
           : !strcmp(path, "status.bucket") ? "b.name"
                                            : "m.layer";
}

/* ORDER BY of a sql_paged query, ties in the order the sort in memory leaves them (stored order;
 * reversed by order=desc only without sort keys), and the page's LIMIT (one more row: is there
 * a next page?) and OFFSET. */
static int page_order(const struct docstore_filter *f, struct buf *sql, struct docstore_params *p)
{
    const char *dir = f->descending ? " DESC" : "";
    int rc = buf_adds(sql, " ORDER BY ");
    for (size_t k = 0; !rc && k < f->sort_count; k++)
        rc = buf_printf(sql, "%s%s, ", sort_column(f->sort[k]), dir);
    if (!rc)
        rc = buf_printf(sql, "m.content_id%s LIMIT ? OFFSET ?", f->sort_count ? "" : dir);
    if (!rc)
        rc = docstore_param(p, STORE_INT(f->page->size + 1));
    if (!rc)
        rc = docstore_param(p, STORE_INT(f->page->offset));
    return rc;
}

/* with_yaml: 2 counts the documents (the page's total) */
static int build_query(const struct docstore_ctx *ctx, long long id,
                       const struct docstore_filter *f, int with_yaml, struct buf *sql,
                       struct docstore_params *p)
{
    /* the YAML form when it will be sent; otherwise metadata and data to decode */
    int rc =
        buf_adds(sql, with_yaml == 2      ? "SELECT COUNT(*)"
                      : with_yaml         ? "SELECT m.since_revision, b.name, c.schema_name, NULL,"
                                            " IF(c.encrypted, c.data, NULL), c.encrypted, c.key_id,"
                                            " c.layer, c.name, c.yaml, IF(c.encrypted, c.metadata, NULL)"
                      : f->with_yaml_head ? "SELECT m.since_revision, b.name, c.schema_name,"
                                            " c.metadata, c.data, c.encrypted, c.key_id, c.layer,"
                                            " c.name, c.yaml, NULL"
                                          : "SELECT m.since_revision, b.name, c.schema_name,"
                                            " c.metadata, c.data, c.encrypted, c.key_id, c.layer,"
                                            " c.name, NULL, NULL");
    if (!rc)
        rc = buf_adds(sql, " FROM doc_revision_documents m"
                           " JOIN doc_buckets b ON b.id = m.bucket_id"
                           " JOIN doc_contents c ON c.id = m.content_id"
                           " WHERE m.org_id = ? AND" DOCSTORE_IN_REVISION);
    if (!rc)
        rc = docstore_param(p, STORE_INT(ctx->org_id));
    if (!rc)
        rc = docstore_param(p, STORE_INT(id));
    if (!rc)
        rc = docstore_param(p, STORE_INT(id));
    if (!rc)
        rc = filter_schema(ctx->arena, sql, p, f->schemas, f->schema_count);
    if (!rc)
        rc = docstore_filter_in(sql, p, "m.name", f->names, f->name_count);
    if (!rc)
        rc = docstore_filter_in(sql, p, "m.layer", f->layers, f->layer_count);
    if (!rc)
        rc = docstore_filter_in(sql, p, "b.name", f->buckets, f->bucket_count);
    if (!rc && f->abstract >= 0) {
        rc = buf_adds(sql, " AND m.abstract = ?");
        if (!rc)
            rc = docstore_param(p, STORE_INT(f->abstract));
    }
    /* who may not read encrypted data sees encrypted documents only redacted, when asked so */
    if (!rc && !ctx->read_encrypted && !f->redact)
        rc = buf_adds(sql, " AND m.encrypted = 0");
    if (!rc)
        rc = filter_labels(ctx->arena, sql, p, f->labels, f->label_count);
    if (!rc)
        rc = docstore_page_where(f->page, docstore_document_fields, field_sql, sql, p);
    if (!rc && with_yaml != 2) /* (a count has no order) */
        rc = sql_paged(f) ? page_order(f, sql, p) : buf_adds(sql, " ORDER BY m.content_id");
    return rc;
}

/* The page's total: the documents its filters select. */
static int page_total(const struct docstore_ctx *ctx, long long id, const struct docstore_filter *f,
                      struct purser_error *err)
{
    struct buf sql = BUF_INIT;
    struct docstore_params p = {.n = 0};
    struct store_rows rows;
    int rc = build_query(ctx, id, f, 2, &sql, &p);
    if (rc)
        rc = docstore_query_failed(rc, "too many filter values", err);
    else
        rc = store_query(ctx->store, ctx->arena, &rows, buf_cstr(&sql), p.v, p.n, err);
    buf_release(&sql);
    if (!rc)
        f->page->total = rows.count ? atoll(store_cell(&rows, 0, 0)) : 0;
    return rc;
}

/* A sql_paged page of count rows (one more when a next page follows): next set, count cut. */
static void page_cut(const struct docstore_filter *f, size_t *count)
{
    f->page->next = *count > (size_t)f->page->size ? f->page->offset + f->page->size : -1;
    if (*count > (size_t)f->page->size)
        *count = (size_t)f->page->size;
}

/* One document of the answer. */
struct row {
    const struct store_rows *rows;
    size_t i;    /* row in rows */
    json_t *doc; /* decoded (for the JSON answer, or to sort by a path in it) */
};

static const char *cell(const struct row *r, enum column c)
{
    return store_cell(r->rows, r->i, c);
}

static size_t cell_len(const struct row *r, enum column c)
{
    return r->rows->lengths[r->i * r->rows->columns + c];
}

/* Sort keys answered from columns, without decoding the document. */
static const char *column_key(const struct row *r, const char *path)
{
    if (strcmp(path, "schema") == 0)
        return cell(r, C_SCHEMA);
    if (strcmp(path, "metadata.name") == 0)
        return cell(r, C_NAME);
    if (strcmp(path, "metadata.layeringDefinition.layer") == 0)
        return cell(r, C_LAYER);
    if (strcmp(path, "status.bucket") == 0)
        return cell(r, C_BUCKET);
    return NULL;
}

static int is_column_key(const char *path)
{
    return strcmp(path, "schema") == 0 || strcmp(path, "metadata.name") == 0 ||
           strcmp(path, "metadata.layeringDefinition.layer") == 0 ||
           strcmp(path, "status.bucket") == 0;
}

/* The value at a dotted path ("metadata.name") of doc, or NULL. */
static const json_t *value_at(const json_t *doc, const char *path)
{
    char part[256];
    while (doc && *path) {
        size_t n = strcspn(path, ".");
        if (n >= sizeof(part))
            return NULL;
        memcpy(part, path, n);
        part[n] = '\0';
        doc = json_object_get(doc, part);
        path += n + (path[n] == '.');
    }
    return doc;
}

static int value_compare(const json_t *a, const json_t *b)
{
    if (!a || !b)
        return (a != NULL) - (b != NULL);
    if (json_is_number(a) && json_is_number(b)) {
        double x = json_number_value(a), y = json_number_value(b);
        return (x > y) - (x < y);
    }
    if (json_is_string(a) && json_is_string(b))
        return strcmp(json_string_value(a), json_string_value(b));
    if (json_typeof(a) != json_typeof(b))
        return (int)json_typeof(a) - (int)json_typeof(b);
    return json_is_true(a) - json_is_true(b);
}

static __thread const struct docstore_filter *sort_filter;

static int row_compare(const void *x, const void *y)
{
    const struct row *a = x, *b = y;
    for (size_t k = 0; k < sort_filter->sort_count; k++) {
        const char *path = sort_filter->sort[k];
        int c;
        if (is_column_key(path))
            c = strcmp(column_key(a, path), column_key(b, path));
        else
            c = value_compare(value_at(a->doc, path), value_at(b->doc, path));
        if (c)
            return sort_filter->descending ? -c : c;
    }
    if (sort_filter->descending && !sort_filter->sort_count)
        return (a->i < b->i) - (a->i > b->i);
    return (a->i > b->i) - (a->i < b->i); /* stable: the stored order */
}

struct json_item {
    json_t *doc;
    size_t index;
};

static int json_item_compare(const void *x, const void *y)
{
    const struct json_item *a = x, *b = y;
    for (size_t k = 0; k < sort_filter->sort_count; k++) {
        int c = value_compare(value_at(a->doc, sort_filter->sort[k]),
                              value_at(b->doc, sort_filter->sort[k]));
        if (c)
            return sort_filter->descending ? -c : c;
    }
    if (sort_filter->descending && !sort_filter->sort_count)
        return (a->index < b->index) - (a->index > b->index);
    return (a->index > b->index) - (a->index < b->index);
}

int docstore_sort_json(json_t *docs, const struct docstore_filter *f)
{
    size_t n = json_array_size(docs);
    if ((f->sort_count || f->descending) && n > 1) {
        struct json_item *items = malloc(n * sizeof(*items));
        if (!items)
            return -1;
        for (size_t i = 0; i < n; i++)
            items[i] = (struct json_item){json_incref(json_array_get(docs, i)), i};
        sort_filter = f;
        qsort(items, n, sizeof(*items), json_item_compare);
        json_array_clear(docs);
        for (size_t i = 0; i < n; i++)
            json_array_append_new(docs, items[i].doc);
        free(items);
    }
    while (f->limit >= 0 && json_array_size(docs) > (size_t)f->limit)
        json_array_remove(docs, json_array_size(docs) - 1);
    return 0;
}

static int needs_documents(const struct docstore_filter *f)
{
    for (size_t k = 0; k < f->sort_count; k++)
        if (!is_column_key(f->sort[k]))
            return 1;
    return 0;
}

/* Stored JSON text decoded: its parts shared through shared when that is not NULL. */
static json_t *decode(struct json_intern *shared, const char *text, size_t len)
{
    json_error_t jerr;
    return shared ? json_intern_loadb(shared, text, len)
                  : json_loadb(text, len, JSON_DECODE_ANY, &jerr);
}

/* value (a new reference, NULL passes), or its shared equal when shared is not NULL. */
static json_t *share(struct json_intern *shared, json_t *value)
{
    return shared ? json_intern(shared, value) : value;
}

/* The document's data: decoded, opened (encrypted) or redacted, its parts shared through
 * shared when it is not NULL. A new reference or NULL. */
static json_t *row_data(const struct docstore_ctx *ctx, const struct docstore_filter *f,
                        const struct row *r, struct json_intern *shared, struct purser_error *err)
{
    json_t *data = NULL;
    if (atoi(cell(r, C_ENCRYPTED))) {
        if (f->redact)
            return json_string(REDACTED);
        if (docstore_open_data(ctx, cell(r, C_SCHEMA), cell(r, C_LAYER), cell(r, C_NAME),
                               atoi(cell(r, C_KEY)), cell(r, C_DATA), cell_len(r, C_DATA), &data,
                               err))
            return NULL;
        return share(shared, data);
    }
    if (!(data = decode(shared, cell(r, C_DATA), cell_len(r, C_DATA))))
        purser_error_set(err, PURSER_EINTERNAL, "a stored document is not JSON");
    return data;
}

/* Keeps the stored YAML of schema and metadata (all before the top-level "data:" line:
 * nested lines are indented, so "\ndata:" can only be that key) as DOCSTORE_YAML_HEAD. */
static void add_yaml_head(json_t *doc, const char *yaml, size_t len)
{
    const char *data = len >= 6 ? memmem(yaml, len, "\ndata:", 6) : NULL;
    if (data)
        json_object_set_new(doc, DOCSTORE_YAML_HEAD, json_stringn(yaml, (size_t)(data - yaml) + 1));
}

/* The document of a row (a new reference), or NULL with err set; with shared, its parts
 * (schema, metadata, data, status and all within) are the table's shared values, read
 * straight from the stored text. */
static json_t *row_document(const struct docstore_ctx *ctx, const struct docstore_filter *f,
                            const struct row *r, struct json_intern *shared,
                            struct purser_error *err)
{
    json_t *data = row_data(ctx, f, r, shared, err), *meta, *doc = NULL;
    if (!data)
        return NULL;
    if ((meta = decode(shared, cell(r, C_METADATA), cell_len(r, C_METADATA))))
        doc = json_pack("{s:o, s:o, s:o, s:o}", "schema",
                        share(shared, json_string(cell(r, C_SCHEMA))), "metadata", meta, "data",
                        data, "status",
                        share(shared, json_pack("{s:s, s:I}", "bucket", cell(r, C_BUCKET),
                                                "revision", (json_int_t)atoll(cell(r, C_SINCE)))));
    else
        json_decref(data);
    if (!doc) {
        purser_error_set(err, PURSER_EINTERNAL, "out of memory");
        return NULL;
    }
    if (f->with_yaml_head && cell(r, C_YAML))
        add_yaml_head(doc, cell(r, C_YAML), cell_len(r, C_YAML));
    return doc;
}

/* Runs the query and orders and limits the rows; decodes documents only when a sort key
 * needs them. *out is an arena array of *count rows. */
static int select_rows(const struct docstore_ctx *ctx, long long id,
                       const struct docstore_filter *f, struct row **out, size_t *count,
                       struct store_rows *rows, struct purser_error *err)
{
    struct buf sql = BUF_INIT;
    struct docstore_params p = {.n = 0};
    struct row *list;
    int rc, with_yaml = !needs_documents(f);

    *out = NULL;
    *count = 0;
    rc = docstore_revision_check(ctx, id, err);
    if (!rc) {
        if ((rc = build_query(ctx, id, f, with_yaml, &sql, &p)))
            rc = docstore_query_failed(rc, "too many filter values", err);
        else
            rc = store_query(ctx->store, ctx->arena, rows, buf_cstr(&sql), p.v, p.n, err);
        buf_release(&sql);
    }
    if (!rc && !(list = arena_calloc(ctx->arena, rows->count ? rows->count : 1, sizeof(*list))))
        rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    if (!rc) {
        for (size_t i = 0; i < rows->count; i++) {
            list[i] = (struct row){.rows = rows, .i = i};
            if (with_yaml)
                continue;
            if (!(list[i].doc = row_document(ctx, f, &list[i], NULL, err))) {
                for (size_t j = 0; j < i; j++)
                    json_decref(list[j].doc);
                return err->code;
            }
        }
        sort_filter = f;
        *count = rows->count;
        if (sql_paged(f)) { /* sorted and cut by the server */
            page_cut(f, count);
            *out = list;
            return page_total(ctx, id, f, err);
        }
        if (f->sort_count || f->descending)
            qsort(list, rows->count, sizeof(*list), row_compare);
        if (f->page) { /* sorted here: the page of the rows */
            size_t from = (size_t)f->page->offset < *count ? (size_t)f->page->offset : *count;
            size_t n =
                *count - from < (size_t)f->page->size ? *count - from : (size_t)f->page->size;
            f->page->total = (long long)*count;
            f->page->next = from + n < *count ? (long)(from + n) : -1;
            for (size_t j = 0; j < *count; j++)
                if (j < from || j >= from + n)
                    json_decref(list[j].doc);
            list += from;
            *count = n;
        }
        if (f->limit >= 0 && *count > (size_t)f->limit) {
            for (size_t j = (size_t)f->limit; j < *count; j++)
                json_decref(list[j].doc);
            *count = (size_t)f->limit;
        }
        *out = list;
    }
    return rc;
}

/* docstore_documents' rows, decoded one by one as they arrive. */
struct decode {
    const struct docstore_ctx *ctx;
    const struct docstore_filter *f;
    json_t *docs;
    struct json_intern *shared; /* f->shared_values */
};

static int decode_row(void *arg, const struct store_rows *rows, struct purser_error *err)
{
    struct decode *d = arg;
    struct row r = {.rows = rows, .i = 0};
    json_t *doc = row_document(d->ctx, d->f, &r, d->shared, err);
    if (!doc)
        return err->code;
    return json_array_append_new(d->docs, doc) ? purser_error_set(err, PURSER_EINTERNAL, "oom") : 0;
}

int docstore_documents(const struct docstore_ctx *ctx, long long id,
                       const struct docstore_filter *f, json_t **out, struct purser_error *err)
{
    /* each row is decoded as it comes from the server and dropped: a large revision's text
     * never sits whole in memory beside its documents */
    struct decode d = {ctx, f, json_array(), f->shared_values ? json_intern_new() : NULL};
    struct buf sql = BUF_INIT;
    struct docstore_params p = {.n = 0};
    int rc;
    *out = NULL;
    if (!d.docs || (f->shared_values && !d.shared)) {
        json_decref(d.docs);
        return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    }
    if ((rc = docstore_revision_check(ctx, id, err)))
        ;
    else if ((rc = build_query(ctx, id, f, 0, &sql, &p)))
        rc = docstore_query_failed(rc, "too many filter values", err);
    else
        rc = store_query_each(ctx->store, buf_cstr(&sql), p.v, p.n, decode_row, &d, err);
    buf_release(&sql);
    json_intern_free(d.shared); /* (the documents keep what they use) */
    if (!rc && sql_paged(f)) {  /* sorted and cut by the server */
        size_t count = json_array_size(d.docs);
        page_cut(f, &count);
        if (count < json_array_size(d.docs))
            json_array_remove(d.docs, count);
        rc = page_total(ctx, id, f, err);
    } else if (!rc && (docstore_sort_json(d.docs, f) ||
                       (f->page && docstore_page_slice(d.docs, f->page)))) {
        rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    }
    if (rc)
        json_decref(d.docs);
    else
        *out = d.docs;
    return rc;
}

/* The "status:" lines of a row, emitted once per bucket and revision. */
struct status_cache {
    const char *bucket;
    long long revision;
    struct buf text;
};

static int status_lines(struct status_cache *cache, size_t *used, size_t cap, const char *bucket,
                        long long revision, const struct buf **out, struct purser_error *err)
{
    size_t i;
    int rc = 0;
    for (i = 0; i < *used; i++)
        if (cache[i].revision == revision && strcmp(cache[i].bucket, bucket) == 0)
            break;
    if (i == *used) {
        if (*used == cap)
            i = cap - 1, buf_reset(&cache[i].text); /* many pairs: recycle the last slot */
        else
            (*used)++;
        cache[i].bucket = bucket;
        cache[i].revision = revision;
        rc = document_status_yaml(&cache[i].text, bucket, revision, err);
    }
    if (!rc)
        *out = &cache[i].text;
    return rc;
}

/* The YAML of one row: as stored, or emitted now (encrypted, or decoded to be sorted). */
static int row_yaml(const struct docstore_ctx *ctx, const struct docstore_filter *f,
                    const struct row *r, struct buf *out, struct purser_error *err)
{
    json_error_t jerr;
    json_t *meta, *data;
    int rc;
    if (r->doc)
        return document_yaml(out, cell(r, C_SCHEMA), json_object_get(r->doc, "metadata"),
                             json_object_get(r->doc, "data"), err);
    if (cell(r, C_YAML))
        return buf_add(out, cell(r, C_YAML), cell_len(r, C_YAML))
                   ? purser_error_set(err, PURSER_EINTERNAL, "out of memory")
                   : 0;
    /* encrypted: the metadata is in column C_YAML + 1 */
    meta = json_loads(store_cell(r->rows, r->i, C_YAML + 1), 0, &jerr);
    data = meta ? row_data(ctx, f, r, NULL, err) : NULL;
    rc = meta && data ? document_yaml(out, cell(r, C_SCHEMA), meta, data, err)
                      : purser_error_set(err, PURSER_EINTERNAL, "a stored document is unreadable");
    json_decref(meta);
    json_decref(data);
    return rc;
}

int docstore_documents_yaml(const struct docstore_ctx *ctx, long long id,
                            const struct docstore_filter *f, struct buf *out,
                            struct purser_error *err)
{
    struct status_cache cache[16];
    size_t used = 0, count = 0;
    struct store_rows rows;
    struct row *list;
    int rc = select_rows(ctx, id, f, &list, &count, &rows, err);

    memset(cache, 0, sizeof(cache));
    for (size_t i = 0; !rc && i < count; i++) {
        const struct buf *status = NULL;
        rc = buf_adds(out, "---\n") ? purser_error_set(err, PURSER_EINTERNAL, "out of memory") : 0;
        if (!rc)
            rc = row_yaml(ctx, f, &list[i], out, err);
        if (!rc)
            rc = status_lines(cache, &used, 16, cell(&list[i], C_BUCKET),
                              atoll(cell(&list[i], C_SINCE)), &status, err);
        if (!rc && buf_add(out, status->data, status->len))
            rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    }
    for (size_t i = 0; i < count; i++)
        json_decref(list[i].doc);
    for (size_t i = 0; i < 16; i++)
        buf_release(&cache[i].text);
    return rc;
}
