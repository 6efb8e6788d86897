/* purser_keys.c: the purser command's keyring of the secrets: init-keyring, add-key,
 * remove-key and rotate-keys (lib/auth/keyring; lib/docs for the records it seals). */
#include "purser.h"

#include "auth/keyring.h"
#include "docs/docstore.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *keyring_path(const struct purser_config *cfg)
{
    if (!cfg->keyring_file[0]) {
        fprintf(stderr, "purser: secrets.keyring is not set in the configuration\n");
        return NULL;
    }
    return cfg->keyring_file;
}

int cmd_init_keyring(const struct purser_config *cfg, int argc, char **argv)
{
    struct purser_error err;
    const char *path = keyring_path(cfg);
    if (argc != 1) { /* argv[0] is the command */
        fprintf(stderr, "usage: purser %s\n", argv[0]);
        return 2;
    }
    if (!path)
        return 1;
    if (keyring_create(path, &err))
        return fail(&err);
    printf("created keyring %s with slot 1\n", path);
    return 0;
}

int cmd_add_key(const struct purser_config *cfg, int argc, char **argv)
{
    struct purser_error err;
    const char *path = keyring_path(cfg);
    int id = 0;
    if (argc != 1) { /* argv[0] is the command */
        fprintf(stderr, "usage: purser %s\n", argv[0]);
        return 2;
    }
    if (!path)
        return 1;
    if (keyring_add_slot(path, &id, &err))
        return fail(&err);
    printf("added slot %d to %s: it seals new values once the service reloads (SIGHUP); run "
           "rotate-keys to re-seal older ones\n",
           id, path);
    return 0;
}

int cmd_remove_key(const struct purser_config *cfg, int argc, char **argv)
{
    struct purser_error err;
    const char *path = keyring_path(cfg);
    struct store *store = NULL;
    struct arena *arena;
    long count = 0;
    char *end;
    long id = argc == 2 ? strtol(argv[1], &end, 10) : 0;
    int rc;

    if (argc != 2 || *end || id < 1) {
        fprintf(stderr, "usage: purser remove-key ID\n");
        return 2;
    }
    if (!path || open_store(&store, cfg))
        return 1;
    if (!(arena = arena_new())) {
        store_free(store);
        return 1;
    }
    rc = docstore_count_sealed(store, arena, (int)id, &count, &err);
    if (!rc && count > 0)
        rc = purser_error_set(&err, PURSER_EEXISTS,
                              "slot %ld still seals %ld record(s): run rotate-keys first", id,
                              count);
    if (!rc)
        rc = keyring_remove_slot(path, (int)id, &err);
    arena_free(arena);
    store_free(store);
    if (rc)
        return fail(&err);
    printf("removed slot %ld from %s\n", id, path);
    return 0;
}

int cmd_rotate_keys(const struct purser_config *cfg, int argc, char **argv)
{
    struct purser_error err;
    struct keyring *ring = NULL;
    struct store *store = NULL;
    long batch = 100, total = 0, done = 0, left = 1;
    int rc = 0;

    if (argc == 3 && strcmp(argv[1], "--batch") == 0)
        batch = atol(argv[2]);
    else if (argc != 1)
        batch = 0;
    if (batch < 1 || batch > 100000) {
        fprintf(stderr, "usage: purser rotate-keys [--batch N]   (1 <= N <= 100000)\n");
        return 2;
    }
    if (!keyring_path(cfg))
        return 1;
    if (keyring_load(&ring, cfg->keyring_file, &err))
        return fail(&err);
    if (open_store(&store, cfg)) {
        keyring_free(ring);
        return 1;
    }
    while (!rc && left > 0) {
        struct arena *arena = arena_new();
        if (!arena)
            break;
        rc = docstore_rotate_batch(store, arena, ring, batch, &done, &left, &err);
        arena_free(arena);
        total += done;
        if (!rc)
            printf("re-sealed %ld record(s) under slot %d; %ld left\n", total, keyring_newest(ring),
                   left);
        fflush(stdout);
        if (!rc && done == 0 && left > 0)
            rc = purser_error_set(&err, PURSER_EINTERNAL, "no progress: %ld record(s) left", left);
    }
    store_free(store);
    keyring_free(ring);
    return rc ? fail(&err) : 0;
}
