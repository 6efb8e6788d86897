/* docstore_plan.c: planning a new revision: the head locked and the previous revision read, and
 * each document of the payload and of the previous revision new, kept, changed or dropped. */
#include "docs/docstore_private.h"

#include "base/crypto.h"

#include <stdlib.h>
#include <string.h>

static int member_identity_compare(const void *a, const void *b)
{
    const struct member *x = *(const struct member *const *)a;
    const struct member *y = *(const struct member *const *)b;
    return document_identity_compare(x->schema, x->name, x->layer, y->schema, y->name, y->layer);
}

/* The bucket of a document of schema and name in the previous revision, or NULL. */
const char *docstore_find_member_by_name(const struct write *w)
{
    for (size_t i = 0; i < w->member_count; i++)
        if (strcmp(w->members[i].schema, w->delete_schema) == 0 &&
            strcmp(w->members[i].name, w->delete_name) == 0)
            return w->members[i].bucket;
    return NULL;
}

const struct member *docstore_find_member(const struct write *w, const char *schema,
                                          const char *layer, const char *name)
{
    struct member key = {.schema = schema, .layer = layer, .name = name};
    const struct member *k = &key, **found;
    found = bsearch(&k, w->sorted, w->member_count, sizeof(*w->sorted), member_identity_compare);
    return found ? *found : NULL;
}

/* Takes the organization's write lock and reads the next revision id. */
int docstore_lock_head(struct write *w, struct purser_error *err)
{
    struct store_value p[] = {STORE_INT(w->ctx->org_id)};
    struct store_rows rows;
    int rc =
        docstore_exec(w->ctx, "INSERT IGNORE INTO doc_heads (org_id) VALUES (?)", p, 1, NULL, err);
    if (!rc)
        rc = docstore_query(w->ctx, &rows,
                            "SELECT next_revision FROM doc_heads WHERE org_id = ? FOR UPDATE", p, 1,
                            err);
    if (!rc) {
        w->revision = atoll(store_cell(&rows, 0, 0));
        w->latest = w->revision - 1;
    }
    return rc;
}

int docstore_load_previous(struct write *w, struct purser_error *err)
{
    int rc = docstore_members(w->ctx, w->latest, &w->members, &w->member_count, err);
    if (!rc) {
        w->sorted = arena_alloc(w->ctx->arena,
                                (w->member_count ? w->member_count : 1) * sizeof(*w->sorted));
        if (!w->sorted)
            rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    }
    if (!rc) {
        for (size_t i = 0; i < w->member_count; i++)
            w->sorted[i] = &w->members[i];
        qsort(w->sorted, w->member_count, sizeof(*w->sorted), member_identity_compare);
    }
    return rc;
}

int docstore_bucket_id(struct write *w, struct purser_error *err)
{
    struct store_value p[] = {STORE_INT(w->ctx->org_id), STORE_STR(w->bucket)};
    struct store_rows rows;
    int rc = docstore_exec(w->ctx, "INSERT IGNORE INTO doc_buckets (org_id, name) VALUES (?, ?)", p,
                           2, NULL, err);
    if (!rc)
        rc = docstore_query(w->ctx, &rows,
                            "SELECT id FROM doc_buckets WHERE org_id = ? AND name = ?", p, 2, err);
    if (!rc && rows.count == 0) /* (document_name_check keeps names the column cannot hold out) */
        rc =
            purser_error_set(err, PURSER_EINVAL, "bucket name '%.64s' cannot be stored", w->bucket);
    if (!rc)
        w->bucket_id = atoll(store_cell(&rows, 0, 0));
    return rc;
}

static int conflict(const struct member *m, struct purser_error *err)
{
    return purser_error_set(err, PURSER_EEXISTS,
                            "Document [%s, %s] %s already exists in bucket: %s.", m->schema,
                            m->layer, m->name, m->bucket);
}

/* 1 when the stored encrypted content of m equals d (metadata and opened data). */
static int same_secret(struct write *w, const struct member *m, const struct document *d, int *same,
                       struct purser_error *err)
{
    struct store_value p[] = {STORE_INT(m->content_id)};
    struct store_rows rows;
    json_t *data = NULL;
    char *a = NULL, *b = NULL;
    int rc = docstore_query(
        w->ctx, &rows, "SELECT metadata, data, key_id FROM doc_contents WHERE id = ?", p, 1, err);
    *same = 0;
    if (!rc && rows.count > 0)
        rc = docstore_open_data(w->ctx, m->schema, m->layer, m->name, atoi(store_cell(&rows, 0, 2)),
                                store_cell(&rows, 0, 1), rows.lengths[1], &data, err);
    if (!rc && rows.count > 0) { /* (no row: not the same) */
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
    }
    return rc;
}

/* The first two LayeringPolicy documents of the new revision (Deckhand allows one). */
static void note_layering(struct write *w, const char *schema, const char *layer, const char *name)
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
int docstore_plan_documents(struct write *w, struct item *const *items, size_t from, size_t to,
                            struct entry *entries, size_t *entry_count, struct purser_error *err)
{
    int *changed = &w->changed, rc = 0;
    for (size_t i = from; i < to; i++) {
        const struct item *it = docstore_feed_item(items, i);
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
        *e = (struct entry){
            .doc = d, .item = it, .bucket_id = w->bucket_id, .since = w->revision, .is_new = 1};
        w->any_payload = 1;
        note_layering(w, d->schema, d->layer, d->name);
        if (!(m = docstore_find_member(w, d->schema, d->layer, d->name))) {
            *changed = 1;
            continue;
        }
        if (m->bucket_id != w->bucket_id)
            return conflict(m, err);
        ((struct member *)m)->drop = 1;
        same = !d->encrypted && !m->encrypted && memcmp(m->sha, d->content_sha256, 32) == 0;
        if (d->encrypted && m->encrypted)
            rc = same_secret(w, m, d, &same, err);
        if (rc)
            break;
        if (same) {
            ((struct member *)m)->kept = 1;
            e->member = m;
            e->content_id = m->content_id;
            e->since = m->since;
            e->is_new = 0;
            e->goes_on = 1;
        } else {
            e->replaced = (struct member *)m; /* (the payload names it once: final) */
            *changed = 1;
        }
    }
    return rc;
}

/* Rows of the previous revision that stay: w->changed when any is dropped. */
void docstore_plan_carried(struct write *w, struct entry *entries, size_t *entry_count)
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
                                                   .since = m->since,
                                                   .goes_on = 1};
        note_layering(w, m->schema, m->layer, m->name);
    }
}

/* Deckhand allows one LayeringPolicy: 409 when the new revision would hold two. */
int docstore_check_singleton(const struct write *w, struct purser_error *err)
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
