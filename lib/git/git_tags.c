/* git_tags.c: an organization's Deckhand tags as the tags of its history's repository. */
#include "git/git_private.h"

#include <stdlib.h>
#include <string.h>

/* 1 when commit id records revision and created (its trailers). */
static int commit_is(git_repository *repo, const git_oid *id, long long revision,
                     const char *created)
{
    git_commit *commit = NULL;
    char value[40];
    int same =
        git_commit_lookup(&commit, repo, id) == 0 &&
        git_trailer(git_commit_message(commit), "Purser-Revision", value, sizeof(value)) == 0 &&
        atoll(value) == revision &&
        git_trailer(git_commit_message(commit), "Purser-Created", value, sizeof(value)) == 0 &&
        strcmp(value, created) == 0;
    git_commit_free(commit);
    return same;
}

/* The commits of the branch's revisions since the last purge: commits[r] for revision r
 * (1..top), zero where none. */
static int revision_commits(git_repository *repo, const struct position *at, git_oid *commits,
                            long long top, struct purser_error *err)
{
    git_revwalk *walk = NULL;
    git_oid id;
    int rc = 0;
    if (git_revwalk_new(&walk, repo) < 0 || git_revwalk_push(walk, &at->commit) < 0 ||
        git_revwalk_simplify_first_parent(walk) < 0) {
        git_revwalk_free(walk);
        return git_fail(err, "the history");
    }
    while (!rc && git_revwalk_next(&id, walk) == 0) {
        git_commit *commit = NULL;
        char value[24];
        long long revision = -1;
        if (git_commit_lookup(&commit, repo, &id) < 0) {
            rc = git_fail(err, "a commit");
            break;
        }
        if (git_trailer(git_commit_message(commit), "Purser-Revision", value, sizeof(value)) == 0)
            revision = atoll(value);
        git_commit_free(commit);
        if (revision <= 0) /* the purge the revisions build on, or no revision of purser's */
            break;
        if (revision <= top)
            commits[revision] = id;
    }
    git_revwalk_free(walk);
    return rc;
}

/* Deletes the tags whose names are not in wanted (escaped names, sorted). */
static int delete_others(git_repository *repo, char **wanted, size_t count,
                         struct purser_error *err)
{
    git_reference_iterator *it = NULL;
    git_reference *ref = NULL;
    int rc = 0;
    if (git_reference_iterator_glob_new(&it, repo, "refs/tags/*") < 0)
        return git_fail(err, "refs/tags");
    while (!rc && git_reference_next(&ref, it) == 0) {
        const char *name = git_reference_name(ref);
        int keep = 0;
        for (size_t i = 0; i < count && !keep; i++)
            keep = strcmp(wanted[i], name) == 0;
        if (!keep && git_reference_delete(ref) < 0)
            rc = git_fail(err, name);
        git_reference_free(ref);
    }
    git_reference_iterator_free(it);
    return rc;
}

int git_history_tags(const struct gitrepo_ctx *ctx, git_repository *repo, struct arena *arena,
                     const struct position *at, struct purser_error *err)
{
    struct store_value p[] = {STORE_INT(ctx->org_id)};
    struct store_rows rows;
    git_oid *commits = NULL;
    char **names;
    int rc = store_query(ctx->store, arena, &rows,
                         "SELECT t.tag, t.revision_id,"
                         " DATE_FORMAT(v.created_at, '%Y-%m-%dT%H:%i:%s.%fZ') FROM doc_tags t"
                         " JOIN doc_revisions v ON v.org_id = t.org_id AND v.id = t.revision_id"
                         " WHERE t.org_id = ? ORDER BY t.tag",
                         p, 1, err);
    if (!rc) {
        names = arena_calloc(arena, rows.count + 1, sizeof(*names));
        for (size_t i = 0; names && i < rows.count; i++) {
            struct buf b = BUF_INIT;
            if (!buf_adds(&b, "refs/tags/") && !gitrepo_escape_tag(&b, store_cell(&rows, i, 0)))
                names[i] = arena_strdup(arena, buf_cstr(&b));
            buf_release(&b);
            if (!names[i])
                names = NULL;
        }
        if (!names)
            rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    }
    if (!rc) {
        for (size_t i = 0; !rc && i < rows.count; i++) {
            long long revision = atoll(store_cell(&rows, i, 1));
            git_oid id;
            if (git_reference_name_to_id(&id, repo, names[i]) == 0 &&
                commit_is(repo, &id, revision, store_cell(&rows, i, 2)))
                continue;
            if (!commits && at->has_commit) { /* (walked once, when a tag is to be set) */
                commits = calloc((size_t)at->revision + 1, sizeof(*commits));
                rc = commits ? revision_commits(repo, at, commits, at->revision, err)
                             : purser_error_set(err, PURSER_EINTERNAL, "out of memory");
            }
            if (!rc && commits && revision <= at->revision && !git_oid_is_zero(&commits[revision]))
                rc = git_update_ref(repo, names[i], &commits[revision], err);
        }
        free(commits);
        if (!rc)
            rc = delete_others(repo, names, rows.count, err);
    }
    return rc;
}
