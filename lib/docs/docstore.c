/* docstore.c: writing the document store: buckets, new revisions, deletes, rollback, purge,
 * and re-sealing secrets under a new key. */
#include "docs/docstore_private.h"
#include "store/events.h"

#include "base/buf.h"
#include "base/crypto.h"
#include "base/hash.h"
#include "base/json_text.h"
#include "base/utf8.h"
#include "auth/keyring.h"
#include "codec/yaml_codec.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BATCH_ROWS 500
#define FEED_BLOCK 256 /* items per block of a feed */
#define FEED_PUBLISH 25 /* documents the parser hands the writer at a time (it hashes them) */
#define FEED_BATCH 125  /* documents the writer stores at a time, the feed still open */

/* The rows of a revision refer to rows the write inserted, or read under the organization's
 * head lock (which purge and every writer take first): their foreign keys are not looked up
 * again for each row (a lookup and a shared lock per row, the parents already held). Their
 * ON DELETE CASCADE stays. */
#define WRITTEN_ROWS "SET STATEMENT foreign_key_checks = 0 FOR "

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
    struct document own;        /* the document, when the feed's parser checked it */
};

/* The payload on its way to the writer. A write of a parsed stream runs the writer (the
 * store's transaction) in a thread of its own while the caller's thread parses, checks and
 * emits the documents, so that MariaDB stores each batch while the next is parsed. The parser
 * fills items in order and publishes them under lock (ready); the writer reads the items
 * below ready without it. Blocks never move, and the block table only grows (a new copy, the
 * old kept in the arena), so what the writer has seen stays valid.
 * The writer takes each document's content hash (document_hash, from its JSON) as it comes,
 * off the parser's thread, then marks it hashed (hashed, atomic): from there on the writer
 * reads only what the hash kept, and the parser releases the JSON (a sealed document's stays,
 * in the parser's list of them, for the writer to seal). */
enum feed_state { FEED_OPEN, FEED_DONE, FEED_FAILED };
struct feed {
    pthread_mutex_t lock;
    pthread_cond_t more;
    int threaded;
    struct item **blocks;
    size_t block_cap;
    size_t count; /* items filled (the parser's alone) */
    size_t ready; /* items published */
    size_t hashed; /* items the writer has hashed (atomic: written by the writer alone) */
    long long revision; /* the revision the writer is writing, once its row is in (locked) */
    enum feed_state state;
};

/* One document of the revision being written. */
struct entry {
    const struct document *doc; /* NULL when carried from the previous revision */
    const struct item *item;    /* the payload's, with doc */
    const struct member *member; /* the previous revision's row, or NULL */
    long long content_id, bucket_id, since;
    int is_new; /* its content must be stored */
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

static struct item *feed_item(struct item *const *blocks, size_t i)
{
    return &blocks[i / FEED_BLOCK][i % FEED_BLOCK];
}

/* Waits until items from `from` on are published or the feed ends. *until: the items
 * published; *blocks: the block table to read them through. */
static enum feed_state feed_wait(struct feed *f, size_t from, size_t *until,
                                 struct item *const **blocks)
{
    enum feed_state state;
    if (f->threaded)
        pthread_mutex_lock(&f->lock);
    while (f->threaded && f->ready == from && f->state == FEED_OPEN)
        pthread_cond_wait(&f->more, &f->lock);
    *until = f->ready;
    *blocks = f->blocks;
    state = f->state;
    if (f->threaded)
        pthread_mutex_unlock(&f->lock);
    return state;
}

/* Publishes the items filled so far, and ends the feed when state is not FEED_OPEN. */
static void feed_publish(struct feed *f, enum feed_state state)
{
    if (f->threaded)
        pthread_mutex_lock(&f->lock);
    f->ready = f->count;
    if (f->state == FEED_OPEN)
        f->state = state;
    if (f->threaded) {
        pthread_cond_signal(&f->more);
        pthread_mutex_unlock(&f->lock);
    }
}

/* The next item to fill, in a block of its own when needed; NULL when out of memory. */
static struct item *feed_next(struct feed *f, struct arena *arena)
{
    size_t block = f->count / FEED_BLOCK;
    if (block == f->block_cap) {
        size_t cap = f->block_cap ? f->block_cap * 2 : 16;
        struct item **table = arena_alloc(arena, cap * sizeof(*table));
        if (!table)
            return NULL;
        if (f->block_cap)
            memcpy(table, f->blocks, f->block_cap * sizeof(*table));
        if (f->threaded)
            pthread_mutex_lock(&f->lock);
        f->blocks = table;
        f->block_cap = cap;
        if (f->threaded)
            pthread_mutex_unlock(&f->lock);
    }
    if (f->count % FEED_BLOCK == 0 &&
        !(f->blocks[block] = arena_calloc(arena, FEED_BLOCK, sizeof(struct item))))
        return NULL;
    return feed_item(f->blocks, f->count);
}

/* What a batch of insert_rows_returning returned: rows [from, from + k) of the input. */
typedef int (*returned_fn)(void *arg, size_t from, size_t k, const struct store_rows *rows,
                           struct purser_error *err);

/* Runs "prefix VALUES (?,..),(?,..) suffix" over rows of width parameters, in batches; with
 * got, suffix ends in RETURNING and got reads each batch's rows. */
static int insert_rows_returning(const struct docstore_ctx *ctx, const char *prefix,
                                 const char *suffix, size_t width,
                                 const struct store_value *params, size_t rows, returned_fn got,
                                 void *arg, struct purser_error *err)
{
    for (size_t done = 0; done < rows;) {
        size_t k = rows - done < BATCH_ROWS ? rows - done : BATCH_ROWS;
        struct buf sql = BUF_INIT;
        int rc = buf_adds(&sql, prefix) || buf_adds(&sql, " VALUES ");
        for (size_t r = 0; r < k && !rc; r++) {
            rc = buf_adds(&sql, r ? ",(" : "(");
            for (size_t c = 0; c < width && !rc; c++)
                rc = buf_adds(&sql, c ? ",?" : "?");
            rc = rc || buf_addc(&sql, ')');
        }
        rc = rc || buf_adds(&sql, suffix);
        if (rc) {
            rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
        } else if (got) {
            struct store_rows out;
            rc = docstore_query(ctx, &out, buf_cstr(&sql), params + done * width, k * width, err);
            rc = rc ? rc : got(arg, done, k, &out, err);
        } else {
            rc = docstore_exec(ctx, buf_cstr(&sql), params + done * width, k * width, NULL, err);
        }
        buf_release(&sql);
        if (rc)
            return rc;
        done += k;
    }
    return 0;
}

static int insert_rows(const struct docstore_ctx *ctx, const char *prefix, const char *suffix,
                       size_t width, const struct store_value *params, size_t rows,
                       struct purser_error *err)
{
    return insert_rows_returning(ctx, prefix, suffix, width, params, rows, NULL, NULL, err);
}

/* ---- writing ---- */

static int member_identity_compare(const void *a, const void *b)
{
    const struct member *x = *(const struct member *const *)a;
    const struct member *y = *(const struct member *const *)b;
    return document_identity_compare(x->schema, x->name, x->layer, y->schema, y->name, y->layer);
}

/* The bucket of a document of schema and name in the previous revision, or NULL. */
static const char *find_member_by_name(const struct write *w)
{
    for (size_t i = 0; i < w->member_count; i++)
        if (strcmp(w->members[i].schema, w->delete_schema) == 0 &&
            strcmp(w->members[i].name, w->delete_name) == 0)
            return w->members[i].bucket;
    return NULL;
}

static const struct member *find_member(const struct write *w, const char *schema,
                                        const char *layer, const char *name)
{
    struct member key = {.schema = schema, .layer = layer, .name = name};
    const struct member *k = &key, **found;
    found = bsearch(&k, w->sorted, w->member_count, sizeof(*w->sorted), member_identity_compare);
    return found ? *found : NULL;
}

/* Takes the organization's write lock and reads the next revision id. */
static int lock_head(struct write *w, struct purser_error *err)
{
    struct store_value p[] = {STORE_INT(w->ctx->org_id)};
    struct store_rows rows;
    int rc = docstore_exec(w->ctx, "INSERT IGNORE INTO doc_heads (org_id) VALUES (?)", p, 1, NULL, err);
    if (!rc)
        rc = docstore_query(w->ctx, &rows,
                   "SELECT next_revision FROM doc_heads WHERE org_id = ? FOR UPDATE", p, 1, err);
    if (rc)
        return rc;
    w->revision = atoll(store_cell(&rows, 0, 0));
    w->latest = w->revision - 1;
    return 0;
}

static int load_previous(struct write *w, struct purser_error *err)
{
    int rc = docstore_members(w->ctx, w->latest, &w->members, &w->member_count, err);
    if (rc)
        return rc;
    w->sorted = arena_alloc(w->ctx->arena, (w->member_count ? w->member_count : 1) *
                                               sizeof(*w->sorted));
    if (!w->sorted)
        return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    for (size_t i = 0; i < w->member_count; i++)
        w->sorted[i] = &w->members[i];
    qsort(w->sorted, w->member_count, sizeof(*w->sorted), member_identity_compare);
    return 0;
}

static int bucket_id(struct write *w, struct purser_error *err)
{
    struct store_value p[] = {STORE_INT(w->ctx->org_id), STORE_STR(w->bucket)};
    struct store_rows rows;
    int rc = docstore_exec(w->ctx, "INSERT IGNORE INTO doc_buckets (org_id, name) VALUES (?, ?)", p, 2, NULL, err);
    if (!rc)
        rc = docstore_query(w->ctx, &rows, "SELECT id FROM doc_buckets WHERE org_id = ? AND name = ?", p, 2,
                   err);
    if (!rc && rows.count == 0) /* (document_name_check keeps names the column cannot hold out) */
        rc = purser_error_set(err, PURSER_EINVAL, "bucket name '%.64s' cannot be stored", w->bucket);
    if (!rc)
        w->bucket_id = atoll(store_cell(&rows, 0, 0));
    return rc;
}

static int conflict(const struct member *m, struct purser_error *err)
{
    return purser_error_set(err, PURSER_EEXISTS, "Document [%s, %s] %s already exists in bucket: %s.",
                            m->schema, m->layer, m->name, m->bucket);
}

/* 1 when the stored encrypted content of m equals d (metadata and opened data). */
static int same_secret(struct write *w, const struct member *m, const struct document *d,
                       int *same, struct purser_error *err)
{
    struct store_value p[] = {STORE_INT(m->content_id)};
    struct store_rows rows;
    json_t *data = NULL;
    char *a = NULL, *b = NULL;
    int rc = docstore_query(w->ctx, &rows, "SELECT metadata, data, key_id FROM doc_contents WHERE id = ?", p,
                   1, err);
    *same = 0;
    if (rc || rows.count == 0)
        return rc;
    rc = docstore_open_data(w->ctx, m->schema, m->layer, m->name, atoi(store_cell(&rows, 0, 2)),
                            store_cell(&rows, 0, 1), rows.lengths[1], &data, err);
    if (rc)
        return rc;
    a = document_canonical(data);
    b = document_canonical(json_object_get(d->doc, "data"));
    if (a && b && strcmp(a, b) == 0) {
        json_error_t jerr;
        json_t *meta = json_loads(store_cell(&rows, 0, 0), 0, &jerr);
        *same = json_equal(meta, json_object_get(d->doc, "metadata"));
        json_decref(meta);
    }
    if (a)
        crypto_free_secret(a);
    if (b)
        crypto_free_secret(b);
    json_decref(data);
    return 0;
}

/* The first two LayeringPolicy documents of the new revision (Deckhand allows one). */
static void note_layering(struct write *w, const char *schema, const char *layer,
                          const char *name)
{
    if (!document_schema_is(schema, "deckhand/LayeringPolicy"))
        return;
    if (!w->layering) {
        w->layering = name;
        w->layering_layer = layer;
    } else if (!w->second_name) {
        w->second_schema = schema;
        w->second_layer = layer;
        w->second_name = name;
    }
}

/* Decides for each payload document of items [from, to) whether it is new, changed or
 * unchanged, and marks the previous rows it replaces or deletes. */
static int plan_documents(struct write *w, struct item *const *items, size_t from, size_t to,
                          struct entry *entries, size_t *entry_count, struct purser_error *err)
{
    int *changed = &w->changed;
    for (size_t i = from; i < to; i++) {
        const struct item *it = feed_item(items, i);
        const struct document *d = it->doc;
        const struct member *m;
        struct entry *e;
        int same;

        if (d->kind == DOCUMENT_TOMBSTONE) {
            for (size_t j = 0; j < w->member_count; j++) {
                struct member *t = &w->members[j];
                if (strcmp(t->schema, d->schema) || strcmp(t->name, d->name) ||
                    (d->layer[0] && strcmp(t->layer, d->layer)))
                    continue;
                if (t->bucket_id != w->bucket_id)
                    return conflict(t, err);
                t->drop = 1;
                *changed = 1;
            }
            continue;
        }
        e = &entries[(*entry_count)++];
        *e = (struct entry){.doc = d, .item = it, .bucket_id = w->bucket_id,
                            .since = w->revision, .is_new = 1};
        w->any_payload = 1;
        note_layering(w, d->schema, d->layer, d->name);
        if (!(m = find_member(w, d->schema, d->layer, d->name))) {
            *changed = 1;
            continue;
        }
        if (m->bucket_id != w->bucket_id)
            return conflict(m, err);
        ((struct member *)m)->drop = 1;
        same = !d->encrypted && !m->encrypted && memcmp(m->sha, d->content_sha256, 32) == 0;
        if (d->encrypted && m->encrypted && same_secret(w, m, d, &same, err))
            return err->code;
        if (same) {
            ((struct member *)m)->kept = 1;
            e->member = m;
            e->content_id = m->content_id;
            e->since = m->since;
            e->is_new = 0;
        } else
            *changed = 1;
    }
    return 0;
}

/* Rows of the previous revision that stay: w->changed when any is dropped. */
static void plan_carried(struct write *w, struct entry *entries, size_t *entry_count)
{
    int *changed = &w->changed;
    for (size_t j = 0; j < w->member_count; j++) {
        struct member *m = &w->members[j];
        int in_bucket = m->bucket_id == w->bucket_id;
        if (w->delete_schema && strcmp(m->schema, w->delete_schema) == 0 &&
            strcmp(m->name, w->delete_name) == 0)
            m->drop = 1, *changed = 1;
        if (!m->drop && w->mode == DOCSTORE_PUT_BUCKET && in_bucket && !w->delete_schema)
            m->drop = 1, *changed = 1;
        if (m->drop) {
            /* dropped and not re-posted identically: a deletion or a change */
            continue;
        }
        entries[(*entry_count)++] = (struct entry){.member = m,
                                                   .content_id = m->content_id,
                                                   .bucket_id = m->bucket_id,
                                                   .since = m->since};
        note_layering(w, m->schema, m->layer, m->name);
    }
}

/* Deckhand allows one LayeringPolicy: 409 when the new revision would hold two. */
static int check_singleton(const struct write *w, struct purser_error *err)
{
    if (!w->second_name)
        return 0;
    return purser_error_set(
        err, PURSER_EEXISTS,
        "A singleton document [%s, %s] %s already exists in the system. The new "
        "document(s) [%s, %s] %s cannot be created. To create a document with a new "
        "name, delete the current one first.",
        w->second_schema, w->layering_layer, w->layering, w->second_schema, w->second_layer,
        w->second_name);
}

/* The metadata and data columns of a new content: data sealed when encrypted. */
static int content_columns(struct write *w, const struct entry *e, struct store_value *cols,
                           unsigned char *random_sha, struct purser_error *err)
{
    /* metadata and data as hashed (document_prepare): keys sorted, as Deckhand emits them */
    const struct document *d = e->doc;
    char *data = NULL;
    int rc = 0;

    /* (bytes, as their columns are: the server takes them as they are, where a string is
     * scanned for its characters first) */
    cols[0] = STORE_BLOB(d->metadata_json, strlen(d->metadata_json));
    if (!d->encrypted) {
        cols[1] = STORE_BLOB(d->data_json, strlen(d->data_json));
        cols[2] = STORE_NULLV;
        cols[3] = STORE_BLOB((const char *)d->content_sha256, 32);
        cols[4] = STORE_BLOB(e->item->yaml, strlen(e->item->yaml));
        return 0;
    }
    if (!(data = document_canonical(json_object_get(d->doc, "data"))))
        return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    {
        size_t aad_len = 0, sealed_len = 0;
        char *aad = document_aad(w->ctx->arena, w->ctx->org_id, d->schema, d->layer, d->name,
                                 &aad_len);
        unsigned char *sealed = NULL;
        int key_id = 0;
        char *copy;
        rc = aad ? keyring_seal(w->ctx->keyring, aad, aad_len, data, strlen(data), &sealed,
                                &sealed_len, &key_id, err)
                 : purser_error_set(err, PURSER_EINTERNAL, "out of memory");
        crypto_free_secret(data);
        if (rc)
            return rc;
        copy = arena_alloc(w->ctx->arena, sealed_len);
        if (copy)
            memcpy(copy, sealed, sealed_len);
        free(sealed);
        if (!copy || crypto_random(random_sha, 32))
            return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
        cols[1] = STORE_BLOB(copy, sealed_len);
        cols[2] = STORE_INT(key_id);
        cols[3] = STORE_BLOB((const char *)random_sha, 32);
        cols[4] = STORE_NULLV;
    }
    return rc;
}

/* The new contents of a write_contents, in the order of their rows. */
struct new_contents {
    struct entry **entries;
    const unsigned char **shas;
};

/* Takes the ids of a batch of new contents from the rows its upsert returned (id, hash: in
 * the order of the VALUES, each checked by its hash). */
static int content_ids(void *arg, size_t from, size_t k, const struct store_rows *rows,
                       struct purser_error *err)
{
    struct new_contents *nc = arg;
    (void)err;
    for (size_t r = 0; r < rows->count; r++) {
        const char *sha = store_cell(rows, r, 1);
        size_t b = r < k && memcmp(nc->shas[from + r], sha, 32) == 0 ? r : 0;
        while (b < k && memcmp(nc->shas[from + b], sha, 32) != 0)
            b++;
        if (b < k)
            nc->entries[from + b]->content_id = atoll(store_cell(rows, r, 0));
    }
    return 0;
}

/* The labels column of a content (migration 0015): ",hex(key)=hex(value),...," in arena, its
 * length in *len (0 when it has none: stored as NULL); NULL when out of memory. */
static const char *labels_column(struct arena *arena, const struct item *it, size_t *len)
{
    size_t size = 2;
    char *text, *at;
    *len = 0;
    if (!it->label_count)
        return "";
    for (size_t i = 0; i < 2 * it->label_count; i++)
        size += 2 * strlen(it->labels[i]) + 1;
    if (!(text = at = arena_alloc(arena, size)))
        return NULL;
    *at++ = ',';
    for (size_t i = 0; i < 2 * it->label_count; i++) {
        size_t n = strlen(it->labels[i]);
        crypto_hex(at, it->labels[i], n);
        at += 2 * n;
        *at++ = i % 2 ? ',' : '=';
    }
    *at = '\0';
    *len = (size_t)(at - text);
    return text;
}

static int write_contents(struct write *w, struct entry *entries, size_t n,
                          struct purser_error *err)
{
    size_t news = 0;
    struct store_value *p = arena_alloc(w->ctx->arena, (n ? n : 1) * 11 * sizeof(*p));
    struct new_contents nc = {arena_alloc(w->ctx->arena, (n ? n : 1) * sizeof(*nc.entries)),
                              arena_alloc(w->ctx->arena, (n ? n : 1) * sizeof(*nc.shas))};
    int rc;

    if (!p || !nc.entries || !nc.shas)
        return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    for (size_t i = 0; i < n; i++) {
        const struct document *d = entries[i].doc;
        struct store_value *row = p + news * 11, cols[5];
        unsigned char *random_sha;
        const char *labels;
        size_t labels_len;
        if (!entries[i].is_new)
            continue;
        if (!(random_sha = arena_alloc(w->ctx->arena, 32)))
            return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
        if ((rc = content_columns(w, &entries[i], cols, random_sha, err)))
            return rc;
        nc.entries[news] = &entries[i];
        nc.shas[news] = (const unsigned char *)cols[3].str;
        row[0] = STORE_INT(w->ctx->org_id);
        row[1] = cols[3];
        row[2] = STORE_STR(d->schema);
        row[3] = STORE_STR(d->layer);
        row[4] = STORE_STR(d->name);
        row[5] = STORE_INT(d->encrypted);
        row[6] = cols[2];
        row[7] = cols[0];
        row[8] = cols[1];
        row[9] = cols[4];
        if (!(labels = labels_column(w->ctx->arena, entries[i].item, &labels_len)))
            return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
        row[10] = labels_len ? STORE_BLOB(labels, labels_len) : STORE_NULLV;
        news++;
    }
    if (!news)
        return 0;
    rc = insert_rows_returning(w->ctx,
                               "INSERT INTO doc_contents (org_id, content_sha256, schema_name,"
                               " layer, name, encrypted, key_id, metadata, data, yaml, labels)",
                               " ON DUPLICATE KEY UPDATE id = id RETURNING id, content_sha256", 11,
                               p, news, content_ids, &nc, err);
    /* Each new content is there now, inserted or found (the upsert returns the row it met, a
     * concurrent writer's too). One that is neither was lost to the upsert: Galera gave its
     * auto-increment id twice (the INSERT met another content on the PRIMARY key, "updated"
     * it and returned it). That passes when the transaction runs again. */
    for (size_t i = 0; !rc && i < n; i++)
        if (entries[i].is_new && !entries[i].content_id)
            rc = store_conflict(w->ctx->store, "a new document content was not stored", err);
    return rc;
}

/* The sorted JSON array of the buckets of the new revision: the payload's (when it holds
 * documents) and those of the rows carried (entries). */
static char *bucket_names(struct write *w, const struct entry *entries, size_t n)
{
    json_t *names = json_array();
    char *text, *copy;
    for (size_t i = w->any_payload ? 0 : 1; i <= n; i++) {
        const char *b = i == 0 ? w->bucket : entries[i - 1].member->bucket;
        size_t at = 0, size = json_array_size(names);
        int found = 0;
        for (; at < size; at++) {
            int c = strcmp(json_string_value(json_array_get(names, at)), b);
            if (c >= 0) {
                found = c == 0;
                break;
            }
        }
        if (!found)
            json_array_insert_new(names, at, json_string(b));
    }
    text = json_text(names, JSON_COMPACT);
    json_decref(names);
    copy = text ? arena_strdup(w->ctx->arena, text) : NULL;
    free(text);
    return copy;
}

/* The new revision's row, first: its documents refer to it. Its buckets come at the end
 * (finish_revision), once they are known. */
static int insert_revision(struct write *w, struct purser_error *err)
{
    struct store_value rev[] = {STORE_INT(w->ctx->org_id), STORE_INT(w->revision),
                                STORE_STR(w->ctx->principal)};
    return docstore_exec(w->ctx,
                         "INSERT INTO doc_revisions (org_id, id, created_by, buckets)"
                         " VALUES (?, ?, ?, '[]')",
                         rev, 3, NULL, err);
}

/* The revision's buckets (the payload's and those of carried, the rows it keeps), the head
 * moved past it, and its event. */
static int finish_revision(struct write *w, const struct entry *carried, size_t n,
                           struct purser_error *err)
{
    char *buckets = bucket_names(w, carried, n);
    struct store_value head[] = {STORE_INT(w->revision + 1), STORE_INT(w->ctx->org_id)};
    struct store_value rev[] = {STORE_STR(buckets ? buckets : "[]"), STORE_INT(w->ctx->org_id),
                                STORE_INT(w->revision)};
    int rc = docstore_exec(w->ctx, "UPDATE doc_heads SET next_revision = ? WHERE org_id = ?", head, 2, NULL, err);
    if (!rc)
        rc = docstore_exec(w->ctx,
                           "UPDATE doc_revisions SET buckets = ? WHERE org_id = ? AND id = ?",
                           rev, 3, NULL, err);
    if (!rc) { /* the event names the revision and the buckets it changed */
        char *id = arena_sprintf(w->ctx->arena, "%lld", w->revision);
        json_t *detail = json_pack("{s:o}", "buckets", json_loads(buckets ? buckets : "[]", 0, NULL));
        rc = event_append(w->ctx->store, w->ctx->org_id, "document_revision", id, "put", id, detail,
                          err);
        json_decref(detail);
    }
    return rc;
}

static int write_members(struct write *w, const struct entry *entries, size_t n,
                         struct purser_error *err)
{
    struct store_value *p = arena_alloc(w->ctx->arena, (n ? n : 1) * 10 * sizeof(*p));
    if (!p)
        return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    for (size_t i = 0; i < n; i++) {
        const struct entry *e = &entries[i];
        struct store_value *row = p + i * 10;
        row[0] = STORE_INT(w->ctx->org_id);
        row[1] = STORE_INT(w->revision);
        row[2] = STORE_INT(e->content_id);
        row[3] = STORE_INT(e->bucket_id);
        row[4] = STORE_INT(e->since);
        row[5] = STORE_STR(e->doc ? e->doc->schema : e->member->schema);
        row[6] = STORE_STR(e->doc ? e->doc->layer : e->member->layer);
        row[7] = STORE_STR(e->doc ? e->doc->name : e->member->name);
        row[8] = STORE_INT(e->doc ? e->doc->abstract : e->member->abstract);
        row[9] = STORE_INT(e->doc ? e->doc->encrypted : e->member->encrypted);
    }
    return insert_rows(w->ctx,
                       WRITTEN_ROWS
                       "INSERT INTO doc_revision_documents (org_id, revision_id, content_id,"
                       " bucket_id, since_revision, schema_name, layer, name, abstract, encrypted)",
                       "", 10, p, n, err);
}

/* Every write passed Deckhand's schema checks: record that as the revision's
 * deckhand-schema-validation result. */
static int record_schema_validation(const struct docstore_ctx *ctx, long long revision,
                                    struct purser_error *err)
{
    struct store_value p[] = {STORE_INT(ctx->org_id), STORE_INT(revision)};
    return docstore_exec(ctx,
                "INSERT INTO doc_validations (org_id, revision_id, name, entry_id, status,"
                " validator, errors) VALUES (?, ?, 'deckhand-schema-validation', 0, 'success',"
                " '{\"name\":\"deckhand\",\"version\":\"1.0\"}', '[]')",
                p, 2, NULL, err);
}

/* The answer: the payload's documents (encrypted data never echoed), or the status alone. */
static int write_answer(struct write *w, struct item *const *items, size_t count,
                        const char *bucket, long long revision, struct purser_error *err)
{
    struct buf status = BUF_INIT;
    int rc = document_status_yaml(&status, bucket, revision, err), any = 0;
    buf_reset(w->out);
    for (size_t i = 0; !rc && i < count; i++) {
        const struct item *it = feed_item(items, i);
        if (!it->yaml)
            continue;
        any = 1;
        if (buf_adds(w->out, "---\n") || buf_adds(w->out, it->yaml) ||
            buf_add(w->out, status.data, status.len))
            rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    }
    if (!rc && !any &&
        (buf_adds(w->out, "---\n") || buf_add(w->out, status.data, status.len)))
        rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    buf_release(&status);
    return rc;
}

/* The answer of a write that succeeds: written now, or named for the caller (answer_later). */
static int answer(struct write *w, struct item *const *items, size_t count, const char *bucket,
                  long long revision, struct purser_error *err)
{
    w->answer_bucket = bucket;
    w->answer_revision = revision;
    return w->answer_later ? 0 : write_answer(w, items, count, bucket, revision, err);
}

/* rc of a write of the new revision's rows. Every key written from the revision row on is
 * this revision's, under the head's lock: one that is taken already was written by a
 * transaction this one's reads did not see (a Galera node applying the cluster's writes
 * behind), not an answer for the client. */
static int written(struct write *w, int rc, struct purser_error *err)
{
    if (rc == PURSER_EEXISTS)
        return store_conflict(w->ctx->store, "a row of the new revision was there already", err);
    return rc;
}

/* Takes the content hash of the parser's items [from, to) (once: a transaction run again finds
 * them hashed), as soon as they come, and tells the parser their JSON may go. */
static int hash_items(struct write *w, struct item *const *items, size_t from, size_t to,
                      struct purser_error *err)
{
    for (size_t i = from; i < to; i++) {
        struct item *it = feed_item(items, i);
        if (it->doc == &it->own && !it->own.metadata_json &&
            document_hash(w->ctx->arena, &it->own))
            return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    }
    if (to > __atomic_load_n(&w->feed->hashed, __ATOMIC_RELAXED))
        __atomic_store_n(&w->feed->hashed, to, __ATOMIC_RELEASE);
    return 0;
}

/* Stores the payload documents of items [from, to): their new contents and their rows. */
static int write_items(struct write *w, struct item *const *items, size_t from, size_t to,
                       struct purser_error *err)
{
    struct entry *entries = arena_calloc(w->ctx->arena, to - from, sizeof(*entries));
    size_t n = 0;
    int rc;
    if (!entries)
        return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    if ((rc = plan_documents(w, items, from, to, entries, &n, err)))
        return rc;
    if ((rc = written(w, write_contents(w, entries, n, err), err)))
        return rc;
    return written(w, write_members(w, entries, n, err), err);
}

static int write_txn(struct store *store, void *arg, struct purser_error *err)
{
    struct write *w = arg;
    struct entry *carried;
    struct item *const *items = NULL;
    const char *answer_bucket = w->bucket;
    size_t n = 0, done = 0, hashed = 0, until;
    enum feed_state state;
    int rc;

    (void)store;
    w->changed = w->any_payload = 0;
    w->layering = w->second_name = NULL;
    if ((rc = lock_head(w, err)) || (rc = load_previous(w, err)))
        return rc;
    if (w->delete_schema && !(answer_bucket = find_member_by_name(w)))
        return purser_error_set(err, PURSER_ENOTFOUND, "document [%s] %s does not exist",
                                w->delete_schema, w->delete_name);
    if (w->bucket && (rc = bucket_id(w, err)))
        return rc;
    if ((rc = written(w, insert_revision(w, err), err)))
        return rc;
    if (w->feed->threaded) { /* (for the parser's answer, written while this one ends) */
        pthread_mutex_lock(&w->feed->lock);
        w->feed->revision = w->revision;
        pthread_mutex_unlock(&w->feed->lock);
    }
    /* the payload as the parser hands it over: each document hashed at once (its JSON then
     * goes), its rows stored FEED_BATCH at a time (the statements then have one shape, which
     * the store keeps prepared; only the payload's last ones are fewer) */
    while ((state = feed_wait(w->feed, hashed, &until, &items)) != FEED_FAILED &&
           (done < until || state == FEED_OPEN)) {
        if ((rc = hash_items(w, items, hashed, until, err)))
            return rc;
        hashed = until;
        for (; done < until && (until - done >= FEED_BATCH || state != FEED_OPEN); done += n) {
            n = until - done < FEED_BATCH ? until - done : FEED_BATCH;
            if ((rc = write_items(w, items, done, done + n, err)))
                return rc;
        }
    }
    if (state == FEED_FAILED)
        return WRITE_ABANDONED;
    n = 0;
    if (!(carried = arena_calloc(w->ctx->arena, w->member_count ? w->member_count : 1,
                                 sizeof(*carried))))
        return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    plan_carried(w, carried, &n);
    for (size_t i = 0; i < w->member_count && !w->ctx->write_encrypted; i++)
        if (w->members[i].drop && w->members[i].encrypted && !w->members[i].kept)
            return purser_error_set(err, PURSER_EDENIED,
                                    "changing or deleting the encrypted document [%s, %s] %s "
                                    "needs write_encrypted_document",
                                    w->members[i].schema, w->members[i].layer,
                                    w->members[i].name);
    if ((rc = check_singleton(w, err)))
        return rc;
    if (!w->changed) { /* no revision: the transaction is rolled back */
        rc = answer(w, items, done, answer_bucket, w->latest, err);
        return rc ? rc : WRITE_UNCHANGED;
    }
    if ((rc = written(w, write_members(w, carried, n, err), err)) ||
        (rc = written(w, finish_revision(w, carried, n, err), err)) ||
        (rc = written(w, record_schema_validation(w->ctx, w->revision, err), err)))
        return rc;
    return answer(w, items, done, answer_bucket, w->revision, err);
}

/* Runs the write's transaction; a write that changes nothing succeeds without a revision. */
static int run_write(struct write *w, struct purser_error *err)
{
    int rc = store_txn(w->ctx->store, 0, write_txn, w, err);
    return rc == WRITE_UNCHANGED ? 0 : rc;
}

/* A document's YAML as the API answers and stores it (data redacted if sealed), in arena. */
static char *document_answer_yaml(struct arena *arena, const struct document *d,
                                  struct purser_error *err)
{
    struct buf text = BUF_INIT;
    json_t *redacted = d->encrypted ? json_string(REDACTED) : NULL;
    char *yaml = NULL;
    if (!document_yaml(&text, d->schema, json_object_get(d->doc, "metadata"),
                       redacted ? redacted : json_object_get(d->doc, "data"), err) &&
        !(yaml = arena_strndup(arena, buf_cstr(&text), text.len)))
        purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    json_decref(redacted);
    buf_release(&text);
    return yaml;
}

/* What the writer needs of an item's document besides the document: its YAML and labels. */
static int item_fill(struct arena *arena, struct item *it, struct purser_error *err)
{
    const struct document *d = it->doc;
    json_t *labels = json_object_get(json_object_get(d->doc, "metadata"), "labels");
    const char *key;
    json_t *v;
    size_t at = 0;
    if (d->kind != DOCUMENT_TOMBSTONE && !(it->yaml = document_answer_yaml(arena, d, err)))
        return err->code;
    if (!(it->label_count = json_object_size(labels)))
        return 0;
    if (!(it->labels = arena_alloc(arena, 2 * it->label_count * sizeof(*it->labels))))
        return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    json_object_foreach (labels, key, v) {
        char *text = yaml_codec_key_text_in(arena, v);
        it->labels[at++] = arena_strdup(arena, key);
        it->labels[at++] = text ? text : "";
        if (!it->labels[at - 2])
            return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    }
    return 0;
}

/* A keyring for a document to seal. */
static int keyring_check(const struct docstore_ctx *ctx, const struct document *d,
                         struct purser_error *err)
{
    if (d->encrypted && !ctx->keyring)
        return purser_error_set(err, PURSER_EUNAVAIL,
                                "no keyring is configured: document [%s] %s cannot be "
                                "stored encrypted",
                                d->schema, d->name);
    return 0;
}

int docstore_write(const struct docstore_ctx *ctx, const char *bucket, enum docstore_mode mode,
                   const struct document *docs, size_t count, struct buf *out,
                   struct purser_error *err)
{
    struct feed feed = {.state = FEED_DONE};
    struct write w = {.ctx = ctx, .bucket = bucket, .mode = mode, .feed = &feed, .out = out};
    int rc = document_name_check("bucket name", bucket, err);

    for (size_t i = 0; !rc && i < count; i++)
        rc = keyring_check(ctx, &docs[i], err);
    for (size_t i = 0; !rc && i < count; i++) {
        struct item *it = feed_next(&feed, ctx->arena);
        if (!it)
            return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
        it->doc = &docs[i];
        if (item_fill(ctx->arena, it, err))
            return err->code;
        feed.ready = ++feed.count;
    }
    return rc ? rc : run_write(&w, err);
}

int docstore_delete_document(const struct docstore_ctx *ctx, const char *schema,
                             const char *name, struct buf *out, struct purser_error *err)
{
    struct feed feed = {.state = FEED_DONE};
    struct write w = {.ctx = ctx, .mode = DOCSTORE_POST, .feed = &feed, .delete_schema = schema,
                      .delete_name = name, .out = out};
    return run_write(&w, err);
}

/* ---- writing a stream as it is parsed ---- */

/* The parser's side of docstore_write_stream. */
struct parser {
    struct write *w;
    struct feed *feed;
    struct arena *arena; /* the parser's own: the writer allocates in ctx->arena */
    json_t *faults;
    int stopped;         /* the writer was told to stop (the payload failed) */
    int sealed_denied;   /* an encrypted document, without write_encrypted */
    struct purser_error err;
    json_t *sealed;      /* the documents to seal, kept whole for the writer */
    size_t released;     /* items whose JSON the parser has released */
    /* identities seen, to stop the writer at a duplicate (document_check_duplicates names
     * it once the stream is read): an open-addressing table of documents */
    const struct document **seen;
    size_t seen_cap, seen_count;
};

/* Tells the writer the payload failed: it stops and rolls back. */
static void parser_stop(struct parser *p)
{
    if (!p->stopped)
        feed_publish(p->feed, FEED_FAILED);
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
    struct item *it = feed_next(f, p->arena);
    struct document *d;
    int dup;

    if (!it)
        return PURSER_EINTERNAL;
    document_check(doc, index, p->faults, &it->own);
    if (own_identity(p, &it->own))
        return PURSER_EINTERNAL;
    d = &it->own;
    it->doc = d;
    f->count++;
    if (json_array_size(p->faults))
        parser_stop(p);
    if (p->stopped)
        return 0;
    if ((dup = seen_before(p, d)) < 0)
        return PURSER_EINTERNAL;
    if (d->encrypted && !p->w->ctx->write_encrypted)
        p->sealed_denied = 1;
    if (dup || p->sealed_denied || keyring_check(p->w->ctx, d, &p->err)) {
        parser_stop(p);
        return 0;
    }
    if (item_fill(p->arena, it, &p->err))
        return PURSER_EINTERNAL;
    if (d->encrypted && json_array_append(p->sealed, doc))
        return PURSER_EINTERNAL;
    return 0;
}

/* Releases the JSON of the items below upto (a sealed document's stays in p->sealed). */
static void release_json(struct parser *p, size_t upto)
{
    for (; p->released < upto; p->released++) {
        struct item *it = feed_item(p->feed->blocks, p->released);
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
    struct item *it = f->count > index ? feed_item(f->blocks, index) : NULL;
    if (it && !p->stopped) {
        it->json = doc;
    } else {
        if (it && !it->own.encrypted)
            it->own.doc = NULL;
        json_decref(doc);
    }
    if (!rc && !p->stopped && f->count - f->ready >= FEED_PUBLISH)
        feed_publish(f, FEED_OPEN);
    release_json(p, __atomic_load_n(&f->hashed, __ATOMIC_ACQUIRE));
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
        all[i] = feed_item(f->blocks, i)->doc;
    if (document_check_duplicates(p->arena, all, f->count, err))
        return err->code;
    if (p->sealed_denied) {
        s->needs_write_encrypted = 1;
        return purser_error_set(err, PURSER_EDENIED,
                                "writing an encrypted document needs write_encrypted_document");
    }
    if (document_name_check("bucket name", p->w->bucket, err))
        return err->code;
    for (size_t i = 0; i < f->count; i++)
        if (keyring_check(p->w->ctx, all[i], err))
            return err->code;
    return 0;
}

struct writer {
    struct write *w;
    struct purser_error err;
    int rc;
};

/* The answer of the whole payload as the revision the writer is writing; that revision, or -1
 * when the writer has none yet or the answer could not be written. */
static long long speculate_answer(struct write *w, const char *bucket)
{
    struct feed *f = w->feed;
    struct purser_error ignored;
    long long revision;
    pthread_mutex_lock(&f->lock);
    revision = f->revision ? f->revision : -1;
    pthread_mutex_unlock(&f->lock);
    if (revision < 0 || write_answer(w, f->blocks, f->count, bucket, revision, &ignored))
        return -1;
    return revision;
}

static void *writer_main(void *arg)
{
    struct writer *t = arg;
    t->rc = run_write(t->w, &t->err);
    return NULL;
}

int docstore_write_stream(const struct docstore_ctx *ctx, const char *bucket,
                          enum docstore_mode mode, const char *text, size_t len,
                          const struct yaml_limits *limits, struct buf *out,
                          struct docstore_stream *s, struct purser_error *err)
{
    struct feed feed = {.threaded = 1};
    struct write w = {.ctx = ctx, .bucket = bucket, .mode = mode, .feed = &feed, .out = out,
                      .answer_later = 1};
    struct parser p = {.w = &w, .feed = &feed, .arena = arena_new(), .faults = json_array(),
                       .sealed = json_array()};
    struct writer t = {.w = &w};
    struct purser_error parse_err;
    json_t *stream = NULL;
    pthread_t thread;
    sigset_t all, old;
    long long speculated = -1;
    int started, rc;

    memset(s, 0, sizeof(*s));
    if (!p.arena || !p.faults || !p.sealed) {
        arena_free(p.arena);
        json_decref(p.faults);
        json_decref(p.sealed);
        return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    }
    pthread_mutex_init(&feed.lock, NULL);
    pthread_cond_init(&feed.more, NULL);
    if (document_name_check("bucket name", bucket, &p.err))
        parser_stop(&p); /* (no writer: the payload is read for its errors only) */
    /* the writer takes no signal: the worker's handlers stay on this thread */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    started = !p.stopped && pthread_create(&thread, NULL, writer_main, &t) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (!started)
        feed.threaded = 0; /* no thread: the writer runs once the stream is read */

    rc = yaml_codec_parse_each(&stream, text, len, limits, parsed, &p, &parse_err);
    rc = payload_verdict(&p, rc, &parse_err, s, err);
    feed_publish(&feed, rc ? FEED_FAILED : FEED_DONE);
    if (!rc && started) /* the answer, while the writer ends: its revision, as the writer has it
                           now; written again below if the write ends with another */
        speculated = speculate_answer(&w, bucket);
    if (started)
        pthread_join(thread, NULL);
    else if (!rc)
        writer_main(&t);
    release_json(&p, feed.count);
    if (!rc && (rc = t.rc))
        *err = t.err;
    if (!rc && (speculated != w.answer_revision || w.answer_bucket != bucket))
        rc = write_answer(&w, feed.blocks, feed.count, w.answer_bucket, w.answer_revision, err);
    if (rc == WRITE_ABANDONED) /* (only a failed payload stops the writer) */
        rc = purser_error_set(err, PURSER_EINTERNAL, "the document write stopped");
    json_decref(stream);
    json_decref(p.faults);
    json_decref(p.sealed);
    arena_free(p.arena);
    pthread_cond_destroy(&feed.more);
    pthread_mutex_destroy(&feed.lock);
    return rc;
}

static int purge_txn(struct store *store, void *arg, struct purser_error *err)
{
    const struct docstore_ctx *ctx = arg;
    struct store_value p[] = {STORE_INT(ctx->org_id)};
    static const char *const statements[] = {
        "INSERT IGNORE INTO doc_heads (org_id) VALUES (?)",
        "SELECT next_revision FROM doc_heads WHERE org_id = ? FOR UPDATE",
        "DELETE FROM doc_revisions WHERE org_id = ?",
        "DELETE FROM doc_contents WHERE org_id = ?",
        "DELETE FROM doc_buckets WHERE org_id = ?",
        "UPDATE doc_heads SET next_revision = 1 WHERE org_id = ?",
    };
    (void)store;
    for (size_t i = 0; i < sizeof(statements) / sizeof(statements[0]); i++) {
        struct store_rows rows;
        int rc = i == 1 ? docstore_query(ctx, &rows, statements[i], p, 1, err)
                        : docstore_exec(ctx, statements[i], p, 1, NULL, err);
        if (rc)
            return rc;
    }
    return event_append(ctx->store, ctx->org_id, "document_revision", "*", "delete", NULL, NULL,
                        err);
}

int docstore_purge(const struct docstore_ctx *ctx, struct purser_error *err)
{
    return store_txn(ctx->store, 0, purge_txn, (void *)ctx, err);
}

struct rollback {
    struct write w;
    long long target;
};

/* A rollback that would bring back, change or remove an encrypted document needs
 * write_encrypted_document, as any other write of one does. */
static int rollback_encrypted_check(struct write *w, const struct member *target, size_t n,
                                    struct purser_error *err)
{
    for (size_t i = 0; i < n; i++) {
        const struct member *now = find_member(w, target[i].schema, target[i].layer,
                                               target[i].name);
        if (target[i].encrypted && (!now || now->content_id != target[i].content_id))
            return purser_error_set(err, PURSER_EDENIED,
                                    "rolling back the encrypted document [%s, %s] %s needs "
                                    "write_encrypted_document",
                                    target[i].schema, target[i].layer, target[i].name);
    }
    for (size_t j = 0; j < w->member_count; j++) {
        const struct member *m = &w->members[j];
        int kept = 0;
        for (size_t i = 0; i < n && !kept; i++)
            kept = target[i].content_id == m->content_id;
        if (m->encrypted && !kept)
            return purser_error_set(err, PURSER_EDENIED,
                                    "rolling back removes the encrypted document [%s, %s] %s, "
                                    "which needs write_encrypted_document",
                                    m->schema, m->layer, m->name);
    }
    return 0;
}

static int rollback_txn(struct store *store, void *arg, struct purser_error *err)
{
    struct rollback *r = arg;
    struct write *w = &r->w;
    struct member *target = NULL;
    size_t n = 0;
    struct entry *entries;
    int rc;

    (void)store;
    if ((rc = lock_head(w, err)) || (rc = load_previous(w, err)))
        return rc;
    if (r->target && (rc = docstore_revision_check(w->ctx, r->target, err)))
        return rc;
    if ((rc = docstore_members(w->ctx, r->target, &target, &n, err)))
        return rc;
    if (!(entries = arena_calloc(w->ctx->arena, n ? n : 1, sizeof(*entries))))
        return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    for (size_t i = 0; i < n; i++) {
        const struct member *now = find_member(w, target[i].schema, target[i].layer, target[i].name);
        entries[i] = (struct entry){.member = &target[i],
                                    .content_id = target[i].content_id,
                                    .bucket_id = target[i].bucket_id,
                                    .since = now && now->content_id == target[i].content_id
                                                 ? now->since
                                                 : w->revision};
    }
    if (!w->ctx->write_encrypted && (rc = rollback_encrypted_check(w, target, n, err)))
        return rc;
    w->any_payload = 0;
    return (rc = written(w, insert_revision(w, err), err)) ||
                   (rc = written(w, write_members(w, entries, n, err), err)) ||
                   (rc = written(w, finish_revision(w, entries, n, err), err))
               ? rc
               : 0;
}

int docstore_rollback(const struct docstore_ctx *ctx, long long id, json_t **out,
                      struct purser_error *err)
{
    struct rollback r = {.w = {.ctx = ctx}, .target = id};
    int rc;
    *out = NULL;
    if (id < 0)
        return purser_error_set(err, PURSER_EINVAL, "revision id must be 0 or more");
    rc = store_txn(ctx->store, 0, rollback_txn, &r, err);
    return rc ? rc : docstore_revision(ctx, r.w.revision, out, err);
}
