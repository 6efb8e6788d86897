/* docstore.c: writing the document store: buckets, new revisions, deletes, rollback, purge,
 * and re-sealing secrets under a new key. */
#include "docs/docstore_private.h"
#include "store/events.h"

#include "base/buf.h"
#include "base/crypto.h"
#include "base/json_text.h"
#include "base/utf8.h"
#include "auth/keyring.h"
#include "codec/yaml_codec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BATCH_ROWS 500

/* One document of the revision being written. */
struct entry {
    const struct document *doc; /* NULL when carried from the previous revision */
    const struct member *member; /* the previous revision's row, or NULL */
    long long content_id, bucket_id, since;
    int is_new; /* its content must be stored */
};

struct write {
    const struct docstore_ctx *ctx;
    const char *bucket;
    enum docstore_mode mode;
    const struct document *docs;
    size_t count;
    const char *delete_schema, *delete_name; /* DELETE documents/{schema}/{name} */
    long long bucket_id, latest, revision;
    struct member *members;
    size_t member_count;
    const struct member **sorted; /* members by identity */
    char **yaml;                  /* per payload document: its YAML (data redacted if sealed) */
    struct buf *out;
};

/* Runs "prefix VALUES (?,..),(?,..) suffix" over rows of width parameters, in batches. */
static int insert_rows(const struct docstore_ctx *ctx, const char *prefix, const char *suffix,
                       size_t width, const struct store_value *params, size_t rows,
                       struct purser_error *err)
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
        if (rc)
            rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
        else
            rc = docstore_exec(ctx, buf_cstr(&sql), params + done * width, k * width, NULL, err);
        buf_release(&sql);
        if (rc)
            return rc;
        done += k;
    }
    return 0;
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

/* Decides for each payload document whether it is new, changed or unchanged, and marks the
 * previous rows it replaces or deletes. */
static int plan_documents(struct write *w, struct entry *entries, size_t *entry_count,
                          int *changed, struct purser_error *err)
{
    for (size_t i = 0; i < w->count; i++) {
        const struct document *d = &w->docs[i];
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
        *e = (struct entry){.doc = d, .bucket_id = w->bucket_id, .since = w->revision, .is_new = 1};
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

/* Rows of the previous revision that stay: *changed when any is dropped. */
static void plan_carried(struct write *w, struct entry *entries, size_t *entry_count, int *changed)
{
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
    }
}

/* Deckhand allows one LayeringPolicy: 409 when the new revision would hold two. */
static int check_singleton(const struct entry *entries, size_t n, struct purser_error *err)
{
    const char *first = NULL, *first_layer = "";
    for (size_t i = 0; i < n; i++) {
        const char *schema = entries[i].doc ? entries[i].doc->schema : entries[i].member->schema;
        const char *name = entries[i].doc ? entries[i].doc->name : entries[i].member->name;
        if (!document_schema_is(schema, "deckhand/LayeringPolicy"))
            continue;
        if (!first) {
            first = name;
            first_layer = entries[i].doc ? entries[i].doc->layer : entries[i].member->layer;
        } else
            return purser_error_set(
                err, PURSER_EEXISTS,
                "A singleton document [%s, %s] %s already exists in the system. The new "
                "document(s) [%s, %s] %s cannot be created. To create a document with a new "
                "name, delete the current one first.",
                schema, first_layer, first, schema,
                entries[i].doc ? entries[i].doc->layer : entries[i].member->layer, name);
    }
    return 0;
}

/* The metadata and data columns of a new content: data sealed when encrypted. */
static int content_columns(struct write *w, const struct document *d, struct store_value *cols,
                           unsigned char *random_sha, struct purser_error *err)
{
    /* metadata and data as hashed (document_prepare): keys sorted, as Deckhand emits them */
    char *data = NULL;
    int rc = 0;

    cols[0] = STORE_STR(d->metadata_json);
    if (!d->encrypted) {
        cols[1] = STORE_BLOB(d->data_json, strlen(d->data_json));
        cols[2] = STORE_NULLV;
        cols[3] = STORE_BLOB((const char *)d->content_sha256, 32);
        cols[4] = STORE_STR(w->yaml[d - w->docs]);
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

/* Reads back the ids of the contents just stored, by their hashes. */
static int content_ids(struct write *w, struct entry *entries, size_t n,
                       const unsigned char **shas, struct purser_error *err)
{
    size_t news = 0;
    for (size_t i = 0; i < n; i++)
        if (entries[i].is_new)
            news++;
    for (size_t done = 0, i = 0; done < news;) {
        size_t k = news - done < BATCH_ROWS ? news - done : BATCH_ROWS, got = 0;
        struct store_value *p = arena_alloc(w->ctx->arena, (k + 1) * sizeof(*p));
        struct entry **batch = arena_alloc(w->ctx->arena, k * sizeof(*batch));
        struct buf sql = BUF_INIT;
        struct store_rows rows;
        int rc;
        if (!p || !batch)
            return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
        p[0] = STORE_INT(w->ctx->org_id);
        buf_adds(&sql, "SELECT id, content_sha256 FROM doc_contents WHERE org_id = ? AND "
                       "content_sha256 IN (");
        for (; got < k; i++) {
            if (!entries[i].is_new)
                continue;
            batch[got] = &entries[i];
            p[got + 1] = STORE_BLOB((const char *)shas[i], 32);
            buf_adds(&sql, got ? ",?" : "?");
            got++;
        }
        buf_addc(&sql, ')');
        rc = docstore_query(w->ctx, &rows, buf_cstr(&sql), p, k + 1, err);
        buf_release(&sql);
        if (rc)
            return rc;
        for (size_t r = 0; r < rows.count; r++)
            for (size_t b = 0; b < k; b++)
                if (memcmp(shas[batch[b] - entries], store_cell(&rows, r, 1), 32) == 0)
                    batch[b]->content_id = atoll(store_cell(&rows, r, 0));
        done += k;
    }
    return 0;
}

/* Labels of the new contents, for the metadata.label filter. */
static int write_labels(struct write *w, const struct entry *entries, size_t n,
                        struct purser_error *err)
{
    size_t count = 0, at = 0;
    struct store_value *p;
    for (size_t i = 0; i < n; i++)
        if (entries[i].is_new)
            count += json_object_size(
                json_object_get(json_object_get(entries[i].doc->doc, "metadata"), "labels"));
    if (!count)
        return 0;
    if (!(p = arena_alloc(w->ctx->arena, count * 3 * sizeof(*p))))
        return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    for (size_t i = 0; i < n; i++) {
        const char *key;
        json_t *v;
        if (!entries[i].is_new)
            continue;
        json_object_foreach(json_object_get(json_object_get(entries[i].doc->doc, "metadata"),
                                            "labels"),
                            key, v) {
            char *text = yaml_codec_key_text_in(w->ctx->arena, v);
            p[at++] = STORE_INT(entries[i].content_id);
            p[at++] = STORE_STR(key);
            p[at++] = STORE_STR(text ? text : "");
        }
    }
    return insert_rows(w->ctx, "INSERT IGNORE INTO doc_labels (content_id, label_key, label_value)",
                       "", 3, p, at / 3, err);
}

static int write_contents(struct write *w, struct entry *entries, size_t n,
                          struct purser_error *err)
{
    size_t news = 0;
    struct store_value *p = arena_alloc(w->ctx->arena, (n ? n : 1) * 10 * sizeof(*p));
    const unsigned char **shas = arena_calloc(w->ctx->arena, n ? n : 1, sizeof(*shas));
    int rc;

    if (!p || !shas)
        return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    for (size_t i = 0; i < n; i++) {
        const struct document *d = entries[i].doc;
        struct store_value *row = p + news * 10, cols[5];
        unsigned char *random_sha;
        if (!entries[i].is_new)
            continue;
        if (!(random_sha = arena_alloc(w->ctx->arena, 32)))
            return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
        if ((rc = content_columns(w, d, cols, random_sha, err)))
            return rc;
        shas[i] = (const unsigned char *)cols[3].str;
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
        news++;
    }
    if (!news)
        return 0;
    rc = insert_rows(w->ctx,
                     "INSERT INTO doc_contents (org_id, content_sha256, schema_name, layer, name,"
                     " encrypted, key_id, metadata, data, yaml)",
                     " ON DUPLICATE KEY UPDATE id = id", 10, p, news, err);
    if (!rc)
        rc = content_ids(w, entries, n, shas, err);
    /* Each new content is there now, inserted or found. One that is neither was lost to the
     * upsert: Galera gave its auto-increment id twice (the INSERT met another content on the
     * PRIMARY key and "updated" it), or a concurrent writer's row was not yet in this
     * transaction's snapshot. Both pass when the transaction runs again. */
    for (size_t i = 0; !rc && i < n; i++)
        if (entries[i].is_new && !entries[i].content_id)
            rc = store_conflict(w->ctx->store, "a new document content was not stored", err);
    if (!rc)
        rc = write_labels(w, entries, n, err);
    return rc;
}

/* The sorted JSON array of the buckets entries belong to. */
static char *bucket_names(struct write *w, const struct entry *entries, size_t n)
{
    json_t *names = json_array();
    char *text, *copy;
    for (size_t i = 0; i < n; i++) {
        const char *b = entries[i].doc ? w->bucket : entries[i].member->bucket;
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

static int write_revision_row(struct write *w, const struct entry *entries, size_t n,
                          struct purser_error *err)
{
    char *buckets = bucket_names(w, entries, n);
    struct store_value head[] = {STORE_INT(w->revision + 1), STORE_INT(w->ctx->org_id)};
    struct store_value rev[] = {STORE_INT(w->ctx->org_id), STORE_INT(w->revision),
                                STORE_STR(w->ctx->principal), STORE_STR(buckets ? buckets : "[]")};
    int rc = docstore_exec(w->ctx, "UPDATE doc_heads SET next_revision = ? WHERE org_id = ?", head, 2, NULL, err);
    if (!rc)
        rc = docstore_exec(w->ctx,
                  "INSERT INTO doc_revisions (org_id, id, created_by, buckets) VALUES (?, ?, ?, ?)",
                  rev, 4, NULL, err);
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
static int write_answer(struct write *w, const char *bucket, long long revision,
                        struct purser_error *err)
{
    struct buf status = BUF_INIT;
    int rc = document_status_yaml(&status, bucket, revision, err), any = 0;
    buf_reset(w->out);
    for (size_t i = 0; !rc && i < w->count; i++) {
        if (w->docs[i].kind == DOCUMENT_TOMBSTONE)
            continue;
        any = 1;
        if (buf_adds(w->out, "---\n") || buf_adds(w->out, w->yaml[i]) ||
            buf_add(w->out, status.data, status.len))
            rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    }
    if (!rc && !any &&
        (buf_adds(w->out, "---\n") || buf_add(w->out, status.data, status.len)))
        rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    buf_release(&status);
    return rc;
}

static int write_txn(struct store *store, void *arg, struct purser_error *err)
{
    struct write *w = arg;
    size_t n = 0, capacity;
    struct entry *entries;
    const char *answer_bucket = w->bucket;
    int changed = 0, rc;

    (void)store;
    if ((rc = lock_head(w, err)) || (rc = load_previous(w, err)))
        return rc;
    if (w->delete_schema && !(answer_bucket = find_member_by_name(w)))
        return purser_error_set(err, PURSER_ENOTFOUND, "document [%s] %s does not exist",
                                w->delete_schema, w->delete_name);
    if (w->bucket && (rc = bucket_id(w, err)))
        return rc;
    capacity = w->count + w->member_count;
    if (!(entries = arena_calloc(w->ctx->arena, capacity ? capacity : 1, sizeof(*entries))))
        return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    if ((rc = plan_documents(w, entries, &n, &changed, err)))
        return rc;
    plan_carried(w, entries, &n, &changed);
    for (size_t i = 0; i < w->member_count && !w->ctx->write_encrypted; i++)
        if (w->members[i].drop && w->members[i].encrypted && !w->members[i].kept)
            return purser_error_set(err, PURSER_EDENIED,
                                    "changing or deleting the encrypted document [%s, %s] %s "
                                    "needs write_encrypted_document",
                                    w->members[i].schema, w->members[i].layer,
                                    w->members[i].name);
    if ((rc = check_singleton(entries, n, err)))
        return rc;
    if (!changed)
        return write_answer(w, answer_bucket, w->latest, err);
    if ((rc = write_revision_row(w, entries, n, err)) || (rc = write_contents(w, entries, n, err)) ||
        (rc = write_members(w, entries, n, err)) ||
        (rc = record_schema_validation(w->ctx, w->revision, err))) {
        /* Every key written from here on is this revision's, under the head's lock: one that
         * is taken already was written by a transaction this one's reads did not see (a
         * Galera node applying the cluster's writes behind), not an answer for the client. */
        if (rc == PURSER_EEXISTS)
            rc = store_conflict(w->ctx->store, "a row of the new revision was there already",
                                err);
        return rc;
    }
    return write_answer(w, answer_bucket, w->revision, err);
}

/* Each payload document's YAML, emitted once: stored with its content, and the answer. */
static int emit_payload(struct write *w, struct purser_error *err)
{
    w->yaml = arena_calloc(w->ctx->arena, w->count ? w->count : 1, sizeof(*w->yaml));
    if (!w->yaml)
        return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    for (size_t i = 0; i < w->count; i++) {
        const struct document *d = &w->docs[i];
        struct buf text = BUF_INIT;
        json_t *redacted = d->encrypted ? json_string(REDACTED) : NULL;
        int rc;
        if (d->kind == DOCUMENT_TOMBSTONE)
            continue;
        rc = document_yaml(&text, d->schema, json_object_get(d->doc, "metadata"),
                           redacted ? redacted : json_object_get(d->doc, "data"), err);
        json_decref(redacted);
        if (!rc && !(w->yaml[i] = arena_strndup(w->ctx->arena, buf_cstr(&text), text.len)))
            rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
        buf_release(&text);
        if (rc)
            return rc;
    }
    return 0;
}

int docstore_write(const struct docstore_ctx *ctx, const char *bucket, enum docstore_mode mode,
                   const struct document *docs, size_t count, struct buf *out,
                   struct purser_error *err)
{
    struct write w = {.ctx = ctx, .bucket = bucket, .mode = mode, .docs = docs, .count = count,
                      .out = out};
    int rc;

    if ((rc = document_name_check("bucket name", bucket, err)))
        return rc;
    for (size_t i = 0; i < count; i++)
        if (docs[i].encrypted && !ctx->keyring)
            return purser_error_set(err, PURSER_EUNAVAIL,
                                    "no keyring is configured: document [%s] %s cannot be "
                                    "stored encrypted",
                                    docs[i].schema, docs[i].name);
    if ((rc = emit_payload(&w, err)))
        return rc;
    return store_txn(ctx->store, 0, write_txn, &w, err);
}

int docstore_delete_document(const struct docstore_ctx *ctx, const char *schema,
                             const char *name, struct buf *out, struct purser_error *err)
{
    struct write w = {.ctx = ctx, .mode = DOCSTORE_POST, .delete_schema = schema,
                      .delete_name = name, .out = out};
    return store_txn(ctx->store, 0, write_txn, &w, err);
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
    if ((rc = write_revision_row(w, entries, n, err)) || (rc = write_members(w, entries, n, err)))
        return rc;
    return 0;
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
