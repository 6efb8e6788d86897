/* docstore_render_cache.c: rendered revisions in the worker's cache, laid out so that a page
 * of a revision's rendered documents reads only its own documents: a 16,000-document
 * revision's page of 100 parses 100 documents, not 16,000. */
#include "docs/docstore_private.h"

#include "base/json_text.h"
#include "base/lru.h"
#include "codec/jsonmask.h"

#include <stdint.h>
#include <string.h>
#include <time.h>

/* A rendering as the cache keeps it: the count of documents n, then for each document the
 * [start, end) of its JSON text and of its mask's within the text that follows, then that
 * text, {"documents": [...], "secrets": [...]}, as json_text writes it. */
struct span {
    size_t doc_start, doc_end, mask_start, mask_end;
};

#define HEADER(n) (sizeof(size_t) + (n) * sizeof(struct span))

/* Appends each of list's values (JSON, compact) between open and close, recording the
 * [start, end) of value i in the text (counted from text_at) at starts[i * 4], ends[i * 4]. */
static int add_list(struct buf *b, size_t text_at, const json_t *list, const char *open,
                    const char *close, size_t *starts, size_t *ends)
{
    const json_t *v;
    size_t i;
    int rc = buf_adds(b, open);
    json_array_foreach (list, i, v) {
        if (!rc && i)
            rc = buf_addc(b, ',');
        starts[i * 4] = b->len - text_at;
        if (!rc)
            rc = json_text_append(b, v, JSON_COMPACT | JSON_ENCODE_ANY);
        ends[i * 4] = b->len - text_at;
    }
    if (!rc)
        rc = buf_adds(b, close);
    return rc;
}

int docstore_cache_put(const struct docstore_ctx *ctx, const char *key, const json_t *rendering)
{
    const json_t *docs = json_object_get(rendering, "documents");
    const json_t *secrets = json_object_get(rendering, "secrets");
    size_t n = json_array_size(docs);
    struct span *at = calloc(n ? n : 1, sizeof(*at));
    struct buf b = BUF_INIT;
    int rc = at && json_array_size(secrets) == n ? buf_grow(&b, HEADER(n)) : PURSER_EINTERNAL;
    if (!rc) {
        b.len = HEADER(n);
        rc = add_list(&b, HEADER(n), docs, "{\"documents\":[", "],", &at->doc_start, &at->doc_end);
    }
    if (!rc)
        rc =
            add_list(&b, HEADER(n), secrets, "\"secrets\":[", "]}", &at->mask_start, &at->mask_end);
    if (!rc) {
        memcpy(b.data, &n, sizeof(n));
        memcpy(b.data + sizeof(n), at, n * sizeof(*at));
        rc = lru_put(ctx->render_cache, key, b.data, b.len, time(NULL));
    }
    free(at);
    buf_release(&b);
    return rc ? PURSER_EINTERNAL : 0;
}

/* The cached rendering under key: its count, spans and text (borrowed), or 0. */
static int cached(const struct docstore_ctx *ctx, const char *key, size_t *n,
                  const struct span **at, const char **text, size_t *len)
{
    size_t hit_len = 0;
    const char *hit =
        ctx->render_cache ? lru_get(ctx->render_cache, key, &hit_len, time(NULL)) : NULL;
    if (!hit || hit_len < sizeof(size_t))
        return 0;
    memcpy(n, hit, sizeof(*n));
    if (*n > (hit_len - sizeof(size_t)) / sizeof(struct span))
        return 0;
    *at = (const struct span *)(hit + sizeof(size_t));
    *text = hit + HEADER(*n);
    *len = hit_len - HEADER(*n);
    return 1;
}

json_t *docstore_cache_get(const struct docstore_ctx *ctx, const char *key)
{
    const struct span *at;
    const char *text;
    size_t n, len;
    json_error_t jerr;
    return cached(ctx, key, &n, &at, &text, &len) ? json_loadb(text, len, 0, &jerr) : NULL;
}

json_t *docstore_redacted_copy(const json_t *doc, const json_t *mask)
{
    json_t *copy = json_copy((json_t *)doc);
    json_t *data = jsonmask_apply(json_object_get(doc, "data"), mask, REDACTED);
    if (!copy || !data || json_object_set_new(copy, "data", data)) {
        json_decref(copy);
        return NULL;
    }
    return copy;
}

/* A request that takes a page of the documents as they lie: nothing filters or orders them. */
static int plain_page(const struct docstore_filter *f)
{
    return f->page && !f->page->cond_count && !f->schema_count && !f->name_count &&
           !f->layer_count && !f->label_count && !f->bucket_count && !f->sort_count &&
           !f->descending && f->limit < 0;
}

int docstore_cache_page(const struct docstore_ctx *ctx, const char *key,
                        const struct docstore_filter *f, json_t **out)
{
    const struct span *at;
    const char *text;
    size_t n, len, from;
    struct docstore_page *pg = f->page;
    json_t *page;
    *out = NULL;
    if (!plain_page(f) || !cached(ctx, key, &n, &at, &text, &len))
        return 0;
    if (!(page = json_array()))
        return -1;
    from = (size_t)pg->offset;
    pg->total = (long long)n;
    pg->next = from < n && n - from > (size_t)pg->size ? pg->offset + pg->size : -1;
    for (size_t i = from; i < n && i < from + (size_t)pg->size; i++) {
        json_error_t jerr;
        json_t *doc = json_loadb(text + at[i].doc_start, at[i].doc_end - at[i].doc_start, 0, &jerr);
        json_t *mask = json_loadb(text + at[i].mask_start, at[i].mask_end - at[i].mask_start,
                                  JSON_DECODE_ANY, &jerr);
        json_t *shown = !doc || !mask                     ? NULL
                        : f->redact && jsonmask_any(mask) ? docstore_redacted_copy(doc, mask)
                                                          : json_incref(doc);
        json_decref(doc);
        json_decref(mask);
        if (!shown || json_array_append_new(page, shown)) {
            json_decref(page);
            return -1;
        }
    }
    *out = page;
    return 1;
}
