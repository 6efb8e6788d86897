/* docstore.h: the document store of SPEC §5: buckets, numbered revisions, tags, rollback,
 * diffs and validation results, per organization, in MariaDB.
 *
 * Revision ids count from 1 per organization (DELETE revisions purges everything and starts
 * again at 1). A write is one transaction that makes one new revision, or none when it
 * changes nothing. Contents are stored once (doc_contents); each row of doc_revision_documents
 * holds one content over an interval of revisions (sql/0019), so a revision stores what it
 * changed, and reading revision N costs what N holds plus the rows closed since.
 * Encrypted documents' data is sealed with the keyring (SPEC §7) and opened only for callers
 * that may read it. Every function answers Deckhand's shapes as jansson values the caller
 * owns; messages follow Deckhand's where clients depend on them.
 */
#ifndef PURSER_DOCSTORE_H
#define PURSER_DOCSTORE_H

#include "base/arena.h"
#include "base/buf.h"
#include "base/err.h"
#include "codec/yaml_codec.h"
#include "docs/document.h"
#include "store/store.h"

#include <jansson.h>

struct keyring;
struct lru;

/* Who asks, where, with what. */
struct docstore_ctx {
    struct store *store;
    struct arena *arena;
    const struct keyring *keyring; /* NULL: encrypted documents cannot be written or read */
    long long org_id;
    const char *principal;
    const char *base_url;                      /* "https://host/api/v1.0" for url fields */
    int read_encrypted;                        /* may see encrypted documents' data */
    int write_encrypted;                       /* may replace or delete encrypted documents */
    struct lru *render_cache;                  /* rendered revisions (NULL: none) */
    const struct render_limits *render_limits; /* NULL: render_limits_default */
};

enum docstore_mode {
    DOCSTORE_PUT_BUCKET, /* the payload is the bucket's whole content */
    DOCSTORE_POST,       /* the payload adds, replaces and (tombstones) deletes */
};

/* Writes docs (checked by document_prepare) into bucket. Appends to out the YAML stream of
 * the documents written (encrypted data redacted), each with status {bucket, revision}; when
 * none remain, one document with the status only. A write that changes nothing makes no
 * revision (the status then names the latest). Errors: 409 when a document belongs to
 * another bucket or a second LayeringPolicy would exist; 403 when it would change or delete
 * an encrypted document without ctx->write_encrypted. */
int docstore_write(const struct docstore_ctx *ctx, const char *bucket, enum docstore_mode mode,
                   const struct document *docs, size_t count, struct buf *out,
                   struct purser_error *err);

/* What docstore_write_stream tells about a payload that failed. */
struct docstore_stream {
    json_t *messages;          /* the documents' faults (a new array the caller owns), or NULL */
    int parse_failed;          /* the error is the YAML parser's (it has a line and column) */
    int needs_write_encrypted; /* PURSER_EDENIED: a document is to be sealed, and ctx does not
                                  have write_encrypted */
};

/* docstore_write of the YAML stream text (yaml_codec_parse_each with limits), checked by
 * document_check: the store writes each batch of documents while the next is parsed, in a
 * thread of its own (its transaction rolled back when the payload fails). The payload's
 * failures come first and in the order a payload checked whole would show them: its YAML, its
 * documents' faults (s->messages), an identity given twice, a document to seal without
 * ctx->write_encrypted, the bucket name, the keyring; then the store's, as docstore_write's.
 * The caller's thread must not use ctx->store or ctx->arena until it returns. */
int docstore_write_stream(const struct docstore_ctx *ctx, const char *bucket,
                          enum docstore_mode mode, const char *text, size_t len,
                          const struct yaml_limits *limits, struct buf *out,
                          struct docstore_stream *s, struct purser_error *err);

/* Deletes every document of schema and name (any layer, any bucket) in a new revision;
 * PURSER_ENOTFOUND when the latest revision has none. out as docstore_write's. */
int docstore_delete_document(const struct docstore_ctx *ctx, const char *schema, const char *name,
                             struct buf *out, struct purser_error *err);

/* A page of a list (the admin pages', purserctl's): size (page_size, 1..1000), offset (page_token,
 * a position a previous page gave) and filter= conditions (field==value or field!=value, ';'
 * between them, all must hold; '*' in a value any text). Parsed by docstore_page_parse; a list
 * sets total (what its filters select) and next (the next page's offset, -1 at the end). */
#define DOCSTORE_PAGE_DEFAULT 100
#define DOCSTORE_PAGE_MAX 1000
#define DOCSTORE_PAGE_CONDS 10

struct docstore_cond {
    const char *field, *pattern; /* pattern: a LIKE pattern ('*' as %, % _ \\ escaped) */
    const char *value;           /* as given */
    int negative;
};

struct docstore_page {
    long size, offset;
    struct docstore_cond conds[DOCSTORE_PAGE_CONDS];
    size_t cond_count;
    long long total;
    long next;
};

/* The filter fields of a revision's documents (name, schema, layer, bucket; text: name or
 * schema) and of the revisions (tag, bucket; text: a tag or a bucket). */
extern const char *const docstore_document_fields[];
extern const char *const docstore_revision_fields[];

/* page_size (default DOCSTORE_PAGE_DEFAULT, clamped to 1..DOCSTORE_PAGE_MAX), page_token and
 * filter (on fields) into out: PURSER_EINVAL naming the parameter otherwise. */
int docstore_page_parse(struct arena *arena, const char *page_size, const char *page_token,
                        const char *filter, const char *const *fields, struct docstore_page *out,
                        struct purser_error *err);

/* The filters, sort and limit of GET revisions/{id}/documents. Lists are OR-ed within a
 * filter (labels are AND-ed), filters AND-ed with each other. */
struct docstore_filter {
    const char **schemas;
    size_t schema_count; /* whole sections: "a", "a/B" or "a/B/v1" */
    const char **names;
    size_t name_count;
    const char **layers;
    size_t layer_count;
    const char **labels; /* "key=value" */
    size_t label_count;
    const char **buckets;
    size_t bucket_count;
    int abstract;      /* -1 any, 0, 1 */
    const char **sort; /* dotted paths into the document ("metadata.name") */
    size_t sort_count;
    int descending;
    long limit;                 /* -1 none */
    int redact;                 /* cleartext-secrets=false: encrypted data replaced */
    int with_yaml_head;         /* docstore_documents: keep each stored YAML's schema and metadata
                                   lines under DOCSTORE_YAML_HEAD (a private key, never sent) */
    struct docstore_page *page; /* NULL: every document; else one page of them (limit unused),
                                   page->total and page->next set */
    int shared_values;          /* docstore_documents: equal parts of the documents (metadata, data,
                                   status and everything inside them) are one shared value
                                   (base/json_intern.h): read-only, copy before changing any */
};

#define DOCSTORE_YAML_HEAD "\001yaml-head"

/* The documents of revision id that pass filter, each with status {bucket, revision}, as a
 * JSON array (*out). PURSER_ENOTFOUND for a revision that does not exist. Encrypted
 * documents are left out unless ctx->read_encrypted or filter->redact (then they are listed,
 * their data redacted: a reader sees that they exist, never their values). */
int docstore_documents(const struct docstore_ctx *ctx, long long id,
                       const struct docstore_filter *filter, json_t **out,
                       struct purser_error *err);

/* The same as a YAML stream appended to out: cleartext documents are sent as stored when
 * they were written, without decoding them again. */
int docstore_documents_yaml(const struct docstore_ctx *ctx, long long id,
                            const struct docstore_filter *filter, struct buf *out,
                            struct purser_error *err);

/* GET revisions/{id}/rendered-documents: the revision's documents layered and substituted
 * (lib/render), the concrete ones validated against their DataSchema or built-in schema,
 * filtered (schema, metadata.name, metadata.label, status.bucket), sorted and limited,
 * appended to out as YAML. A validation failure is PURSER_EINVAL with *messages (new array
 * of D002 ValidationMessages naming the schema path; values never quoted). Results are kept
 * in ctx->render_cache by organization, revision (and its creation time: a purged and
 * re-made revision is another) and whether encrypted data may be seen. */
int docstore_rendered_yaml(const struct docstore_ctx *ctx, long long id,
                           const struct docstore_filter *filter, struct buf *out, json_t **messages,
                           struct purser_error *err);

/* docstore_rendered_yaml for a filter without sort, page or limit (the documents in the
 * rendering's order), and *secrets: for each of them, from the same rendering, whether it
 * holds a secret (a new array of booleans: true for an encrypted document and for one any
 * value of which came from an encrypted document, render.h's marks). *secrets is the caller's
 * to release whatever the result. */
int docstore_rendered_marked(const struct docstore_ctx *ctx, long long id,
                             const struct docstore_filter *filter, struct buf *out,
                             json_t **secrets, struct purser_error *err);

/* GET revisions/{a}/deepdiff/{b}: the diff of the rendered revisions, with "<bucket> diff"
 * details for modified buckets (documents added, deleted, and changed in deepdiff's shape;
 * an encrypted document's data change shows only {encrypted: true}, and values that came
 * from an encrypted document are redacted). */
int docstore_deepdiff(const struct docstore_ctx *ctx, long long a, long long b, json_t **out,
                      json_t **messages, struct purser_error *err);

/* The latest revision id (0 when there is none). */
int docstore_latest(const struct docstore_ctx *ctx, long long *out, struct purser_error *err);

/* What GET revisions asks: tags (OR-ed), sort "id" or "createdAt" (NULL: id), descending;
 * limit (> 0: keyset pages) with page_token (NULL: the first page); conds (NULL: none, else
 * docstore_revision_fields' conditions). */
struct docstore_revision_query {
    const char **tags;
    size_t tag_count;
    const char *sort;
    int descending;
    long limit;
    const char *page_token;
    const struct docstore_page *conds;
    int with_total; /* with limit: "total" too */
};

/* GET revisions: {count, next, prev, results: [{id, url, createdAt, buckets, tags,
 * validationPolicies, status}]}. With q->limit, at most limit results after q->page_token,
 * "next_page_token" ("" at the end) and with q->with_total "total" (what the tags and
 * conditions select);
 * without, Deckhand's whole list. */
int docstore_revisions(const struct docstore_ctx *ctx, const struct docstore_revision_query *q,
                       json_t **out, struct purser_error *err);

/* GET revisions/{id}: {id, url, createdAt, buckets, tags: {tag: data}, validationPolicies:
 * {name: {url, status, validations: [...]}}, status}. status is failed when a ValidationPolicy
 * failed or one of Deckhand's own validations (docstore_validation_reserved) did. */
int docstore_revision(const struct docstore_ctx *ctx, long long id, json_t **out,
                      struct purser_error *err);

/* DELETE revisions: every revision, document, bucket, tag and validation of the
 * organization; the next revision is 1 again. */
int docstore_purge(const struct docstore_ctx *ctx, struct purser_error *err);

/* GET revisions/{a}/diff/{b}: {bucket: created|deleted|modified|unmodified}; 0 is the empty
 * revision before the first. */
int docstore_diff(const struct docstore_ctx *ctx, long long a, long long b, json_t **out,
                  struct purser_error *err);

/* POST rollback/{id}: a new revision with the documents of id (0: none). *out as
 * docstore_revision's. */
int docstore_rollback(const struct docstore_ctx *ctx, long long id, json_t **out,
                      struct purser_error *err);

/* Tags. create: data NULL or a mapping (PURSER_EINVAL otherwise), an existing tag's data is
 * replaced; *out {tag: data}. get: {tag: data}. list: {tag: data, ...}. delete one (404 when
 * absent) or all. */
int docstore_tag_create(const struct docstore_ctx *ctx, long long id, const char *tag,
                        const json_t *data, json_t **out, struct purser_error *err);
int docstore_tag_get(const struct docstore_ctx *ctx, long long id, const char *tag, json_t **out,
                     struct purser_error *err);
int docstore_tag_list(const struct docstore_ctx *ctx, long long id, json_t **out,
                      struct purser_error *err);
int docstore_tag_delete(const struct docstore_ctx *ctx, long long id, const char *tag,
                        struct purser_error *err);

/* 1 when name is reserved for Deckhand's own validations: it begins with "deckhand" (the seed:
 * such names are for internal use). */
int docstore_validation_reserved(const char *name);

/* Validations. create: body {status: success|succeeded|failure|failed, validator, errors};
 * *out the entry; a name docstore_validation_reserved is PURSER_EINVAL. list: {count, results:
 * [{name, url, status}]} (latest entry each). detail: every entry in full. entries: one name's
 * {count, results: [{id, url, status}]}. entry: one in full with createdAt, expiresAfter,
 * expiresAt. Every write records two of its own, entry 0 of each: deckhand-schema-validation
 * (the concrete documents, layered and substituted, pass their DataSchema or built-in schema)
 * and deckhand-policy-validation (every document's layer is in the LayeringPolicy's
 * layerOrder), failure with Deckhand's error entries when they do not. */
int docstore_validation_create(const struct docstore_ctx *ctx, long long id, const char *name,
                               const json_t *body, json_t **out, struct purser_error *err);
int docstore_validation_list(const struct docstore_ctx *ctx, long long id, int detail, json_t **out,
                             struct purser_error *err);
int docstore_validation_entries(const struct docstore_ctx *ctx, long long id, const char *name,
                                json_t **out, struct purser_error *err);
int docstore_validation_entry(const struct docstore_ctx *ctx, long long id, const char *name,
                              long long entry, json_t **out, struct purser_error *err);

/* Re-seals up to batch encrypted contents not sealed under the newest keyring slot (of any
 * organization). *done gets how many were re-sealed, *left how many remain after. */
int docstore_rotate_batch(struct store *store, struct arena *arena, const struct keyring *ring,
                          long batch, long *done, long *left, struct purser_error *err);

/* How many contents are sealed under keyring slot key_id. */
int docstore_count_sealed(struct store *store, struct arena *arena, int key_id, long *count,
                          struct purser_error *err);

/* The documents' part in an organization's export and import (lib/resource/transfer_hooks.h;
 * docstore_transfer.c): DocumentBucket (the latest revision's documents of that bucket; an
 * encrypted document's data only with transfer_ctx.secrets, else its schema/name is listed in
 * spec.redacted, and an import leaves it out, in left_out), then RevisionTag and Validation (of
 * the latest revision; not Deckhand's own, which every write records). */
struct transfer_hooks;
extern const struct transfer_hooks docstore_transfer;

#endif
