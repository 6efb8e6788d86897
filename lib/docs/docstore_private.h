/* docstore_private.h: the document store's internals, shared by its files (docstore.c,
 * docstore_feed.c, docstore_stream.c, docstore_plan.c, docstore_checks.c and docstore_purge.c
 * write; docstore_read.c, docstore_documents.c, docstore_render.c, docstore_keys.c), which
 * include this header and never each other. Defined in docstore_common.c, except
 * docstore_sort_json (docstore_documents.c, beside the filters it shares its comparisons with)
 * and the writer's and the rendering's (below: each names its file).
 *
 * The calls of lib/docs go one way, never back: fcgi -> docstore_stream.c (a parsed write) ->
 * docstore.c (the writer) -> docstore_feed.c (the feed, which calls nothing of the store);
 * docstore_purge.c -> docstore.c; docstore.c and docstore_purge.c -> docstore_checks.c ->
 * docstore_render.c -> render*.c (the engine) -> document.c and dataschema.c (the model,
 * which calls no engine: the engine reads the model's tables, as document_actions). The
 * right to write encrypted documents is decided by the caller (ctx->write_encrypted) and read
 * only by docstore_encrypted_check. */
#ifndef PURSER_DOCSTORE_PRIVATE_H
#define PURSER_DOCSTORE_PRIVATE_H

#include "base/buf.h"
#include "docs/docstore.h"

#include <pthread.h>

/* One document of a stored revision. */
struct member {
    long long content_id, bucket_id, since;
    long long from; /* the first revision of its row (doc_revision_documents.revision_id) */
    const char *bucket, *schema, *layer, *name;
    const unsigned char *sha; /* 32 bytes */
    int abstract, encrypted;
    int drop;   /* not carried into the next revision */
    int kept;   /* carried unchanged (its replacement in the payload is identical) */
    int closed; /* its row's interval is ended already (replaced by a payload document) */
};

#define REDACTED "[redacted]"

/* The render cache's key of revision id (organization, revision, its creation time, who may
 * see secrets), in arena; NULL with PURSER_ENOTFOUND when there is no such revision. */
char *docstore_render_key(const struct docstore_ctx *ctx, long long id, struct purser_error *err);

/* The rendered revision {documents, secrets} under cache key (docstore_render_key), from the
 * cache or rendered now (a new reference); keep: put it in the cache (an unfiltered answer
 * keeps its YAML instead). *messages: the D002 entries of a validation failure. */
int docstore_rendering(const struct docstore_ctx *ctx, long long id, const char *key, int keep,
                       json_t **out, json_t **messages, struct purser_error *err);

/* Keeps a rendering {documents, secrets} under key in ctx->render_cache, laid out so that a
 * page reads only its own documents (docstore_render_cache.c). 0 or PURSER_EINTERNAL. */
int docstore_cache_put(const struct docstore_ctx *ctx, const char *key, const json_t *rendering);

/* The rendering kept under key (a new reference), or NULL when there is none. */
json_t *docstore_cache_get(const struct docstore_ctx *ctx, const char *key);

/* A page of the rendering kept under key, for a filter that only pages (no condition, sort or
 * limit): *out, the page's documents (a new array; redacted when filter->redact), and
 * filter->page's total and next set. 1 when it answered, 0 when it cannot (not such a filter,
 * or not kept: the caller renders), -1 when out of memory. */
int docstore_cache_page(const struct docstore_ctx *ctx, const char *key,
                        const struct docstore_filter *filter, json_t **out);

/* doc with the values mask marks replaced by REDACTED in its data (a new reference; NULL when
 * out of memory). */
json_t *docstore_redacted_copy(const json_t *doc, const json_t *mask);

/* A comparison's private key for a document's data as rendered, when its "data" is redacted
 * (never sent): two renderings differ when their secrets do, without showing them. */
#define DOCSTORE_CLEAR_DATA "\001clear-data"

/* A row of doc_revision_documents holds revisions [revision_id, until_revision): OPEN while the
 * newest revision holds it. IN_REVISION is the condition on row m that it holds revision ?
 * (bound twice, both the revision). */
#define DOCSTORE_OPEN "9223372036854775807"
#define DOCSTORE_IN_REVISION " m.until_revision > ? AND m.revision_id <= ?"

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
int docstore_revision_check(const struct docstore_ctx *ctx, long long id, struct purser_error *err);

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

/* Adds a value: PURSER_EINVAL when full. */
int docstore_param(struct docstore_params *p, struct store_value v);

/* The error of a query that could not be built (rc from the builders): its parameters full,
 * PURSER_EINVAL with too_many as the message (a 400), or out of memory (a 500 that says so). */
int docstore_query_failed(int rc, const char *too_many, struct purser_error *err);

/* Appends " AND col IN (?,?)" for values (nothing when there are none): -1 when full. */
int docstore_filter_in(struct buf *sql, struct docstore_params *p, const char *col,
                       const char **values, size_t n);

/* The lists as pages (docstore_page.c). Appends " AND (template)" for each of pg's conditions
 * (NOT for !=), templates[i] the SQL of fields[i] with each ? bound to the condition's LIKE
 * pattern: PURSER_EINVAL when the parameters are full, PURSER_EINTERNAL when out of memory. */
int docstore_page_where(const struct docstore_page *pg, const char *const *fields,
                        const char *const *templates, struct buf *sql, struct docstore_params *p);
/* 1 when the document (JSON) passes pg's docstore_document_fields conditions. */
int docstore_page_matches(const struct docstore_page *pg, const json_t *doc);
/* Keeps pg's page of docs (sorted and filtered), setting pg->total and pg->next: -1 when out
 * of memory. */
int docstore_page_slice(json_t *docs, struct docstore_page *pg);

/* Sorts documents (a JSON array) by filter->sort paths and order, stably, then applies
 * filter->limit. -1 when out of memory. */
int docstore_sort_json(json_t *docs, const struct docstore_filter *filter);

/* ---- the writer (docstore.c, docstore_feed.c, docstore_plan.c, docstore_purge.c) ---- */

/* What write_txn returns, past the error codes, for store_txn to roll back: */
#define WRITE_UNCHANGED 1 /* nothing changed: no revision (the answer is in out) */
#define WRITE_ABANDONED 2 /* the payload failed while it was being written */

/* One payload document and its YAML (data redacted if sealed), as the writer reads it. */
struct item {
    const struct document *doc; /* its doc (the JSON): see struct feed */
    json_t *json;               /* the parser's reference to own.doc, until released */
    char *yaml;                 /* NULL for a Tombstone */
    const char **labels;        /* metadata.labels: key, value, key, value, ... */
    size_t label_count;
    struct document own; /* the document, when the feed's parser checked it */
};

/* The payload on its way to the writer. A write of a parsed stream runs the writer (the
 * store's transaction) in a thread of its own while the caller's thread parses, checks and
 * emits the documents, so that MariaDB stores each batch while the next is parsed. The parser
 * fills items in order and publishes them under lock (ready); the writer reads the items
 * below ready without it. Blocks never move, and the block table only grows (a new copy, the
 * old kept in the arena), so what the writer has seen stays valid.
 * Each document's content hash (document_hash, from its JSON) and its YAML are taken as it
 * comes, off the parser's thread (docstore_prepare_items): by a preparer thread of its own
 * when there is one (prepared; the writer then waits for hashed, not ready, so that its waits
 * for MariaDB and the preparer's work overlap), else by the writer. Then the item is marked
 * hashed (atomic; signalled on done): from there on only what was kept is read, and the
 * parser releases the JSON (a sealed document's stays, in the parser's list of them, for the
 * writer to seal). */
enum feed_state { FEED_OPEN, FEED_DONE, FEED_FAILED };
struct feed {
    int synced; /* the lock and conditions were made (docstore_feed_init, threaded) */
    pthread_mutex_t lock;
    pthread_cond_t more;
    pthread_cond_t done; /* hashed moved on, or a thread ended (ended, prepared_ended) */
    int threaded;        /* a thread runs: the lock is taken (the stream sets it, and
                            prepared, before a thread starts) */
    int prepared;        /* a preparer thread runs */
    int ended;           /* the writer ended */
    int prepared_ended;  /* the preparer ended: every item published is hashed, or it failed */
    struct item **blocks;
    size_t block_cap;
    size_t count;       /* items filled (the parser's alone) */
    size_t ready;       /* items published */
    size_t hashed;      /* items the writer has hashed (atomic: written by the writer alone) */
    long long revision; /* the revision the writer is writing, once its row is in (locked) */
    enum feed_state state;
};

/* One document of the revision being written. */
struct entry {
    const struct document *doc;  /* NULL when carried from the previous revision */
    const struct item *item;     /* the payload's, with doc */
    const struct member *member; /* the previous revision's row, or NULL */
    struct member *replaced;     /* the previous revision's row it changes, or NULL */
    long long content_id, bucket_id, since;
    int is_new;  /* its content must be stored */
    int goes_on; /* member's row, unchanged, holds the new revision too: no row written */
};

struct write {
    const struct docstore_ctx *ctx;
    const char *bucket;
    enum docstore_mode mode;
    struct feed *feed;
    const char *delete_schema, *delete_name; /* DELETE documents/{schema}/{name} */
    long long bucket_id, latest, revision;
    struct member *members;
    size_t member_count;
    const struct member **sorted; /* members by identity */
    struct buf *out;
    int answer_later; /* the caller writes out, from answer_bucket and answer_revision */
    const char *answer_bucket;
    long long answer_revision;
    /* this attempt's: */
    int changed, any_payload;
    const char *layering, *layering_layer; /* the first LayeringPolicy of the revision */
    const char *second_schema, *second_layer, *second_name; /* a second one */
};

/* -- the feed (docstore_feed.c), the one interface between the threads of a write: it calls
 * nothing of the store. The producer (the parser, or docstore_write) fills items with
 * docstore_feed_next and docstore_feed_filled and publishes them; the preparer waits for
 * published items (docstore_feed_wait_published), the writer for what it may store
 * (docstore_feed_wait), and whoever hashes items says so (docstore_feed_hashed). -- */

/* An empty feed, FEED_OPEN; threaded: with its lock (released by docstore_feed_release). */
void docstore_feed_init(struct feed *f, int threaded);
void docstore_feed_release(struct feed *f);

/* The feed's item i. */
struct item *docstore_feed_item(struct item *const *blocks, size_t i);

/* The producer's: the next item to fill (arena memory; NULL when out of memory), then
 * docstore_feed_filled once it is; docstore_feed_publish hands the items filled so far to the
 * consumers, and ends the feed when state is not FEED_OPEN. */
struct item *docstore_feed_next(struct feed *f, struct arena *arena);
void docstore_feed_filled(struct feed *f);
void docstore_feed_publish(struct feed *f, enum feed_state state);

/* The preparer's: waits until items from `from` on are published, or the feed ends; *until:
 * the items published, *blocks the block table to read them through. */
enum feed_state docstore_feed_wait_published(struct feed *f, size_t from, size_t *until,
                                             struct item *const **blocks);

/* The writer's: waits until items from `from` on are published, or the feed ends: with a
 * preparer thread, until they are hashed, or every item is. */
enum feed_state docstore_feed_wait(struct feed *f, size_t from, size_t *until,
                                   struct item *const **blocks);

/* Items below `to` are hashed (their JSON may go); how many are (the parser's reading). */
void docstore_feed_hashed(struct feed *f, size_t to);
size_t docstore_feed_hashed_count(struct feed *f);

/* The writer's revision, once its row is in (for the answer the parser writes meanwhile). */
void docstore_feed_set_revision(struct feed *f, long long revision);

/* Waits until every item is hashed or a thread ended: the writer's revision, or -1 when it
 * has none yet or a thread ended first (threaded feeds only). */
long long docstore_feed_wait_all_hashed(struct feed *f);

/* A thread of the write ended: the writer, or the preparer. */
void docstore_feed_writer_ended(struct feed *f);
void docstore_feed_preparer_ended(struct feed *f);

/* -- defined in docstore_plan.c -- */

/* The bucket of the document w deletes in the previous revision, or NULL. */
const char *docstore_find_member_by_name(const struct write *w);

/* The previous revision's document of that identity, or NULL. */
const struct member *docstore_find_member(const struct write *w, const char *schema,
                                          const char *layer, const char *name);

/* Takes the organization's write lock and reads the next revision id. */
int docstore_lock_head(struct write *w, struct purser_error *err);

/* Reads the previous revision's documents into w (members and sorted). */
int docstore_load_previous(struct write *w, struct purser_error *err);

/* The id of w's bucket (created when new) into w->bucket_id. */
int docstore_bucket_id(struct write *w, struct purser_error *err);

/* Each payload document of items [from, to) new, changed or unchanged. */
int docstore_plan_documents(struct write *w, struct item *const *items, size_t from, size_t to,
                            struct entry *entries, size_t *entry_count, struct purser_error *err);

/* The rows of the previous revision that stay, into entries. */
void docstore_plan_carried(struct write *w, struct entry *entries, size_t *entry_count);

/* PURSER_EEXISTS when the new revision would hold two LayeringPolicies. */
int docstore_check_singleton(const struct write *w, struct purser_error *err);

/* -- defined in docstore.c -- */

/* The new revision's row (its buckets come with docstore_finish_revision). */
int docstore_insert_revision(struct write *w, struct purser_error *err);

/* The revision's buckets, the head moved past it, and its event. */
int docstore_finish_revision(struct write *w, const struct entry *carried, size_t n,
                             struct purser_error *err);

/* The rows of the new revision for entries (none for those that go on). */
int docstore_write_members(struct write *w, const struct entry *entries, size_t n,
                           struct purser_error *err);

/* Ends, before the new revision, the rows of the previous one marked drop and not kept. */
int docstore_close_members(struct write *w, struct purser_error *err);

/* Writes w->out: items' documents (encrypted data never echoed), or the status alone. */
int docstore_write_answer(struct write *w, struct item *const *items, size_t count,
                          const char *bucket, long long revision, struct purser_error *err);

/* rc of a write of the new revision's rows; a key taken already is a conflict. */
int docstore_written(struct write *w, int rc, struct purser_error *err);

/* Runs the write's transaction (a write that changes nothing: 0, no revision). */
int docstore_run_write(struct write *w, struct purser_error *err);

/* Takes the content hash and the YAML of items [from, to) (in arena, once), then marks them
 * hashed. */
int docstore_prepare_items(struct feed *f, struct arena *arena, struct item *const *items,
                           size_t from, size_t to, struct purser_error *err);

/* Fills the item's labels from its document. */
int docstore_item_fill(struct arena *arena, struct item *it, struct purser_error *err);

/* 0 when ctx may write encrypted documents (ctx->write_encrypted, which the caller decides
 * once and passes down: the writer, the stream and rollback ask this, never anything else);
 * PURSER_EDENIED "<doing> the encrypted document [schema, layer] name needs
 * write_encrypted_document" otherwise. */
int docstore_encrypted_check(const struct docstore_ctx *ctx, const char *doing, const char *schema,
                             const char *layer, const char *name, struct purser_error *err);

/* PURSER_EUNAVAIL when d is to be sealed and no keyring is configured. */
int docstore_keyring_check(const struct docstore_ctx *ctx, const struct document *d,
                           struct purser_error *err);

/* ---- rendering (docstore_render.c), which Deckhand's own validations of a revision being
 * written (docstore_checks.c) use, never the other way ---- */

#define DOCSTORE_CHECK_MAX_ERRORS 100 /* the error entries a validation records, and a note */

/* What schema validation says of a failure that would quote a secret: a value's, or its
 * DataSchema's (docstore_render.c's told_failure). */
#define DOCSTORE_SECRET_VALUE                                                                      \
    "a value that came from an encrypted document fails the check (what fails is not shown: "      \
    "it would quote the secret)"
#define DOCSTORE_SECRET_SCHEMA                                                                     \
    "the document fails its encrypted DataSchema (what fails is not shown: it would quote the "    \
    "schema)"

/* Releases value with the request's arena, after the answer is out (large renders take a
 * while to free). */
void docstore_release_later(const struct docstore_ctx *ctx, json_t *value);

/* A revision's documents as rendering reads them (*docs: with their stored YAML heads when
 * asked), and the LayeringPolicy of an earlier revision when it has none (*fallback, or NULL). */
int docstore_render_load(const struct docstore_ctx *ctx, long long id, int with_yaml_head,
                         json_t **docs, json_t **fallback, struct purser_error *err);

/* One failure found checking rendered documents: the document and either the schema's failure
 * ({path, schema_path, message}: jsonschema_validate's, as it may be told: docstore_render.c's
 * told_failure quotes no secret) or why its schema does not compile. */
struct dataschema_match;
struct docstore_found {
    const json_t *doc;
    const json_t *failure;
    const struct purser_error *compiling;
    const struct dataschema_match *match;
    int sealed; /* the DataSchema is encrypted: nothing of it is told */
};

typedef int (*docstore_found_fn)(void *arg, const struct docstore_found *f,
                                 struct purser_error *err);

/* Checks every rendered document's data (rendered, each with its mask in secrets, or NULL:
 * documents as they are, an encrypted one marked whole) against its schema: the built-in ones
 * and the DataSchemas of sources. Tells found of each failure. */
int docstore_check_rendered(const json_t *sources, const json_t *rendered, const json_t *secrets,
                            docstore_found_fn found, void *arg, struct purser_error *err);

/* Records the new revision w->revision's deckhand-schema-validation and
 * deckhand-policy-validation (entry 0 of each, success or failure with Deckhand's error
 * entries; docstore_checks.c). Its documents: the payload's items [0, item_count) (Tombstones
 * are skipped) and the entries carried (each with its member), all already written. Errors:
 * the store's only; what the documents get wrong is recorded, never refused. */
int docstore_record_checks(struct write *w, struct item *const *items, size_t item_count,
                           const struct entry *carried, size_t carried_count,
                           struct purser_error *err);

/* Shared by the readers (docstore_read.c, docstore_validations.c): */

/* "{base}/revisions/{id}{what}{name}" in arena memory (an empty string if out of memory);
 * concatenated, not formatted: the list makes one for each revision. */
const char *docstore_url_of(const struct docstore_ctx *ctx, long long id, const char *what,
                            const char *name);

/* Deckhand's list shape {count, next, prev, results} around results (consumed). */
int docstore_listing(json_t *results, json_t **out, struct purser_error *err);

/* 1 when a validation's status is a success (Deckhand writes "success" or "succeeded"). */
int docstore_is_success(const char *status);

#endif
