/* git_common.c: what the repositories share: libgit2's start, opening or creating a bare
 * repository, its writers' lock, escaping names into paths and references, trailers. */
#include "git/git_private.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

static pthread_once_t started = PTHREAD_ONCE_INIT;

/* libgit2's global state, once per process (it lives until exit). The objects read are
 * purser's own, written by it: their hashes are not computed again at each read (a commit
 * reads the trees it updates, the largest a few hundred kilobytes). */
static void start_libgit2(void)
{
    git_libgit2_init();
    git_libgit2_opts(GIT_OPT_ENABLE_STRICT_HASH_VERIFICATION, 0);
}

int git_fail(struct purser_error *err, const char *what)
{
    const git_error *e = git_error_last();
    return purser_error_set(err, PURSER_EINTERNAL, "%s: %s", what,
                            e && e->message ? e->message : "libgit2 failed");
}

/* mkdir -p of path's folders and path itself. */
static int make_folders(const char *path)
{
    char copy[4096];
    size_t len = strlen(path);
    if (len >= sizeof(copy))
        return -1;
    memcpy(copy, path, len + 1);
    for (char *p = copy + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            if (mkdir(copy, 0755) && errno != EEXIST)
                return -1;
            *p = '/';
        }
    return mkdir(copy, 0755) && errno != EEXIST ? -1 : 0;
}

/* A new bare repository: HEAD names main, and git-http-backend refuses pushes to it whoever
 * asks (http.receivepack false), as purser's access check does before it. */
static int create_repository(git_repository **out, const char *path, struct purser_error *err)
{
    git_repository_init_options opts;
    git_config *config = NULL;
    int rc = 0;
    git_repository_init_options_init(&opts, GIT_REPOSITORY_INIT_OPTIONS_VERSION);
    opts.flags = GIT_REPOSITORY_INIT_BARE | GIT_REPOSITORY_INIT_MKPATH;
    opts.initial_head = "main";
    opts.description = "purser: written from the database; read-only";
    if (git_repository_init_ext(out, path, &opts) < 0)
        return git_fail(err, path);
    if (git_repository_config(&config, *out) < 0 ||
        git_config_set_bool(config, "http.receivepack", 0) < 0 ||
        git_config_set_bool(config, "core.logallrefupdates", 0) < 0)
        rc = git_fail(err, path);
    git_config_free(config);
    return rc;
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st;
    (void)type;
    if (ftw->level == 0)
        return 0; /* (the folder itself stays) */
    return remove(path) ? -1 : 0;
}

/* Empties a repository that belonged to another owner (an organization or cluster deleted,
 * and another made with its name): its references, its objects and the catalog's record go,
 * so that nothing of the other's is served or built on. */
static int forget_other_owner(const char *path, struct purser_error *err)
{
    static const char *const parts[] = {"refs", "objects", "packed-refs", "purser-checked"};
    char sub[4096];
    for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
        struct stat st;
        snprintf(sub, sizeof(sub), "%s/%s", path, parts[i]);
        if (lstat(sub, &st) != 0)
            continue;
        if (S_ISDIR(st.st_mode) ? nftw(sub, remove_entry, 16, FTW_DEPTH | FTW_PHYS) != 0
                                : remove(sub) != 0)
            return purser_error_set(err, PURSER_EINTERNAL, "cannot empty %s: %s", sub,
                                    strerror(errno));
    }
    static const char *const folders[] = {"refs/heads", "refs/tags", "objects/info",
                                          "objects/pack"};
    for (size_t i = 0; i < sizeof(folders) / sizeof(folders[0]); i++) {
        snprintf(sub, sizeof(sub), "%s/%s", path, folders[i]);
        mkdir(sub, 0755);
    }
    return 0;
}

/* The repository's owner (config purser.owner) is owner; a repository another owner left
 * is emptied first. */
static int check_owner(struct git_repo_handle *h, const char *path, const char *owner,
                       struct purser_error *err)
{
    git_config *config = NULL;
    git_buf have = {0};
    int rc = 0, same;
    if (git_repository_config(&config, h->repo) < 0)
        return git_fail(err, path);
    same = git_config_get_string_buf(&have, config, "purser.owner") == 0 &&
           strcmp(have.ptr, owner) == 0;
    git_buf_dispose(&have);
    git_config_free(config);
    config = NULL;
    if (same)
        return 0;
    git_repository_free(h->repo);
    h->repo = NULL;
    rc = forget_other_owner(path, err);
    if (!rc && git_repository_open_bare(&h->repo, path) < 0)
        rc = git_fail(err, path);
    if (!rc && (git_repository_config(&config, h->repo) < 0 ||
                git_config_set_string(config, "purser.owner", owner) < 0))
        rc = git_fail(err, path);
    git_config_free(config);
    return rc;
}

int git_open(struct git_repo_handle *out, const char *path, const char *owner,
             struct purser_error *err)
{
    char lock[4096];
    int rc;
    pthread_once(&started, start_libgit2);
    *out = (struct git_repo_handle){.lock_fd = -1};
    rc = git_repository_open_bare(&out->repo, path);
    if (rc == GIT_ENOTFOUND) {
        char *slash = strrchr(path, '/');
        if (slash && slash > path) {
            char parent[4096];
            snprintf(parent, sizeof(parent), "%.*s", (int)(slash - path), path);
            if (make_folders(parent))
                return purser_error_set(err, PURSER_EINTERNAL, "cannot create %s: %s", parent,
                                        strerror(errno));
        }
        rc = create_repository(&out->repo, path, err) ? -1 : 0;
        if (rc)
            return err->code;
    } else if (rc < 0) {
        return git_fail(err, path);
    }
    snprintf(lock, sizeof(lock), "%s/purser.lock", path);
    out->lock_fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (out->lock_fd < 0 || flock(out->lock_fd, LOCK_EX)) {
        rc = purser_error_set(err, PURSER_EINTERNAL, "cannot lock %s: %s", lock, strerror(errno));
        git_close(out);
        return rc;
    }
    if ((rc = check_owner(out, path, owner, err)))
        git_close(out);
    return rc;
}

void git_close(struct git_repo_handle *h)
{
    if (h->lock_fd >= 0)
        close(h->lock_fd); /* (releases the flock) */
    git_repository_free(h->repo);
    *h = (struct git_repo_handle){.lock_fd = -1};
}

char *gitrepo_history_path(struct arena *arena, const char *root, const char *org)
{
    return arena_sprintf(arena, "%s/%s.git", root, org);
}

static int escape_byte(struct buf *out, unsigned char c)
{
    return buf_printf(out, "%%%02X", c);
}

int gitrepo_escape_component(struct buf *out, const char *name)
{
    if (!*name)
        return buf_addc(out, '%');
    for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
        int unsafe = *p < 0x20 || *p == 0x7f || strchr("/\\:*?\"<>|%", *p) ||
                     (p == (const unsigned char *)name && *p == '.');
        if (unsafe ? escape_byte(out, *p) : buf_addc(out, (char)*p))
            return -1;
    }
    return 0;
}

int gitrepo_escape_tag(struct buf *out, const char *name)
{
    size_t len = strlen(name);
    int lock = len >= 5 && strcmp(name + len - 5, ".lock") == 0;
    if (!len)
        return buf_addc(out, '%');
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)name[i];
        int unsafe = c <= 0x20 || c == 0x7f || strchr("~^:?*[\\%", c) ||
                     (i == 0 && (c == '.' || c == '-' || c == '/')) ||
                     (c == '.' && (name[i + 1] == '.' || i + 1 == len || (lock && i == len - 5))) ||
                     (c == '@' && name[i + 1] == '{') || c == '/';
        if (unsafe ? escape_byte(out, c) : buf_addc(out, (char)c))
            return -1;
    }
    return 0;
}

int git_trailer(const char *message, const char *key, char *out, size_t size)
{
    size_t klen = strlen(key);
    for (const char *line = message; line && *line;
         line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        if (strncmp(line, key, klen) == 0 && line[klen] == ':' && line[klen + 1] == ' ') {
            const char *v = line + klen + 2, *end = strchr(v, '\n');
            size_t n = end ? (size_t)(end - v) : strlen(v);
            if (n >= size)
                return -1;
            memcpy(out, v, n);
            out[n] = '\0';
            return 0;
        }
    }
    return -1;
}

int git_signature_of(git_signature **out, const char *who, long long when)
{
    char name[256];
    size_t n = 0;
    for (const char *p = who && *who ? who : "unknown"; *p && n + 1 < sizeof(name); p++)
        name[n++] = (*p == '<' || *p == '>' || *p == '\n' || *p == '\r') ? '_' : *p;
    name[n] = '\0';
    return git_signature_new(out, name, name, (git_time_t)when, 0);
}

int git_update_ref(git_repository *repo, const char *name, const git_oid *id,
                   struct purser_error *err)
{
    git_reference *ref = NULL;
    int rc = git_reference_create(&ref, repo, name, id, 1, NULL);
    git_reference_free(ref);
    return rc < 0 ? git_fail(err, name) : 0;
}

int git_read_position(git_repository *repo, const char *ref, struct position *out,
                      struct purser_error *err)
{
    git_commit *commit = NULL;
    char revision[24];
    int rc = git_reference_name_to_id(&out->commit, repo, ref);
    *out = (struct position){.commit = out->commit};
    if (rc == GIT_ENOTFOUND)
        return 0;
    if (rc < 0 || git_commit_lookup(&commit, repo, &out->commit) < 0)
        return git_fail(err, ref);
    out->has_commit = 1;
    if (git_trailer(git_commit_message(commit), "Purser-Revision", revision, sizeof(revision)) == 0)
        out->revision = atoll(revision);
    if (git_trailer(git_commit_message(commit), "Purser-Created", out->created,
                    sizeof(out->created)))
        out->created[0] = '\0';
    git_commit_free(commit);
    return 0;
}

/* Writes the commit of tree on at (its parent, when it has a commit) and moves at to it. */
int git_write_commit(git_repository *repo, struct position *at, const git_oid *tree_id,
                     const char *author_name, long long when, const char *message,
                     struct purser_error *err)
{
    git_signature *author = NULL, *committer = NULL;
    git_tree *tree = NULL;
    git_commit *parent = NULL;
    const git_commit *parents[1];
    git_oid id;
    int rc = 0;
    if (git_signature_of(&author, author_name, when) < 0 ||
        git_signature_new(&committer, "purser", "purser", (git_time_t)when, 0) < 0 ||
        git_tree_lookup(&tree, repo, tree_id) < 0 ||
        (at->has_commit && git_commit_lookup(&parent, repo, &at->commit) < 0))
        rc = git_fail(err, "a commit's parts");
    parents[0] = parent;
    if (!rc && git_commit_create(&id, repo, NULL, author, committer, NULL, message, tree,
                                 at->has_commit ? 1 : 0, parents) < 0)
        rc = git_fail(err, "a commit");
    if (!rc) {
        at->commit = id;
        at->has_commit = 1;
    }
    git_commit_free(parent);
    git_tree_free(tree);
    git_signature_free(committer);
    git_signature_free(author);
    return rc;
}

char *git_document_path(struct arena *arena, const char *prefix, const char *layer,
                        const char *schema, const char *name, int encrypted)
{
    struct buf b = BUF_INIT;
    char *path = NULL;
    int rc = (*prefix && (gitrepo_escape_component(&b, prefix) || buf_addc(&b, '/'))) ||
             (*layer && (gitrepo_escape_component(&b, layer) || buf_addc(&b, '/')));
    for (const char *s = schema; !rc;) { /* namespace/Kind/vN: a folder each */
        const char *slash = strchr(s, '/');
        char *part = strndup(s, slash ? (size_t)(slash - s) : strlen(s));
        rc = !part;
        if (!rc)
            rc = gitrepo_escape_component(&b, part);
        if (!rc)
            rc = buf_addc(&b, '/');
        free(part);
        if (!slash)
            break;
        s = slash + 1;
    }
    if (!rc && !gitrepo_escape_component(&b, name) &&
        !buf_adds(&b, encrypted ? ".encrypted" : ".yaml"))
        path = arena_strdup(arena, buf_cstr(&b));
    buf_release(&b);
    return path;
}

static int remove_any(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st;
    (void)type;
    (void)ftw;
    return remove(path) ? -1 : 0;
}

void gitrepo_forget(const char *root, const char *org)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s.git", root, org);
    nftw(path, remove_any, 16, FTW_DEPTH | FTW_PHYS);
    snprintf(path, sizeof(path), "%s/%s", root, org);
    nftw(path, remove_any, 16, FTW_DEPTH | FTW_PHYS);
}

int git_write_blob(git_repository *repo, const void *data, size_t len, git_oid *out)
{
    git_odb *odb = NULL;
    int rc = git_odb_hash(out, data, len, GIT_OBJECT_BLOB);
    if (!rc)
        rc = git_repository_odb(&odb, repo);
    if (!rc && !git_odb_exists(odb, out))
        rc = git_odb_write(out, odb, data, len, GIT_OBJECT_BLOB);
    git_odb_free(odb);
    return rc;
}
