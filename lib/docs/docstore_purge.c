/* docstore_purge.c: purging an organization's documents, and rolling back to a revision (a new
 * revision holding the old one's documents). */
#include "docs/docstore_private.h"
#include "store/events.h"

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
    int rc = 0;
    (void)store;
    for (size_t i = 0; !rc && i < sizeof(statements) / sizeof(statements[0]); i++) {
        struct store_rows rows;
        rc = i == 1 ? docstore_query(ctx, &rows, statements[i], p, 1, err)
                    : docstore_exec(ctx, statements[i], p, 1, NULL, err);
    }
    if (!rc)
        rc = event_append(ctx->store, ctx->principal, ctx->org_id, "document_revision", "*",
                          "delete", NULL, NULL, err);
    return rc;
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
        const struct member *now =
            docstore_find_member(w, target[i].schema, target[i].layer, target[i].name);
        if (target[i].encrypted && (!now || now->content_id != target[i].content_id))
            return docstore_encrypted_check(w->ctx, "rolling back", target[i].schema,
                                            target[i].layer, target[i].name, err);
    }
    for (size_t j = 0; j < w->member_count; j++) {
        const struct member *m = &w->members[j];
        int kept = 0;
        if (!m->encrypted)
            continue;
        for (size_t i = 0; i < n && !kept; i++)
            kept = target[i].content_id == m->content_id;
        if (!kept)
            return docstore_encrypted_check(w->ctx, "removing, by a rollback,", m->schema, m->layer,
                                            m->name, err);
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
    rc = docstore_lock_head(w, err);
    if (!rc)
        rc = docstore_load_previous(w, err);
    if (!rc && r->target)
        rc = docstore_revision_check(w->ctx, r->target, err);
    if (!rc)
        rc = docstore_members(w->ctx, r->target, &target, &n, err);
    if (!rc && !(entries = arena_calloc(w->ctx->arena, n ? n : 1, sizeof(*entries))))
        rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    if (!rc) {
        for (size_t j = 0; j < w->member_count; j++)
            w->members[j].drop = 1; /* closed unless a row of the target goes on */
        for (size_t i = 0; i < n; i++) {
            struct member *now = (struct member *)docstore_find_member(
                w, target[i].schema, target[i].layer, target[i].name);
            int same = now && now->content_id == target[i].content_id;
            entries[i] = (struct entry){.member = &target[i],
                                        .content_id = target[i].content_id,
                                        .bucket_id = target[i].bucket_id,
                                        .since = same ? now->since : w->revision,
                                        .goes_on = same && now->bucket_id == target[i].bucket_id};
            if (entries[i].goes_on)
                now->kept = 1;
        }
        rc = rollback_encrypted_check(w, target, n, err);
    }
    if (!rc) {
        w->any_payload = 0;
        if (!(rc = docstore_written(w, docstore_insert_revision(w, err), err)) &&
            !(rc = docstore_close_members(w, err)))
            rc = docstore_written(w, docstore_write_members(w, entries, n, err), err);
        if (!rc)
            rc = docstore_written(w, docstore_finish_revision(w, entries, n, err), err);
        if (!rc) /* checked again: a LayeringPolicy of an earlier revision may apply now */
            rc = docstore_written(w, docstore_record_checks(w, NULL, 0, entries, n, err), err);
    }
    return rc;
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
    if (!rc)
        rc = docstore_revision(ctx, r.w.revision, out, err);
    return rc;
}
