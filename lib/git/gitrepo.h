/* gitrepo.h: an organization's document history as a bare git repository, written from the
 * database with libgit2 (docs/inventory.md, "Git repositories").
 *
 * The repository of organization ORG is <root>/<ORG>.git. Its branch main holds one commit
 * per document revision: authored by the revision's principal at the revision's time, its
 * message naming the buckets changed, its tree one file per document at
 * <bucket>/<layer>/<schema>/<name>.yaml (the YAML as posted; a document without a layer, a
 * control document, at <bucket>/<schema>/<name>.yaml) and, for an encrypted document, only a
 * marker, <name>.encrypted in its place, with a fixed text. Deckhand tags are
 * the tags refs/tags/<tag>. Each commit's trailers record its revision and the revision's
 * creation time, so the repository says how far it is; the database stays the truth: a
 * repository that is lost or behind is caught up or rebuilt from it, and a purge (the revision
 * ids starting again) is a commit with an empty tree, recorded as refs/purser/base, on which
 * the revisions that follow build. The ids are deterministic: the same history gives the same
 * commits (a fixed committer, the revision's time, trees in git's order, no randomness).
 *
 * Writers of one repository are serialized by a lock file beside it (flock). A repository
 * records whose it is (its organization's id, and its cluster's): one that a deleted
 * organization or cluster left under the same name is emptied before it is written again.
 */
#ifndef PURSER_GITREPO_H
#define PURSER_GITREPO_H

#include "base/arena.h"
#include "base/buf.h"
#include "base/err.h"
#include "docs/docstore.h"
#include "store/store.h"

#include <jansson.h>

struct gitrepo_ctx {
    struct store *store;
    const char *root; /* the folder of the repositories (git.root) */
    const char *org;  /* the organization's name */
    long long org_id;
};

/* What a sync did. */
struct gitrepo_sync {
    long long revision; /* the revision the branch is at now (0: none) */
    long commits;       /* commits written by this call */
    char head[41];      /* the branch's commit id (hex), "" when the history is empty */
    /* a catalog's: the newest revision this call rendered (0: none), and the newest that did not
     * render, when no later one did (0: none), with why (render_error's message) */
    long long rendered;
    long long failed;
    char failure[PURSER_ERROR_MESSAGE_SIZE];
};

/* Brings <root>/<org>.git up to the database: creates the repository when it is missing, then
 * writes a commit for each revision past the branch's last (updating the previous tree with
 * the documents that began or ended at that revision, not building it again) and sets the
 * tags to the database's. With rebuild, the branch (and the tags) are written again from the
 * first revision (on refs/purser/base when a purge left one), which gives the same ids when
 * the database holds the same history. PURSER_EUNAVAIL when the store fails, PURSER_EINTERNAL
 * when the repository cannot be written (err names the path or libgit2's message). */
int gitrepo_history_sync(const struct gitrepo_ctx *ctx, int rebuild, struct gitrepo_sync *out,
                         struct purser_error *err);

/* Removes the repositories of organization org (its history and its catalogs), when it is
 * deleted; what cannot be removed stays (a repository is emptied anyway before another owner
 * writes it). */
void gitrepo_forget(const char *root, const char *org);

/* The path of the organization's repository (arena memory): <root>/<org>.git. */
char *gitrepo_history_path(struct arena *arena, const char *root, const char *org);

/* Appends name as one path component that is safe in any checkout: bytes below 0x20, 0x7f,
 * the characters / \ : * ? " < > | % and a leading '.' become %XX (upper-case hex), an empty
 * name "%"; the result is never "." or ".." or ".git" and decodes back to name. -1 when out
 * of memory. */
int gitrepo_escape_component(struct buf *out, const char *name);

/* Appends a Deckhand tag's name as a valid git reference name component (the same %XX for
 * what a reference name cannot hold: control bytes, space ~ ^ : ? * [ \ %, "..", "@{", a
 * leading '.' or '-', a trailing '.' or ".lock"). -1 when out of memory. */
int gitrepo_escape_tag(struct buf *out, const char *name);

/* ---- catalogs: a cluster's rendered documents (git_catalog.c) ----
 *
 * The catalog of cluster C of organization ORG (spec.git_repo.type auto) is
 * <root>/<ORG>/catalogs/<C>.git. Its branch main has a commit for each revision (from the
 * first it rendered) that changes what the cluster's selection renders to, and none for a
 * revision that does not (or that fails to render): documents/<layer>/<schema>/<name>.yaml,
 * each rendered document as the API's rendered-documents sends it (status aside), and
 * manifests/<same path>, the data alone, for a document whose data is a Kubernetes object
 * (apiVersion, kind, metadata.name), for Argo CD and Flux. A rendered document that is
 * encrypted, or into which a secret was substituted, is only its marker. */

/* spec.git_repo.select: {buckets: [names] (any of them; all when absent), labels: {key: value}
 * (all of them)}, AND-ed, over the latest revision's rendered documents. */
struct gitrepo_selector {
    const char **buckets;
    size_t bucket_count;
    const char **labels; /* "key=value" */
    size_t label_count;
};

/* The selector of a cluster's spec.git_repo (NULL or without select: every document), strings
 * borrowed from git_repo or in arena memory. PURSER_EINVAL naming the field. */
int gitrepo_selector_of(const json_t *git_repo, struct arena *arena, struct gitrepo_selector *out,
                        struct purser_error *err);

/* <root>/<org>/catalogs/<cluster>.git (arena memory). */
char *gitrepo_catalog_path(struct arena *arena, const char *root, const char *org,
                           const char *cluster);

/* Brings the catalog of cluster (its row id cluster_id) up to the database, rendering with docs
 * (which must be allowed to read encrypted documents, so that what a secret went into is known and
 * left out; docs->arena holds the answers). out as gitrepo_history_sync's (revision: the branch's).
 * A revision that does not render (400, 409, 413: its documents' fault, which no retry mends) is
 * skipped, the branch staying at the last good rendering, and out->failed says so; a failure of
 * the store or the repository is this call's error and skips nothing.
 */
int gitrepo_catalog_sync(const struct docstore_ctx *docs, const char *root, const char *org,
                         const char *cluster, long long cluster_id,
                         const struct gitrepo_selector *sel, struct gitrepo_sync *out,
                         struct purser_error *err);

/* Shows what a catalog sync (done) found in the cluster's status (status: its status now,
 * borrowed): when a revision did not render, status.catalog = {revision: the branch's, the last
 * good rendering, error: {revision, message}}, written with an event of kind "catalog" once per
 * such revision; when a later revision rendered, the error goes the same way ({revision}).
 * Nothing is written when status.catalog already says so. */
struct resource_scope;
int gitrepo_catalog_report(const struct resource_scope *s, const char *cluster,
                           const json_t *status, const struct gitrepo_sync *done,
                           struct purser_error *err);

#endif
