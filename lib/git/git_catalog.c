/* git_catalog.c: a cluster's catalog: the rendered documents its selector picks, a commit for
 * each revision that changes what they render to. */
#include "git/git_private.h"

#include "base/hash.h"
#include "base/metrics.h"
#include "codec/yaml_codec.h"
#include "docs/document.h"
#include "inventory/cluster.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The catalog's own record of the last revision it rendered (a commit or not), beside the
 * repository's files: "<revision> <created>". Lost, the catalog renders again from its
 * branch's revision, which gives the same commits. */
#define CHECKED_FILE "purser-checked"

/* Revisions a fetch renders one by one at most (each a whole rendering of the site). */
#define CATALOG_RENDERS 20

char *gitrepo_catalog_path(struct arena *arena, const char *root, const char *org,
                           const char *cluster)
{
    return arena_sprintf(arena, "%s/%s/catalogs/%s.git", root, org, cluster);
}

int gitrepo_selector_of(const json_t *git_repo, struct arena *arena, struct gitrepo_selector *out,
                        struct purser_error *err)
{
    const json_t *select = json_object_get(git_repo, "select"), *v;
    const json_t *buckets = json_object_get(select, "buckets");
    const json_t *labels = json_object_get(select, "labels");
    const char *key;
    size_t i;
    int rc;
    *out = (struct gitrepo_selector){0};
    if (!select)
        return 0;
    rc = cluster_git_select_check(select, err); /* as a cluster's write checked it */
    if (!rc) {
        out->buckets = arena_calloc(arena, json_array_size(buckets) + 1, sizeof(char *));
        out->labels = arena_calloc(arena, json_object_size(labels) + 1, sizeof(char *));
        if (!out->buckets || !out->labels)
            rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    }
    if (!rc) {
        json_array_foreach (buckets, i, v)
            out->buckets[out->bucket_count++] = json_string_value(v);
        json_object_foreach ((json_t *)labels, key, v)
            out->labels[out->label_count++] =
                arena_sprintf(arena, "%s=%s", key, json_string_value(v));
    }
    return rc;
}

/* 1 when data is a Kubernetes object: apiVersion, kind and metadata.name. */
static int kubernetes_object(const json_t *data)
{
    return json_is_string(json_object_get(data, "apiVersion")) &&
           json_is_string(json_object_get(data, "kind")) &&
           json_is_string(json_object_get(json_object_get(data, "metadata"), "name"));
}

/* The revision rendered, as JSON (*out), and which of its documents hold a secret (*secrets:
 * booleans, from the same rendering: docstore_rendered_marked). PURSER_EINVAL when it does not
 * render (its validation failed). */
static int rendered(const struct docstore_ctx *docs, long long id,
                    const struct gitrepo_selector *sel, json_t **out, json_t **secrets,
                    struct purser_error *err)
{
    struct docstore_filter f = {.schemas = NULL,
                                .buckets = sel->buckets,
                                .bucket_count = sel->bucket_count,
                                .labels = sel->labels,
                                .label_count = sel->label_count,
                                .abstract = -1,
                                .limit = -1};
    struct buf text = BUF_INIT;
    int rc = docstore_rendered_marked(docs, id, &f, &text, secrets, err);
    *out = NULL;
    if (!rc) {
        struct yaml_limits limits = yaml_limits_documents;
        limits.max_bytes = text.len + 1;
        limits.max_nodes = limits.max_alias_nodes = (size_t)-1 / 4;
        rc = yaml_codec_parse(out, text.data ? text.data : "", text.len, &limits, err);
    }
    buf_release(&text);
    return rc;
}

/* A blob of text into updates[*n] at path. */
static int add_blob(git_repository *repo, git_tree_update *updates, size_t *n, const char *path,
                    const char *text, size_t len, struct purser_error *err)
{
    git_tree_update *u = &updates[(*n)++];
    *u = (git_tree_update){
        .action = GIT_TREE_UPDATE_UPSERT, .filemode = GIT_FILEMODE_BLOB, .path = path};
    return git_write_blob(repo, text, len, &u->id) < 0 ? git_fail(err, path) : 0;
}

/* The files of one rendered document: documents/<path>.yaml, or only its marker when it holds
 * a secret (secret: it is encrypted, or a value of it came from an encrypted document through
 * substitution or layering, as the render marked it), and manifests/<path>.yaml, its data,
 * when the data is a Kubernetes object. */
static int document_files(git_repository *repo, struct arena *arena, const json_t *clear,
                          int secret, git_tree_update *updates, size_t *n, struct purser_error *err)
{
    const json_t *meta = json_object_get(clear, "metadata");
    const char *schema = json_string_value(json_object_get(clear, "schema"));
    const char *name = json_string_value(json_object_get(meta, "name"));
    const char *layer =
        json_string_value(json_object_get(json_object_get(meta, "layeringDefinition"), "layer"));
    const char *policy = json_string_value(json_object_get(meta, "storagePolicy"));
    struct buf text = BUF_INIT;
    char *path;
    int rc;
    if (!schema || !name)
        return purser_error_set(err, PURSER_EINTERNAL, "a rendered document without a name");
    secret |= policy && strcmp(policy, "encrypted") == 0;
    path = git_document_path(arena, "documents", layer ? layer : "", schema, name, secret);
    if (!path)
        return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    if (secret)
        return add_blob(repo, updates, n, path, GIT_MARKER_TEXT, strlen(GIT_MARKER_TEXT), err);
    rc = document_yaml(&text, schema, meta, json_object_get(clear, "data"), err);
    if (!rc)
        rc = add_blob(repo, updates, n, path, text.data, text.len, err);
    if (!rc && kubernetes_object(json_object_get(clear, "data"))) {
        json_t *one = json_pack("[O]", json_object_get(clear, "data"));
        buf_reset(&text);
        path = git_document_path(arena, "manifests", layer ? layer : "", schema, name, 0);
        rc = one && path ? yaml_codec_emit(&text, one, err)
                         : purser_error_set(err, PURSER_EINTERNAL, "out of memory");
        if (!rc)
            rc = add_blob(repo, updates, n, path, text.data, text.len, err);
        json_decref(one);
    }
    buf_release(&text);
    return rc;
}

static int update_order(const void *a, const void *b)
{
    return strcmp(((const git_tree_update *)a)->path, ((const git_tree_update *)b)->path);
}

int git_catalog_tree(const struct docstore_ctx *docs, git_repository *repo, long long id,
                     const struct gitrepo_selector *sel, git_oid *out, struct purser_error *err)
{
    json_t *clear = NULL, *secrets = NULL;
    git_tree_update *updates = NULL;
    git_treebuilder *empty = NULL;
    git_tree *base = NULL;
    git_oid empty_id;
    size_t n = 0;
    int rc = rendered(docs, id, sel, &clear, &secrets, err);
    if (!rc && json_array_size(clear) != json_array_size(secrets))
        rc = purser_error_set(err, PURSER_EINTERNAL, "the renderings differ");
    if (!rc && !(updates = calloc(2 * json_array_size(clear) + 1, sizeof(*updates))))
        rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    for (size_t i = 0; !rc && i < json_array_size(clear); i++)
        rc = document_files(repo, docs->arena, json_array_get(clear, i),
                            json_is_true(json_array_get(secrets, i)), updates, &n, err);
    if (!rc) {
        size_t kept = 0;
        qsort(updates, n, sizeof(*updates), update_order);
        for (size_t i = 0; i < n; i++) /* (the same path twice: concrete documents alike) */
            if (!kept || strcmp(updates[kept - 1].path, updates[i].path))
                updates[kept++] = updates[i];
        n = kept;
    }
    if (!rc && (git_treebuilder_new(&empty, repo, NULL) < 0 ||
                git_treebuilder_write(&empty_id, empty) < 0 ||
                git_tree_lookup(&base, repo, &empty_id) < 0 ||
                git_tree_create_updated(out, repo, base, n, updates) < 0))
        rc = git_fail(err, "a catalog's tree");
    free(updates);
    git_tree_free(base);
    git_treebuilder_free(empty);
    json_decref(clear);
    json_decref(secrets);
    return rc;
}

/* The tree of the branch's commit (the empty tree's id when there is none). */
static int head_tree(git_repository *repo, const struct position *at, git_oid *out)
{
    git_commit *commit = NULL;
    int rc;
    if (!at->has_commit)
        return git_oid_fromstr(out, "4b825dc642cb6eb9a060e54bf8d69288fbee4904");
    rc = git_commit_lookup(&commit, repo, &at->commit);
    if (!rc)
        git_oid_cpy(out, git_commit_tree_id(commit));
    git_commit_free(commit);
    return rc;
}

/* What the catalog last rendered: a revision, its creation time and the selector's hash. */
struct checked {
    long long revision;
    char created[40];
    char selector[17];
};

/* The selector's hash, 16 hex digits: a changed selector renders the latest revision again. */
static void selector_hash(const struct gitrepo_selector *sel, char out[17])
{
    uint64_t h = hash_fnv1a("select", 6);
    for (size_t i = 0; i < sel->bucket_count; i++)
        h = (h ^ hash_fnv1a(sel->buckets[i], strlen(sel->buckets[i]) + 1)) * 1099511628211ULL;
    h = (h ^ 0xff) * 1099511628211ULL; /* (between the buckets and the labels) */
    for (size_t i = 0; i < sel->label_count; i++)
        h = (h ^ hash_fnv1a(sel->labels[i], strlen(sel->labels[i]) + 1)) * 1099511628211ULL;
    snprintf(out, 17, "%016llx", (unsigned long long)h);
}

/* The checked file's record when it is there, else the branch's (no selector). */
static void last_checked(const char *repo_path, const struct position *at, struct checked *out)
{
    char path[4096];
    FILE *f;
    *out = (struct checked){.revision = at->revision};
    snprintf(out->created, sizeof(out->created), "%s", at->created);
    snprintf(path, sizeof(path), "%.4000s/" CHECKED_FILE, repo_path);
    if ((f = fopen(path, "r"))) {
        struct checked read = {0};
        if (fscanf(f, "%lld %39s %16s", &read.revision, read.created, read.selector) == 3)
            *out = read;
        fclose(f);
    }
}

static void record_checked(const char *repo_path, const struct checked *c)
{
    char path[4096], tmp[4200];
    FILE *f;
    snprintf(path, sizeof(path), "%.4000s/" CHECKED_FILE, repo_path);
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    if ((f = fopen(tmp, "w"))) {
        int bad = fprintf(f, "%lld %s %s\n", c->revision, c->created, c->selector) < 0;
        if (fclose(f) || bad || rename(tmp, path))
            remove(tmp);
    }
}

/* The revisions to render: those after the last checked while that one is still the
 * database's and they are at most CATALOG_RENDERS, else the latest alone (a new catalog, a
 * purge, or a catalog no one fetched for long: one commit then stands for them all); the
 * latest again when none is newer but the selector changed, and none when neither did. */
static int revisions_to_render(const struct docstore_ctx *docs, const char *repo_path,
                               const struct position *at, const char *selector,
                               struct store_rows *out, struct purser_error *err)
{
    struct checked c;
    long long from;
    struct store_rows rows;
    struct store_value p[2] = {STORE_INT(docs->org_id), STORE_INT(0)};
    int rc, same;
    last_checked(repo_path, at, &c);
    p[1] = STORE_INT(c.revision);
    rc = store_query(docs->store, docs->arena, &rows,
                     "SELECT (SELECT DATE_FORMAT(created_at, '%Y-%m-%dT%H:%i:%s.%fZ') FROM"
                     " doc_revisions WHERE org_id = ? AND id = ?),"
                     " (SELECT MAX(id) FROM doc_revisions WHERE org_id = ?)",
                     (struct store_value[]){p[0], p[1], p[0]}, 3, err);
    if (!rc) {
        from = !store_cell(&rows, 0, 1) ? 0 : atoll(store_cell(&rows, 0, 1));
        same = c.revision > 0 && store_cell(&rows, 0, 0) &&
               strcmp(store_cell(&rows, 0, 0), c.created) == 0;
        if (same && c.revision == from && strcmp(c.selector, selector) == 0)
            from++; /* (nothing new: nothing to render) */
        else if (same && c.revision < from && from - c.revision <= CATALOG_RENDERS)
            from = c.revision + 1;
        p[1] = STORE_INT(from);
        rc = store_query(docs->store, docs->arena, out,
                         "SELECT id, created_by, UNIX_TIMESTAMP(created_at) DIV 1,"
                         " DATE_FORMAT(created_at, '%Y-%m-%dT%H:%i:%s.%fZ') FROM doc_revisions"
                         " WHERE org_id = ? AND id >= ? ORDER BY id",
                         p, 2, err);
    }
    return rc;
}

/* A revision that failed to render by its own fault (a layering or substitution error: 400; a
 * source or LayeringPolicy missing: 409; past the render's bounds: 413; not the store's or the
 * repository's, which a later fetch may not meet) is skipped: out says so, the metric counts
 * it, and the sync goes on (0). */
static int render_skipped(struct gitrepo_sync *out, long long id, const struct purser_error *err)
{
    out->failed = id;
    snprintf(out->failure, sizeof(out->failure), "%s", err->message);
    metrics_add(METRIC_CATALOG_RENDER_FAILED, 1);
    return 0;
}

int gitrepo_catalog_sync(const struct docstore_ctx *docs, const char *root, const char *org,
                         const char *cluster, long long cluster_id,
                         const struct gitrepo_selector *sel, struct gitrepo_sync *out,
                         struct purser_error *err)
{
    const char *path = gitrepo_catalog_path(docs->arena, root, org, cluster);
    struct git_repo_handle h = {.lock_fd = -1};
    struct position at;
    struct store_rows revs = {0};
    char selector[17];
    int rc = git_open(
        &h, path,
        arena_sprintf(docs->arena, "organization %lld cluster %lld", docs->org_id, cluster_id),
        err);

    *out = (struct gitrepo_sync){0};
    if (!rc)
        rc = git_read_position(h.repo, GIT_BRANCH, &at, err);
    if (!rc) /* (one written before the render's marks decided its secrets: history too) */
        rc = git_catalog_rewrite(docs, h.repo, path, sel, &at, err);
    selector_hash(sel, selector);
    if (!rc)
        rc = revisions_to_render(docs, path, &at, selector, &revs, err);
    for (size_t r = 0; !rc && r < revs.count; r++) {
        long long id = atoll(store_cell(&revs, r, 0));
        git_oid tree, before;
        char message[256];
        rc = git_catalog_tree(docs, h.repo, id, sel, &tree, err);
        /* a revision that does not render (400: invalid; 409: a source or a LayeringPolicy
         * missing; 413: past the bounds) changes nothing: the last good rendering stays */
        if (rc == PURSER_EINVAL || rc == PURSER_EEXISTS || rc == PURSER_ETOOLARGE) {
            rc = render_skipped(out, id, err);
            continue;
        }
        if (!rc) {
            out->rendered = id;
            out->failed = 0;
        }
        if (!rc && head_tree(h.repo, &at, &before) < 0)
            rc = git_fail(err, "the catalog's tree");
        if (rc || git_oid_equal(&tree, &before))
            continue;
        snprintf(message, sizeof(message),
                 "Revision %lld: the catalog's rendering changed\n\nPurser-Revision: %lld\n"
                 "Purser-Created: %s\n",
                 id, id, store_cell(&revs, r, 3));
        rc = git_write_commit(h.repo, &at, &tree, store_cell(&revs, r, 1),
                              atoll(store_cell(&revs, r, 2)), message, err);
        if (!rc) {
            at.revision = id;
            out->commits++;
            rc = git_update_ref(h.repo, GIT_BRANCH, &at.commit, err);
        }
    }
    if (!rc && out->commits) { /* (an optimisation: a failure is tried again at the next) */
        struct purser_error ignored;
        git_pack_when_many(h.repo, &ignored);
    }
    if (!rc && revs.count) {
        struct checked c = {.revision = atoll(store_cell(&revs, revs.count - 1, 0))};
        snprintf(c.created, sizeof(c.created), "%s", store_cell(&revs, revs.count - 1, 3));
        memcpy(c.selector, selector, sizeof(c.selector));
        record_checked(path, &c);
    }
    if (!rc) {
        out->revision = at.revision;
        if (at.has_commit)
            git_oid_tostr(out->head, sizeof(out->head), &at.commit);
    }
    git_close(&h);
    return rc;
}
