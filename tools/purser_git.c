/* purser_git.c: the purser command's git-sync and git-rebuild (lib/git): an organization's
 * history repository caught up with the database, or written again from it. */
#include "auth/identity.h"
#include "config/config.h"
#include "git/gitrepo.h"

#include "purser.h"

#include <mysql.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

int cmd_git(const struct purser_config *cfg, int argc, char **argv)
{
    int rebuild = strcmp(argv[0], "git-rebuild") == 0;
    struct store *store = NULL;
    struct arena *arena = NULL;
    struct purser_error err;
    struct gitrepo_ctx ctx = {.root = cfg->git_root};
    struct gitrepo_sync done;
    struct timespec t0, t1;
    int rc;

    if (argc != 2) {
        fprintf(stderr, "usage: purser %s ORG\n", argv[0]);
        return 2;
    }
    ctx.org = argv[1];
    if (mysql_library_init(0, NULL, NULL) || store_new(&store, cfg, &err) || !(arena = arena_new()))
        rc = purser_error_set(&err, PURSER_EINTERNAL, "cannot set up the database client");
    else
        rc = store_connect(store, &err);
    if (!rc)
        rc = identity_org_id(store, arena, ctx.org, &ctx.org_id, &err);
    ctx.store = store;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (!rc)
        rc = gitrepo_history_sync(&ctx, rebuild, &done, &err);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (!rc)
        printf("%s: %s at revision %lld (%s), %ld commits written in %.3f s\n",
               gitrepo_history_path(arena, ctx.root, ctx.org), rebuild ? "rebuilt" : "caught up",
               done.revision, done.head[0] ? done.head : "no commit", done.commits,
               (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
    else
        fprintf(stderr, "purser: %s\n", err.message);
    store_free(store);
    arena_free(arena);
    return rc ? 1 : 0;
}
