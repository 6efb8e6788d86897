/* git_private.h: the git repositories' internals, shared by git_common.c (which defines them),
 * git_history.c and git_catalog.c. */
#ifndef PURSER_GIT_PRIVATE_H
#define PURSER_GIT_PRIVATE_H

#include "git/gitrepo.h"

#include <git2.h>

/* The branch every repository's history is on. */
#define GIT_BRANCH "refs/heads/main"

/* An open repository and its writers' lock (held while open). */
struct git_repo_handle {
    git_repository *repo;
    int lock_fd;
};

/* Where a branch is: its commit, and the revision (0: none) and creation time it records
 * (its trailers Purser-Revision and Purser-Created). */
struct position {
    git_oid commit;
    int has_commit;
    long long revision;
    char created[40];
};

/* The position the branch (or reference) ref records; none when it does not exist. */
int git_read_position(git_repository *repo, const char *ref, struct position *out,
                      struct purser_error *err);

/* Writes the commit of tree_id on at (its parent, when at has a commit), authored by
 * author_name at when (the committer: purser, at the same time), and moves at to it. */
int git_write_commit(git_repository *repo, struct position *at, const git_oid *tree_id,
                     const char *author_name, long long when, const char *message,
                     struct purser_error *err);

/* The path of a document under prefix: <layer>/<schema>/<name>.yaml, or .encrypted for a
 * marker, without <layer>/ when it has none (arena memory; NULL when out of memory). */
char *git_document_path(struct arena *arena, const char *prefix, const char *layer,
                        const char *schema, const char *name, int encrypted);

/* The text of the marker that stands for an encrypted document. */
#define GIT_MARKER_TEXT                                                                            \
    "This document is encrypted (metadata.storagePolicy: encrypted).\n"                            \
    "Its content is never written to a repository; read it through the API.\n"

/* Opens the bare repository at path, creating it (and its folders) when it is missing, and
 * takes its lock (waiting for another writer). owner says whose it is ("organization 12",
 * "organization 12 cluster 40"): a repository another owner left under that name (one deleted,
 * and another made with its name) is emptied first. Release with git_close. */
int git_open(struct git_repo_handle *out, const char *path, const char *owner,
             struct purser_error *err);
void git_close(struct git_repo_handle *h);

/* PURSER_EINTERNAL "what: <libgit2's last error>". */
int git_fail(struct purser_error *err, const char *what);

/* The value of the trailer "key: value" of message into out (size bytes): -1 when absent. */
int git_trailer(const char *message, const char *key, char *out, size_t size);

/* A signature named and mailed who (the characters a signature cannot hold replaced), at when
 * (seconds since the epoch, UTC). libgit2's result. */
int git_signature_of(git_signature **out, const char *who, long long when);

/* A blob of data: its id in *out, written only when the repository does not hold it yet
 * (libgit2's blob creation writes a temporary file for every blob, even one it has; a catalog
 * of thousands of documents would create and remove thousands of files each revision).
 * libgit2's result. */
int git_write_blob(git_repository *repo, const void *data, size_t len, git_oid *out);

/* Points reference name at id (created or moved). */
int git_update_ref(git_repository *repo, const char *name, const git_oid *id,
                   struct purser_error *err);

/* Packs the repository's objects (git_pack.c) when it has many loose ones: one pack of what
 * its references reach, the packs and loose objects it makes redundant removed. */
int git_pack_when_many(git_repository *repo, struct purser_error *err);

/* The same, whatever the count: afterwards the repository holds only what its references
 * reach (nothing of a rewritten history stays on disk). */
int git_pack_all(git_repository *repo, struct purser_error *err);

/* The catalog's tree for revision id (git_catalog.c): *out; PURSER_EINVAL, PURSER_EEXISTS
 * (Deckhand's 409) or PURSER_ETOOLARGE when the revision does not render, PURSER_ENOTFOUND
 * when it is gone. */
int git_catalog_tree(const struct docstore_ctx *docs, git_repository *repo, long long id,
                     const struct gitrepo_selector *sel, git_oid *out, struct purser_error *err);

/* Writes the catalog at repo_path again, history too, when it was written before documents'
 * secrets were decided by the render's marks (git_rewrite.c; a catalog records its format
 * beside its files): each commit from its revision rendered now, then only what the new
 * branch reaches kept on disk; *at becomes the new branch's position. Nothing when the
 * catalog is of the current format. */
int git_catalog_rewrite(const struct docstore_ctx *docs, git_repository *repo,
                        const char *repo_path, const struct gitrepo_selector *sel,
                        struct position *at, struct purser_error *err);

/* Sets the tags (refs/tags/) to the organization's Deckhand tags (git_tags.c): each at the commit
 * of its revision on the branch at at, those the database no longer has deleted. */
int git_history_tags(const struct gitrepo_ctx *ctx, git_repository *repo, struct arena *arena,
                     const struct position *at, struct purser_error *err);

#endif
