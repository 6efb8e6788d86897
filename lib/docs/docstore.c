/* docstore.c: writing the document store: a write's transaction (the revision's contents and
 * rows, its answer), writes of documents already parsed, and deletes. The writer takes the
 * payload from the feed (docstore_feed.c), which a parsed stream fills (docstore_stream.c,
 * which calls this file; this file never calls it); the revision's planning docstore_plan.c, purge
 * and rollback docstore_purge.c. */
#include "docs/docstore_private.h"
#include "store/events.h"

#include "auth/keyring.h"
#include "base/buf.h"
#include "base/crypto.h"
#include "base/json_text.h"
#include "codec/yaml_codec.h"

#include <stdlib.h>
#include <string.h>

#define BATCH_ROWS 500
#define FEED_BATCH 125 /* documents the writer stores at a time, the feed still open */

/* The rows of a revision refer to rows the write inserted, or read under the organization's
 * head lock (which purge and every writer take first): their foreign keys are not looked up
 * again for each row (a lookup and a shared lock per row, the parents already held). Their
 * ON DELETE CASCADE stays. */
#define WRITTEN_ROWS "SET STATEMENT foreign_key_checks = 0 FOR "

/* What a batch of insert_rows_returning returned: rows [from, from + k) of the input. */
typedef int (*returned_fn)(void *arg, size_t from, size_t k, const struct store_rows *rows,
                           struct purser_error *err);

/* Runs "prefix VALUES (?,..),(?,..) suffix" over rows of width parameters, in batches; with
 * got, suffix ends in RETURNING and got reads each batch's rows. */
static int insert_rows_returning(const struct docstore_ctx *ctx, const char *prefix,
                                 const char *suffix, size_t width, const struct store_value *params,
                                 size_t rows, returned_fn got, void *arg, struct purser_error *err)
{
    int rc = 0;
    for (size_t done = 0; done < rows && !rc;) {
        size_t k = rows - done < BATCH_ROWS ? rows - done : BATCH_ROWS;
        struct buf sql = BUF_INIT;
        rc = buf_adds(&sql, prefix);
        if (!rc)
            rc = buf_adds(&sql, " VALUES ");
        for (size_t r = 0; r < k && !rc; r++) {
            rc = buf_adds(&sql, r ? ",(" : "(");
            for (size_t c = 0; c < width && !rc; c++)
                rc = buf_adds(&sql, c ? ",?" : "?");
            if (!rc)
                rc = buf_addc(&sql, ')');
        }
        if (!rc)
            rc = buf_adds(&sql, suffix);
        if (rc) {
            rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
        } else if (got) {
            struct store_rows out;
            rc = docstore_query(ctx, &out, buf_cstr(&sql), params + done * width, k * width, err);
            if (!rc)
                rc = got(arg, done, k, &out, err);
        } else {
            rc = docstore_exec(ctx, buf_cstr(&sql), params + done * width, k * width, NULL, err);
        }
        buf_release(&sql);
        done += k;
    }
    return rc;
}

static int insert_rows(const struct docstore_ctx *ctx, const char *prefix, const char *suffix,
                       size_t width, const struct store_value *params, size_t rows,
                       struct purser_error *err)
{
    return insert_rows_returning(ctx, prefix, suffix, width, params, rows, NULL, NULL, err);
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
        char *aad =
            document_aad(w->ctx->arena, w->ctx->org_id, d->schema, d->layer, d->name, &aad_len);
        unsigned char *sealed = NULL;
        int key_id = 0;
        char *copy;
        rc = aad ? keyring_seal(w->ctx->keyring, aad, aad_len, data, strlen(data), &sealed,
                                &sealed_len, &key_id, err)
                 : purser_error_set(err, PURSER_EINTERNAL, "out of memory");
        crypto_free_secret(data);
        if (!rc) {
            copy = arena_alloc(w->ctx->arena, sealed_len);
            if (copy)
                memcpy(copy, sealed, sealed_len);
            free(sealed);
            if (!copy || crypto_random(random_sha, 32))
                rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
        }
        if (!rc) {
            cols[1] = STORE_BLOB(copy, sealed_len);
            cols[2] = STORE_INT(key_id);
            cols[3] = STORE_BLOB((const char *)random_sha, 32);
            cols[4] = STORE_NULLV;
        }
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
    int rc = 0;

    if (!p || !nc.entries || !nc.shas)
        return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    for (size_t i = 0; i < n && !rc; i++) {
        const struct document *d = entries[i].doc;
        struct store_value *row = p + news * 11, cols[5];
        unsigned char *random_sha;
        const char *labels;
        size_t labels_len;
        if (!entries[i].is_new)
            continue;
        if (!(random_sha = arena_alloc(w->ctx->arena, 32)))
            rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
        if (!rc)
            rc = content_columns(w, &entries[i], cols, random_sha, err);
        if (!rc) {
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
                rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
        }
        if (!rc) {
            row[10] = labels_len ? STORE_BLOB(labels, labels_len) : STORE_NULLV;
            news++;
        }
    }
    if (!rc && news)
        rc = insert_rows_returning(w->ctx,
                                   "INSERT INTO doc_contents (org_id, content_sha256, schema_name,"
                                   " layer, name, encrypted, key_id, metadata, data, yaml, labels)",
                                   " ON DUPLICATE KEY UPDATE id = id RETURNING id, content_sha256",
                                   11, p, news, content_ids, &nc, err);
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
int docstore_insert_revision(struct write *w, struct purser_error *err)
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
int docstore_finish_revision(struct write *w, const struct entry *carried, size_t n,
                             struct purser_error *err)
{
    char *buckets = bucket_names(w, carried, n);
    struct store_value head[] = {STORE_INT(w->revision + 1), STORE_INT(w->ctx->org_id)};
    struct store_value rev[] = {STORE_STR(buckets ? buckets : "[]"), STORE_INT(w->ctx->org_id),
                                STORE_INT(w->revision)};
    int rc = docstore_exec(w->ctx, "UPDATE doc_heads SET next_revision = ? WHERE org_id = ?", head,
                           2, NULL, err);
    if (!rc)
        rc = docstore_exec(w->ctx,
                           "UPDATE doc_revisions SET buckets = ? WHERE org_id = ? AND id = ?", rev,
                           3, NULL, err);
    if (!rc) { /* the event names the revision and the buckets it changed */
        char *id = arena_sprintf(w->ctx->arena, "%lld", w->revision);
        json_t *detail =
            json_pack("{s:o}", "buckets", json_loads(buckets ? buckets : "[]", 0, NULL));
        rc = event_append(w->ctx->store, w->ctx->principal, w->ctx->org_id, "document_revision", id,
                          "put", id, detail, err);
        json_decref(detail);
    }
    return rc;
}

/* The rows of entries that start at the new revision (those that go on are there already). */
int docstore_write_members(struct write *w, const struct entry *entries, size_t n,
                           struct purser_error *err)
{
    struct store_value *p = arena_alloc(w->ctx->arena, (n ? n : 1) * 10 * sizeof(*p));
    size_t rows = 0;
    if (!p)
        return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    for (size_t i = 0; i < n; i++) {
        const struct entry *e = &entries[i];
        struct store_value *row = p + rows * 10;
        if (e->goes_on)
            continue;
        rows++;
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
                       "", 10, p, rows, err);
}

#define CLOSE_BATCH 1000 /* rows ended by one statement */

/* Ends the intervals of k member rows before the new revision: one UPDATE joined to their keys
 * (a JSON array of [revision_id, content_id], one statement whatever k is), each key a point
 * of the primary key. An UPDATE per row cost MariaDB about 150 us of statement work each; a
 * revision that changed a bucket of 4,000 documents spent 0.6 s ending their rows, where this
 * takes about 0.1 s. */
static int close_rows(struct write *w, struct member *const *rows, size_t k,
                      struct purser_error *err)
{
    struct buf keys = BUF_INIT;
    int rc;
    if (!k)
        return 0;
    rc = buf_addc(&keys, '[');
    for (size_t i = 0; i < k && !rc; i++) {
        rows[i]->closed = 1;
        rc = buf_printf(&keys, "%s[%lld,%lld]", i ? "," : "", rows[i]->from, rows[i]->content_id);
    }
    if (rc || buf_addc(&keys, ']'))
        rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    else {
        struct store_value p[] = {STORE_STR(buf_cstr(&keys)), STORE_INT(w->ctx->org_id),
                                  STORE_INT(w->revision)};
        unsigned long long ended = 0;
        rc = docstore_exec(w->ctx,
                           "UPDATE doc_revision_documents d JOIN JSON_TABLE(?, '$[*]' COLUMNS ("
                           "revision_id BIGINT PATH '$[0]', content_id BIGINT PATH '$[1]')) k"
                           " ON d.org_id = ? AND d.until_revision = " DOCSTORE_OPEN
                           " AND d.revision_id = k.revision_id AND d.content_id = k.content_id"
                           " SET d.until_revision = ?",
                           p, 3, &ended, err);
        /* a row not open any more was ended by a write this one's reads did not see (a Galera
         * node applying the cluster's writes behind): run again, as for a key taken already */
        if (!rc && ended != k)
            rc = store_conflict(w->ctx->store, "a row the new revision ends was not open", err);
    }
    buf_release(&keys);
    return rc;
}

/* Closes the rows of the previous revision that the new one does not hold (dropped and not
 * kept, and not closed as they were replaced): their interval ends before it. */
int docstore_close_members(struct write *w, struct purser_error *err)
{
    struct member *rows[CLOSE_BATCH];
    size_t k = 0;
    int rc = 0;
    for (size_t j = 0; j < w->member_count && !rc; j++) {
        struct member *m = &w->members[j];
        if (!m->drop || m->kept || m->closed)
            continue;
        rows[k++] = m;
        if (k < CLOSE_BATCH)
            continue;
        rc = close_rows(w, rows, k, err);
        k = 0;
    }
    if (!rc)
        rc = close_rows(w, rows, k, err);
    return rc;
}

/* The answer: the payload's documents (encrypted data never echoed), or the status alone. */
int docstore_write_answer(struct write *w, struct item *const *items, size_t count,
                          const char *bucket, long long revision, struct purser_error *err)
{
    struct buf status = BUF_INIT;
    int rc = document_status_yaml(&status, bucket, revision, err), any = 0;
    buf_reset(w->out);
    for (size_t i = 0; !rc && i < count; i++) {
        const struct item *it = docstore_feed_item(items, i);
        if (!it->yaml)
            continue;
        any = 1;
        if (buf_adds(w->out, "---\n") || buf_adds(w->out, it->yaml) ||
            buf_add(w->out, status.data, status.len))
            rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    }
    if (!rc && !any && (buf_adds(w->out, "---\n") || buf_add(w->out, status.data, status.len)))
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
    return w->answer_later ? 0 : docstore_write_answer(w, items, count, bucket, revision, err);
}

/* rc of a write of the new revision's rows. Every key written from the revision row on is
 * this revision's, under the head's lock: one that is taken already was written by a
 * transaction this one's reads did not see (a Galera node applying the cluster's writes
 * behind), not an answer for the client. */
int docstore_written(struct write *w, int rc, struct purser_error *err)
{
    if (rc == PURSER_EEXISTS)
        return store_conflict(w->ctx->store, "a row of the new revision was there already", err);
    return rc;
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

/* Once per item: a transaction run again finds them done. (The YAML is about a third of what
 * the parser's thread would otherwise spend on a document.) */
int docstore_prepare_items(struct feed *f, struct arena *arena, struct item *const *items,
                           size_t from, size_t to, struct purser_error *err)
{
    for (size_t i = from; i < to; i++) {
        struct item *it = docstore_feed_item(items, i);
        if (it->doc == &it->own && !it->own.metadata_json && document_hash(arena, &it->own))
            return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
        if (!it->yaml && it->doc->kind != DOCUMENT_TOMBSTONE &&
            !(it->yaml = document_answer_yaml(arena, it->doc, err)))
            return err->code;
    }
    docstore_feed_hashed(f, to);
    return 0;
}

/* Stores the payload documents of items [from, to): their new contents and their rows. */
static int write_items(struct write *w, struct item *const *items, size_t from, size_t to,
                       struct purser_error *err)
{
    struct entry *entries = arena_calloc(w->ctx->arena, to - from, sizeof(*entries));
    struct member **replaced = arena_alloc(w->ctx->arena, (to - from) * sizeof(*replaced));
    size_t n = 0, k = 0;
    int rc;
    if (!entries || !replaced)
        return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    rc = docstore_plan_documents(w, items, from, to, entries, &n, err);
    if (!rc) {
        rc = docstore_written(w, write_contents(w, entries, n, err), err);
        if (!rc)
            rc = docstore_written(w, docstore_write_members(w, entries, n, err), err);
    }
    if (!rc) {
        /* the rows these change end now, while the next documents are parsed, not after it */
        for (size_t i = 0; i < n; i++)
            if (entries[i].replaced && !entries[i].replaced->closed)
                replaced[k++] = entries[i].replaced;
        rc = close_rows(w, replaced, k, err);
    }
    return rc;
}

/* The payload as the parser hands it over: each document hashed at once (its JSON then goes;
 * by the preparer when there is one), its rows stored FEED_BATCH at a time (the statements then
 * have one shape, which the store keeps prepared; only the payload's last ones are fewer).
 * *items and *done: the items the feed holds, how many are written; WRITE_ABANDONED when the
 * payload failed. */
static int write_payload(struct write *w, struct item *const **items, size_t *done,
                         struct purser_error *err)
{
    size_t n = 0, hashed = 0, until;
    enum feed_state state = FEED_OPEN;
    int rc = 0;
    *done = 0;
    while (!rc && (state = docstore_feed_wait(w->feed, hashed, &until, items)) != FEED_FAILED &&
           (*done < until || state == FEED_OPEN)) {
        if (!w->feed->prepared)
            rc = docstore_prepare_items(w->feed, w->ctx->arena, *items, hashed, until, err);
        hashed = until;
        for (; !rc && *done < until && (until - *done >= FEED_BATCH || state != FEED_OPEN);
             *done += n) {
            n = until - *done < FEED_BATCH ? until - *done : FEED_BATCH;
            rc = write_items(w, *items, *done, *done + n, err);
        }
    }
    if (!rc && state == FEED_FAILED)
        rc = WRITE_ABANDONED;
    return rc;
}

static int write_txn(struct store *store, void *arg, struct purser_error *err)
{
    struct write *w = arg;
    struct entry *carried = NULL;
    struct item *const *items = NULL;
    const char *answer_bucket = w->bucket;
    size_t n = 0, done = 0;
    int rc;

    (void)store;
    w->changed = w->any_payload = 0;
    w->layering = w->second_name = NULL;
    rc = docstore_lock_head(w, err);
    if (!rc)
        rc = docstore_load_previous(w, err);
    if (!rc && w->delete_schema && !(answer_bucket = docstore_find_member_by_name(w)))
        rc = purser_error_set(err, PURSER_ENOTFOUND, "document [%s] %s does not exist",
                              w->delete_schema, w->delete_name);
    if (!rc && w->bucket)
        rc = docstore_bucket_id(w, err);
    if (!rc)
        rc = docstore_written(w, docstore_insert_revision(w, err), err);
    if (!rc) {
        docstore_feed_set_revision(w->feed, w->revision); /* (for the parser's answer, written
                                                             while this one ends) */
        rc = write_payload(w, &items, &done, err);
    }
    if (!rc && !(carried = arena_calloc(w->ctx->arena, w->member_count ? w->member_count : 1,
                                        sizeof(*carried))))
        rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    if (!rc)
        docstore_plan_carried(w, carried, &n);
    for (size_t i = 0; !rc && i < w->member_count; i++) {
        const struct member *m = &w->members[i];
        if (m->drop && m->encrypted && !m->kept)
            rc = docstore_encrypted_check(w->ctx, "changing or deleting", m->schema, m->layer,
                                          m->name, err);
    }
    if (!rc)
        rc = docstore_check_singleton(w, err);
    if (!rc && !w->changed) { /* no revision: the transaction is rolled back */
        rc = answer(w, items, done, answer_bucket, w->latest, err);
        if (!rc)
            rc = WRITE_UNCHANGED; /* (so nothing below runs) */
    }
    if (!rc)
        rc = docstore_close_members(w, err);
    if (!rc)
        rc = docstore_written(w, docstore_write_members(w, carried, n, err), err);
    if (!rc)
        rc = docstore_written(w, docstore_finish_revision(w, carried, n, err), err);
    if (!rc)
        rc = docstore_written(w, docstore_record_checks(w, items, done, carried, n, err), err);
    if (!rc)
        rc = answer(w, items, done, answer_bucket, w->revision, err);
    return rc;
}

/* Runs the write's transaction; a write that changes nothing succeeds without a revision. */
int docstore_run_write(struct write *w, struct purser_error *err)
{
    int rc = store_txn(w->ctx->store, 0, write_txn, w, err);
    return rc == WRITE_UNCHANGED ? 0 : rc;
}

/* What the writer needs of an item's document besides the document and what
 * docstore_prepare_items takes: its labels. */
int docstore_item_fill(struct arena *arena, struct item *it, struct purser_error *err)
{
    const struct document *d = it->doc;
    json_t *labels = json_object_get(json_object_get(d->doc, "metadata"), "labels");
    const char *key;
    json_t *v;
    size_t at = 0;
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
int docstore_keyring_check(const struct docstore_ctx *ctx, const struct document *d,
                           struct purser_error *err)
{
    if (d->encrypted && !ctx->keyring)
        return purser_error_set(err, PURSER_EUNAVAIL,
                                "no keyring is configured: document [%s] %s cannot be "
                                "stored encrypted",
                                d->schema, d->name);
    return 0;
}

/* The one place the right is read: the caller decided it once (ctx->write_encrypted). */
int docstore_encrypted_check(const struct docstore_ctx *ctx, const char *doing, const char *schema,
                             const char *layer, const char *name, struct purser_error *err)
{
    if (ctx->write_encrypted)
        return 0;
    return purser_error_set(err, PURSER_EDENIED,
                            "%s the encrypted document [%s, %s] %s needs write_encrypted_document",
                            doing, schema, layer, name);
}

int docstore_write(const struct docstore_ctx *ctx, const char *bucket, enum docstore_mode mode,
                   const struct document *docs, size_t count, struct buf *out,
                   struct purser_error *err)
{
    struct feed feed;
    struct write w = {.ctx = ctx, .bucket = bucket, .mode = mode, .feed = &feed, .out = out};
    int rc = document_name_check("bucket name", bucket, err);

    docstore_feed_init(&feed, 0);
    for (size_t i = 0; !rc && i < count; i++)
        rc = docstore_keyring_check(ctx, &docs[i], err);
    for (size_t i = 0; !rc && i < count; i++) {
        struct item *it = docstore_feed_next(&feed, ctx->arena);
        if (!it)
            rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
        if (!rc) {
            it->doc = &docs[i];
            rc = docstore_item_fill(ctx->arena, it, err);
        }
        if (!rc)
            docstore_feed_filled(&feed);
    }
    docstore_feed_publish(&feed, FEED_DONE); /* (a local feed, no thread: inert after a failure) */
    if (!rc)
        rc = docstore_run_write(&w, err);
    return rc;
}

int docstore_delete_document(const struct docstore_ctx *ctx, const char *schema, const char *name,
                             struct buf *out, struct purser_error *err)
{
    struct feed feed;
    struct write w = {.ctx = ctx,
                      .mode = DOCSTORE_POST,
                      .feed = &feed,
                      .delete_schema = schema,
                      .delete_name = name,
                      .out = out};
    docstore_feed_init(&feed, 0);
    docstore_feed_publish(&feed, FEED_DONE);
    return docstore_run_write(&w, err);
}
