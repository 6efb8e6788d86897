/* git_history.c: an organization's document revisions as commits of its repository, each
 * tree the previous one updated with the documents that began or ended at that revision. */
#include "git/git_private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BASE_REF "refs/purser/base"

/* One path of a revision's tree update: a document's file written, or removed. */
struct change {
    char *path;
    int upsert;
    git_oid blob;
};

static int change_order(const void *a, const void *b)
{
    const struct change *x = a, *y = b;
    int c = strcmp(x->path, y->path);
    return c ? c : y->upsert - x->upsert; /* a path written and removed: written first */
}

/* The rows of revision id that began there (with their YAML) or ended there, as changes of
 * the previous tree; *buckets gets the sorted names of the buckets they are in, ", "-joined. */
static int revision_changes(const struct gitrepo_ctx *ctx, git_repository *repo,
                            struct arena *arena, long long id, struct change **out, size_t *count,
                            struct buf *buckets, struct purser_error *err)
{
    struct store_value p[] = {STORE_INT(ctx->org_id), STORE_INT(id), STORE_INT(ctx->org_id),
                              STORE_INT(id)};
    struct store_rows rows;
    struct change *list;
    size_t n = 0;
    int rc = store_query(
        ctx->store, arena, &rows,
        "SELECT * FROM (SELECT 1 AS began, b.name AS bucket, m.layer, m.schema_name, m.name,"
        " m.encrypted, IF(m.encrypted, NULL, c.yaml) AS yaml"
        " FROM doc_revision_documents m JOIN doc_buckets b ON b.id = m.bucket_id"
        " JOIN doc_contents c ON c.id = m.content_id WHERE m.org_id = ? AND m.revision_id = ?"
        " UNION ALL SELECT 0, b.name, m.layer, m.schema_name, m.name, m.encrypted, NULL"
        " FROM doc_revision_documents m JOIN doc_buckets b ON b.id = m.bucket_id"
        " WHERE m.org_id = ? AND m.until_revision = ?) x ORDER BY bucket",
        p, 4, err);
    if (!rc) {
        list = arena_calloc(arena, rows.count + 1, sizeof(*list));
        if (!list)
            rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    }
    if (!rc) {
        for (size_t i = 0; i < rows.count; i++) {
            const char *bucket = store_cell(&rows, i, 1), *text = store_cell(&rows, i, 6);
            int encrypted = atoi(store_cell(&rows, i, 5));
            size_t len = text ? rows.lengths[i * rows.columns + 6] : 0;
            struct change *c = &list[n++];
            if (encrypted) /* only its marker: nothing of its content, not even its metadata */
                text = GIT_MARKER_TEXT, len = strlen(GIT_MARKER_TEXT);
            c->upsert = atoi(store_cell(&rows, i, 0));
            c->path =
                git_document_path(arena, bucket, store_cell(&rows, i, 2), store_cell(&rows, i, 3),
                                  store_cell(&rows, i, 4), encrypted);
            if (!c->path)
                return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
            if (c->upsert && git_write_blob(repo, text ? text : "", len, &c->blob) < 0)
                return git_fail(err, c->path);
            if ((i == 0 || strcmp(bucket, store_cell(&rows, i - 1, 1)) != 0) &&
                ((buckets->len && buf_adds(buckets, ", ")) || buf_adds(buckets, bucket)))
                return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
        }
        qsort(list, n, sizeof(*list), change_order);
        *out = list;
        *count = n;
    }
    return rc;
}

/* The tree of parent (the empty tree when none) with changes applied. */
static int updated_tree(git_repository *repo, const struct position *parent,
                        const struct change *changes, size_t count, git_oid *out,
                        struct purser_error *err)
{
    git_commit *commit = NULL;
    git_tree *base = NULL;
    git_treebuilder *empty = NULL;
    git_tree_update *updates = calloc(count + 1, sizeof(*updates));
    size_t n = 0;
    git_oid empty_id;
    int rc = 0;

    if (!updates)
        return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    for (size_t i = 0; i < count; i++) {
        if (i && strcmp(changes[i].path, changes[i - 1].path) == 0)
            continue; /* (sorted: the write comes before the removal of the same path) */
        updates[n++] = (git_tree_update){.action = changes[i].upsert ? GIT_TREE_UPDATE_UPSERT
                                                                     : GIT_TREE_UPDATE_REMOVE,
                                         .id = changes[i].blob,
                                         .filemode = GIT_FILEMODE_BLOB,
                                         .path = changes[i].path};
    }
    if (parent->has_commit) {
        if (git_commit_lookup(&commit, repo, &parent->commit) < 0 ||
            git_commit_tree(&base, commit) < 0)
            rc = git_fail(err, "the previous commit's tree");
    } else if (git_treebuilder_new(&empty, repo, NULL) < 0 ||
               git_treebuilder_write(&empty_id, empty) < 0 ||
               git_tree_lookup(&base, repo, &empty_id) < 0) {
        rc = git_fail(err, "the empty tree");
    }
    if (!rc && git_tree_create_updated(out, repo, base, n, updates) < 0)
        rc = git_fail(err, "a revision's tree");
    free(updates);
    git_treebuilder_free(empty);
    git_tree_free(base);
    git_commit_free(commit);
    return rc;
}

/* The commit of revision r ({id, created_by, seconds, created}) on at. */
static int commit_revision(const struct gitrepo_ctx *ctx, git_repository *repo, struct position *at,
                           const struct store_rows *revs, size_t r, struct purser_error *err)
{
    struct arena *arena = arena_new();
    struct buf buckets = BUF_INIT, message = BUF_INIT;
    struct change *changes = NULL;
    size_t count = 0;
    long long id = atoll(store_cell(revs, r, 0));
    git_oid tree;
    int rc = arena ? 0 : purser_error_set(err, PURSER_EINTERNAL, "out of memory");

    if (!rc)
        rc = revision_changes(ctx, repo, arena, id, &changes, &count, &buckets, err);
    if (!rc)
        rc = updated_tree(repo, at, changes, count, &tree, err);
    if (!rc &&
        buf_printf(&message, "Revision %lld: %s\n\nPurser-Revision: %lld\nPurser-Created: %s\n", id,
                   buckets.len ? buf_cstr(&buckets) : "no document changed", id,
                   store_cell(revs, r, 3)))
        rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    if (!rc)
        rc = git_write_commit(repo, at, &tree, store_cell(revs, r, 1),
                              atoll(store_cell(revs, r, 2)), buf_cstr(&message), err);
    if (!rc) {
        at->revision = id;
        snprintf(at->created, sizeof(at->created), "%s", store_cell(revs, r, 3));
    }
    buf_release(&buckets);
    buf_release(&message);
    arena_free(arena);
    return rc;
}

/* follow_purge's commit: an empty tree on the branch's last commit, recorded as BASE_REF. */
static int purge_commit(git_repository *repo, struct position *at, struct purser_error *err)
{
    git_treebuilder *empty = NULL;
    git_commit *last = NULL;
    long long when = 0;
    git_oid tree;
    int rc = 0;
    /* at the time of the last revision it follows: two hosts that saw the same history write
     * the same purge commit (the purge's own time is not stored) */
    if (git_treebuilder_new(&empty, repo, NULL) < 0 || git_treebuilder_write(&tree, empty) < 0 ||
        git_commit_lookup(&last, repo, &at->commit) < 0)
        rc = git_fail(err, "the empty tree");
    else
        when = (long long)git_commit_time(last);
    git_treebuilder_free(empty);
    git_commit_free(last);
    if (!rc)
        rc = git_write_commit(
            repo, at, &tree, "purser", when,
            "Purge: every revision deleted; the revisions that follow count from 1 "
            "again\n\nPurser-Revision: 0\n",
            err);
    at->revision = 0;
    at->created[0] = '\0';
    if (!rc)
        rc = git_update_ref(repo, BASE_REF, &at->commit, err);
    return rc;
}

/* When the branch's last revision is not the database's (a purge started the ids again), a
 * commit with an empty tree on it, which refs/purser/base records: the new revisions build on
 * it. */
static int follow_purge(const struct gitrepo_ctx *ctx, git_repository *repo, struct arena *arena,
                        struct position *at, struct purser_error *err)
{
    struct store_value p[] = {STORE_INT(ctx->org_id), STORE_INT(at->revision)};
    struct store_rows rows;
    int rc;
    if (!at->has_commit || at->revision == 0)
        return 0;
    rc = store_query(ctx->store, arena, &rows,
                     "SELECT DATE_FORMAT(created_at, '%Y-%m-%dT%H:%i:%s.%fZ') FROM doc_revisions"
                     " WHERE org_id = ? AND id = ?",
                     p, 2, err);
    if (!rc && (rows.count != 1 || strcmp(store_cell(&rows, 0, 0), at->created) != 0))
        rc = purge_commit(repo, at, err);
    return rc;
}

static int update_branch(git_repository *repo, const struct position *at, struct purser_error *err)
{
    if (at->has_commit)
        return git_update_ref(repo, GIT_BRANCH, &at->commit, err);
    git_reference *ref = NULL;
    int rc = git_reference_lookup(&ref, repo, GIT_BRANCH);
    if (rc == 0 && git_reference_delete(ref) < 0)
        rc = -1;
    git_reference_free(ref);
    return rc < 0 && rc != GIT_ENOTFOUND ? git_fail(err, GIT_BRANCH) : 0;
}

/* Where the writing starts: the branch's position, or for a rebuild (and when the branch
 * cannot be read: a repository damaged is written again, the database being the truth) the
 * purge it builds on, or nothing. */
static int start_position(git_repository *repo, int *rebuild, struct position *at,
                          struct purser_error *err)
{
    if (!*rebuild && git_read_position(repo, GIT_BRANCH, at, err) == 0)
        return 0;
    *rebuild = 1;
    if (git_read_position(repo, BASE_REF, at, err) == 0)
        return 0;
    *at = (struct position){0};
    return 0;
}

int gitrepo_history_sync(const struct gitrepo_ctx *ctx, int rebuild, struct gitrepo_sync *out,
                         struct purser_error *err)
{
    struct git_repo_handle h = {.lock_fd = -1};
    struct arena *arena = arena_new();
    struct position at;
    struct store_rows revs;
    struct store_value p[2];
    int rc = arena ? 0 : purser_error_set(err, PURSER_EINTERNAL, "out of memory");

    *out = (struct gitrepo_sync){0};
    if (!rc)
        rc = git_open(&h, gitrepo_history_path(arena, ctx->root, ctx->org),
                      arena_sprintf(arena, "organization %lld", ctx->org_id), err);
    if (!rc)
        rc = start_position(h.repo, &rebuild, &at, err);
    if (!rc)
        rc = follow_purge(ctx, h.repo, arena, &at, err);
    p[0] = STORE_INT(ctx->org_id);
    p[1] = STORE_INT(at.revision);
    if (!rc)
        rc = store_query(ctx->store, arena, &revs,
                         "SELECT id, created_by, UNIX_TIMESTAMP(created_at) DIV 1,"
                         " DATE_FORMAT(created_at, '%Y-%m-%dT%H:%i:%s.%fZ') FROM doc_revisions"
                         " WHERE org_id = ? AND id > ? ORDER BY id",
                         p, 2, err);
    for (size_t r = 0; !rc && r < revs.count; r++) {
        rc = commit_revision(ctx, h.repo, &at, &revs, r, err);
        out->commits += !rc;
        if (!rc && (r + 1) % 100 == 0) /* (a long catch-up keeps what it wrote) */
            rc = update_branch(h.repo, &at, err);
    }
    if (!rc && (rebuild || out->commits))
        rc = update_branch(h.repo, &at, err);
    if (!rc)
        rc = git_history_tags(ctx, h.repo, arena, &at, err);
    if (!rc && out->commits) { /* (an optimisation: a failure is tried again at the next) */
        struct purser_error ignored;
        git_pack_when_many(h.repo, &ignored);
    }
    if (!rc) {
        out->revision = at.revision;
        if (at.has_commit)
            git_oid_tostr(out->head, sizeof(out->head), &at.commit);
    }
    git_close(&h);
    arena_free(arena);
    return rc;
}
