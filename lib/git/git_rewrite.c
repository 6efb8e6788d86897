/* git_rewrite.c: a catalog written before each document's secrets were decided by the render's
 * marks may hold, in clear, a value that reached a document from an encrypted one second hand
 * (through another document's substitution, or layered from an encrypted parent). Such a
 * catalog is written again, history too: each of its commits from its revision rendered now
 * (same author, time and message), then the repository repacked with only what the new branch
 * reaches, so that no object of the old commits stays on disk. */
#include "git/git_private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The catalog's format, beside the repository's files: FORMAT once every commit's files were
 * written with the render's marks. A catalog without it is rewritten. */
#define FORMAT_FILE "purser-format"
#define FORMAT "marks 1"

static int format_current(const char *repo_path)
{
    char path[4200], line[64] = "";
    FILE *f;
    snprintf(path, sizeof(path), "%.4096s/" FORMAT_FILE, repo_path);
    if (!(f = fopen(path, "r")))
        return 0;
    if (!fgets(line, sizeof(line), f))
        line[0] = '\0';
    fclose(f);
    line[strcspn(line, "\n")] = '\0';
    return strcmp(line, FORMAT) == 0;
}

static int record_format(const char *repo_path, struct purser_error *err)
{
    char path[4200], tmp[4300];
    FILE *f;
    int bad;
    snprintf(path, sizeof(path), "%.4096s/" FORMAT_FILE, repo_path);
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    if (!(f = fopen(tmp, "w")))
        return purser_error_set(err, PURSER_EINTERNAL, "cannot write %s", tmp);
    bad = fputs(FORMAT "\n", f) < 0;
    if (fclose(f) || bad || rename(tmp, path)) {
        remove(tmp);
        return purser_error_set(err, PURSER_EINTERNAL, "cannot write %s", path);
    }
    return 0;
}

/* One commit of the old branch: its revision, author, time and message (arena memory). */
struct old_commit {
    long long revision;
    const char *author, *message;
    long long when;
};

/* The branch's commits from at, oldest first, into *out (arena memory). */
static int old_history(git_repository *repo, struct arena *arena, const struct position *at,
                       struct old_commit **out, size_t *count, struct purser_error *err)
{
    git_revwalk *walk = NULL;
    git_oid id;
    size_t cap = 64;
    int rc = 0;
    *count = 0;
    *out = arena_alloc(arena, cap * sizeof(**out));
    if (!*out)
        return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    if (git_revwalk_new(&walk, repo) < 0 || git_revwalk_push(walk, &at->commit) < 0)
        rc = git_fail(err, "the catalog's history");
    if (!rc) {
        git_revwalk_sorting(walk, GIT_SORT_TOPOLOGICAL | GIT_SORT_REVERSE);
        git_revwalk_simplify_first_parent(walk);
    }
    while (!rc && git_revwalk_next(&id, walk) == 0) {
        git_commit *c = NULL;
        char revision[32];
        struct old_commit *o;
        if (git_commit_lookup(&c, repo, &id) < 0) {
            rc = git_fail(err, "a commit of the catalog");
            break;
        }
        if (*count == cap) {
            struct old_commit *more = arena_alloc(arena, 2 * cap * sizeof(*more));
            if (!more)
                rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
            else
                memcpy(more, *out, cap * sizeof(*more));
            *out = more;
            cap *= 2;
        }
        o = rc ? NULL : &(*out)[(*count)++];
        if (o) {
            o->revision = git_trailer(git_commit_message(c), "Purser-Revision", revision,
                                      sizeof(revision)) < 0
                              ? 0
                              : atoll(revision);
            o->author = arena_strdup(arena, git_commit_author(c)->name);
            o->message = arena_strdup(arena, git_commit_message(c));
            o->when = (long long)git_commit_time(c);
            if (!o->author || !o->message)
                rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
        }
        git_commit_free(c);
    }
    git_revwalk_free(walk);
    return rc;
}

/* The new branch: each old commit's revision rendered as the catalog renders now, a commit
 * where the tree changes; a revision that is gone (purged) or no longer renders has none. */
static int write_again(const struct docstore_ctx *docs, git_repository *repo,
                       const struct gitrepo_selector *sel, const struct old_commit *old,
                       size_t count, struct position *fresh, struct purser_error *err)
{
    git_oid tree, before;
    int rc = 0, have_tree = 0;
    *fresh = (struct position){0};
    for (size_t i = 0; !rc && i < count; i++) {
        rc = old[i].revision > 0 ? git_catalog_tree(docs, repo, old[i].revision, sel, &tree, err)
                                 : PURSER_ENOTFOUND;
        if (rc == PURSER_EINVAL || rc == PURSER_ENOTFOUND || rc == PURSER_EEXISTS ||
            rc == PURSER_ETOOLARGE) {
            rc = 0;
            continue;
        }
        if (rc || (have_tree && git_oid_equal(&tree, &before)))
            continue;
        rc = git_write_commit(repo, fresh, &tree, old[i].author, old[i].when, old[i].message, err);
        before = tree;
        have_tree = 1;
    }
    return rc;
}

int git_catalog_rewrite(const struct docstore_ctx *docs, git_repository *repo,
                        const char *repo_path, const struct gitrepo_selector *sel,
                        struct position *at, struct purser_error *err)
{
    struct old_commit *old = NULL;
    struct position fresh;
    git_reference *ref = NULL;
    size_t count = 0;
    int rc = 0;
    if (format_current(repo_path))
        return 0;
    if (at->has_commit)
        rc = old_history(repo, docs->arena, at, &old, &count, err);
    if (!rc && at->has_commit)
        rc = write_again(docs, repo, sel, old, count, &fresh, err);
    if (!rc && at->has_commit && fresh.has_commit)
        rc = git_update_ref(repo, GIT_BRANCH, &fresh.commit, err);
    else if (!rc && at->has_commit && git_reference_lookup(&ref, repo, GIT_BRANCH) == 0 &&
             git_reference_delete(ref) < 0)
        rc = git_fail(err, "the catalog's branch");
    git_reference_free(ref);
    if (!rc && at->has_commit)
        rc = git_pack_all(repo, err);
    if (!rc && at->has_commit)
        rc = git_read_position(repo, GIT_BRANCH, at, err);
    if (!rc)
        rc = record_format(repo_path, err);
    return rc;
}
