/* docstore_stream.c: a stream's documents written as they are parsed, in three threads: the
 * caller's parses and checks each document and publishes it to the feed (docstore_feed.c), a
 * preparer hashes and emits them, and the writer (docstore.c) stores them a batch at a time in
 * a thread of its own. It calls the feed and the writer; neither calls it. */
#include "docs/docstore_private.h"

#include "base/hash.h"
#include "codec/yaml_codec.h"

#include <pthread.h>
#include <signal.h>
#include <string.h>

#define FEED_PUBLISH 25 /* documents the parser publishes at a time (to be hashed and stored) */

/* The parser's side of docstore_write_stream. */
struct parser {
    struct write *w;
    struct feed *feed;
    struct arena *arena; /* the parser's own: the writer allocates in ctx->arena */
    json_t *faults;
    int stopped;       /* the writer was told to stop (the payload failed) */
    int sealed_denied; /* an encrypted document, without write_encrypted (denied says which) */
    struct purser_error denied;
    struct purser_error err;
    json_t *sealed;  /* the documents to seal, kept whole for the writer */
    size_t released; /* items whose JSON the parser has released */
    /* identities seen, to stop the writer at a duplicate (document_check_duplicates names
     * it once the stream is read): an open-addressing table of documents */
    const struct document **seen;
    size_t seen_cap, seen_count;
};

/* Tells the writer the payload failed: it stops and rolls back. */
static void parser_stop(struct parser *p)
{
    if (!p->stopped)
        docstore_feed_publish(p->feed, FEED_FAILED);
    p->stopped = 1;
}

static uint64_t identity_hash(const struct document *d)
{
    uint64_t h = hash_fnv1a(d->schema, strlen(d->schema) + 1);
    h ^= hash_fnv1a(d->layer, strlen(d->layer) + 1) * 31;
    return h ^ hash_fnv1a(d->name, strlen(d->name)) * 131;
}

/* 1 when d's identity was seen before, 0 when it is new, -1 when out of memory. */
static int seen_before(struct parser *p, const struct document *d)
{
    size_t i;
    if (2 * (p->seen_count + 1) > p->seen_cap) {
        size_t cap = p->seen_cap ? p->seen_cap * 2 : 1024;
        const struct document **table = arena_calloc(p->arena, cap, sizeof(*table));
        if (!table)
            return -1;
        for (size_t j = 0; j < p->seen_cap; j++)
            if (p->seen[j]) {
                for (i = identity_hash(p->seen[j]) & (cap - 1); table[i]; i = (i + 1) & (cap - 1))
                    ;
                table[i] = p->seen[j];
            }
        p->seen = table;
        p->seen_cap = cap;
    }
    for (i = identity_hash(d) & (p->seen_cap - 1); p->seen[i]; i = (i + 1) & (p->seen_cap - 1))
        if (document_identity_compare(d->schema, d->name, d->layer, p->seen[i]->schema,
                                      p->seen[i]->name, p->seen[i]->layer) == 0)
            return 1;
    p->seen[i] = d;
    p->seen_count++;
    return 0;
}

/* The document's identity in the parser's arena: its JSON goes once it is read. */
static int own_identity(struct parser *p, struct document *d)
{
    return (d->schema && !(d->schema = arena_strdup(p->arena, d->schema))) ||
           (d->name && !(d->name = arena_strdup(p->arena, d->name))) ||
           (d->layer && !(d->layer = arena_strdup(p->arena, d->layer)));
}

/* Checks, emits and hands to the writer one parsed document. */
static int take_document(struct parser *p, json_t *doc, size_t index)
{
    struct feed *f = p->feed;
    struct item *it = docstore_feed_next(f, p->arena);
    struct document *d;
    int dup, unusable = 0;

    if (!it)
        return PURSER_EINTERNAL;
    document_check(doc, index, p->faults, &it->own);
    if (own_identity(p, &it->own))
        return PURSER_EINTERNAL;
    d = &it->own;
    it->doc = d;
    docstore_feed_filled(f);
    if (json_array_size(p->faults))
        parser_stop(p);
    if (p->stopped)
        return 0;
    if ((dup = seen_before(p, d)) < 0)
        return PURSER_EINTERNAL;
    if (d->encrypted && !p->sealed_denied) /* why, in p->denied */
        p->sealed_denied = docstore_encrypted_check(p->w->ctx, "writing", d->schema, d->layer,
                                                    d->name, &p->denied) != 0;
    if (!dup && !p->sealed_denied) /* why, in p->err */
        unusable = docstore_keyring_check(p->w->ctx, d, &p->err);
    if (dup || p->sealed_denied || unusable) {
        parser_stop(p);
        return 0;
    }
    if (docstore_item_fill(p->arena, it, &p->err))
        return PURSER_EINTERNAL;
    if (d->encrypted && json_array_append(p->sealed, doc))
        return PURSER_EINTERNAL;
    return 0;
}

/* Releases the JSON of the items below upto (a sealed document's stays in p->sealed). */
static void release_json(struct parser *p, size_t upto)
{
    for (; p->released < upto; p->released++) {
        struct item *it = docstore_feed_item(p->feed->blocks, p->released);
        if (!it->own.encrypted)
            it->own.doc = NULL;
        json_decref(it->json);
        it->json = NULL;
    }
}

/* yaml_codec_parse_each's callback: each document is read into its item and kept until the
 * writer has hashed it, then freed, so that the jansson values of one batch are reused by the
 * next. A document that fails stops the writer; the parse goes on to find every fault, each
 * document freed as soon as it is read (the writer sees none from the stop on). */
static int parsed(void *arg, json_t *doc, size_t index)
{
    struct parser *p = arg;
    struct feed *f = p->feed;
    int rc = take_document(p, doc, index);
    struct item *it = f->count > index ? docstore_feed_item(f->blocks, index) : NULL;
    if (it && !p->stopped) {
        it->json = doc;
    } else {
        if (it && !it->own.encrypted)
            it->own.doc = NULL;
        json_decref(doc);
    }
    if (!rc && !p->stopped && f->count - f->ready >= FEED_PUBLISH)
        docstore_feed_publish(f, FEED_OPEN);
    release_json(p, docstore_feed_hashed_count(f));
    return rc;
}

/* Why the payload fails, in the order the checks of a payload read whole would find it:
 * its YAML, its documents' faults, an identity given twice, a document sealed without
 * write_encrypted, the bucket name, the keyring. 0 when it does not. */
static int payload_verdict(struct parser *p, int parse_rc, struct purser_error *parse_err,
                           struct docstore_stream *s, struct purser_error *err)
{
    const struct document **all;
    struct feed *f = p->feed;
    int rc;
    if (parse_rc) {
        s->parse_failed = 1;
        *err = *parse_err;
        return parse_rc;
    }
    if (!p->stopped) /* every document passed as it came: none faulty, none twice (seen_before),
                        none sealed without the right or a keyring, the bucket name good */
        return 0;
    if (json_array_size(p->faults)) {
        s->messages = json_incref(p->faults);
        return document_faults(p->faults, err);
    }
    if (!(all = arena_alloc(p->arena, (f->count ? f->count : 1) * sizeof(*all))))
        return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    for (size_t i = 0; i < f->count; i++)
        all[i] = docstore_feed_item(f->blocks, i)->doc;
    rc = document_check_duplicates(p->arena, all, f->count, err);
    if (!rc && p->sealed_denied) {
        s->needs_write_encrypted = 1;
        *err = p->denied;
        rc = p->denied.code;
    }
    if (!rc)
        rc = document_name_check("bucket name", p->w->bucket, err);
    for (size_t i = 0; !rc && i < f->count; i++)
        rc = docstore_keyring_check(p->w->ctx, all[i], err);
    return rc;
}

/* A thread of the write: the writer, or the preparer. */
struct writer {
    struct write *w;
    struct arena *arena; /* the preparer's */
    struct purser_error err;
    int rc;
};

/* The answer of the whole payload as the revision the writer is writing, once every item is
 * hashed (its YAML taken); that revision, or -1 when the writer has none yet or a thread ended
 * first, or the answer could not be written. */
static long long speculate_answer(struct write *w, const char *bucket)
{
    struct feed *f = w->feed;
    struct purser_error ignored;
    long long revision = docstore_feed_wait_all_hashed(f);
    int rc = revision < 0
                 ? -1
                 : docstore_write_answer(w, f->blocks, f->count, bucket, revision, &ignored);
    return rc ? -1 : revision;
}

static void *writer_main(void *arg)
{
    struct writer *t = arg;
    t->rc = docstore_run_write(t->w, &t->err);
    docstore_feed_writer_ended(t->w->feed);
    return NULL;
}

/* The preparer: hashes the items as the parser publishes them, until the feed ends. */
static void *preparer_main(void *arg)
{
    struct writer *t = arg;
    struct feed *f = t->w->feed;
    struct item *const *blocks;
    enum feed_state state;
    size_t from = 0, until;

    for (;;) {
        state = docstore_feed_wait_published(f, from, &until, &blocks);
        if (state == FEED_FAILED || (from == until && state != FEED_OPEN))
            break;
        if ((t->rc = docstore_prepare_items(f, t->arena, blocks, from, until, &t->err)))
            break;
        from = until;
    }
    docstore_feed_preparer_ended(f);
    return NULL;
}

/* Starts a thread that takes no signal (the worker's handlers stay on the caller's); 1 when it
 * runs. */
static int start(pthread_t *thread, void *(*main)(void *), struct writer *t)
{
    sigset_t all, old;
    int started;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    started = pthread_create(thread, NULL, main, t) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return started;
}

int docstore_write_stream(const struct docstore_ctx *ctx, const char *bucket,
                          enum docstore_mode mode, const char *text, size_t len,
                          const struct yaml_limits *limits, struct buf *out,
                          struct docstore_stream *s, struct purser_error *err)
{
    struct feed feed;
    struct write w = {
        .ctx = ctx, .bucket = bucket, .mode = mode, .feed = &feed, .out = out, .answer_later = 1};
    struct parser p = {.w = &w,
                       .feed = &feed,
                       .arena = arena_new(),
                       .faults = json_array(),
                       .sealed = json_array()};
    struct writer t = {.w = &w}, prep = {.w = &w, .arena = arena_new()};
    struct purser_error parse_err;
    json_t *stream = NULL;
    pthread_t thread, preparer;
    long long speculated = -1;
    int started = 0, rc;

    memset(s, 0, sizeof(*s));
    if (!p.arena || !prep.arena || !p.faults || !p.sealed) {
        arena_free(p.arena);
        arena_free(prep.arena);
        json_decref(p.faults);
        json_decref(p.sealed);
        return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    }
    docstore_feed_init(&feed, 1);
    if (document_name_check("bucket name", bucket, &p.err))
        parser_stop(&p); /* (no writer: the payload is read for its errors only) */
    /* the preparer first: the writer reads `prepared` from its start */
    if (!p.stopped)
        feed.prepared = start(&preparer, preparer_main, &prep);
    if (!p.stopped)
        started = start(&thread, writer_main, &t);
    if (!started && !feed.prepared)
        feed.threaded = 0; /* no thread: the writer runs once the stream is read */

    rc = yaml_codec_parse_each(&stream, text, len, limits, parsed, &p, &parse_err);
    rc = payload_verdict(&p, rc, &parse_err, s, err);
    docstore_feed_publish(&feed, rc ? FEED_FAILED : FEED_DONE);
    if (!rc && started) /* the answer, while the writer ends: its revision, as the writer has it
                           now; written again below if the write ends with another */
        speculated = speculate_answer(&w, bucket);
    if (started)
        pthread_join(thread, NULL);
    else if (!rc)
        writer_main(&t);
    if (feed.prepared)
        pthread_join(preparer, NULL);
    release_json(&p, feed.count);
    if (!rc && (rc = prep.rc)) /* (the writer then stopped: WRITE_ABANDONED) */
        *err = prep.err;
    if (!rc && (rc = t.rc))
        *err = t.err;
    if (!rc && (speculated != w.answer_revision || w.answer_bucket != bucket))
        rc = docstore_write_answer(&w, feed.blocks, feed.count, w.answer_bucket, w.answer_revision,
                                   err);
    if (rc == WRITE_ABANDONED) /* (only a failed payload stops the writer) */
        rc = purser_error_set(err, PURSER_EINTERNAL, "the document write stopped");
    json_decref(stream);
    json_decref(p.faults);
    json_decref(p.sealed);
    arena_free(p.arena);
    arena_free(prep.arena);
    docstore_feed_release(&feed);
    return rc;
}
