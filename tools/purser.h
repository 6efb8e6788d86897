/* purser.h: what the purser command's files share (tools/purser*.c): the commands main runs
 * and the helpers they use. Each command takes its arguments with argv[0] its name and
 * returns the exit status. */
#ifndef PURSER_TOOLS_PURSER_H
#define PURSER_TOOLS_PURSER_H
#include "base/err.h"
#include "config/config.h"
#include "store/store.h"

/* A connected store for cfg, or -1 after saying why on stderr. */
int open_store(struct store **store, const struct purser_config *cfg);
/* Says err on stderr; returns 1. */
int fail(struct purser_error *err);

/* tools/purser_backup.c: purser backup -o FILE [--keyring FILE]; purser restore FILE
 * [--keyring FILE] [--replace]. */
int cmd_backup(const struct purser_config *cfg, int argc, char **argv);
int cmd_restore(const struct purser_config *cfg, int argc, char **argv);
/* tools/purser_git.c: purser git-sync [ORG], git-rebuild ORG. */
int cmd_git(const struct purser_config *cfg, int argc, char **argv);
/* tools/purser_keys.c: the keyring of the secrets (init-keyring, add-key, remove-key ID,
 * rotate-keys [--batch N]). */
int cmd_init_keyring(const struct purser_config *cfg, int argc, char **argv);
int cmd_add_key(const struct purser_config *cfg, int argc, char **argv);
int cmd_remove_key(const struct purser_config *cfg, int argc, char **argv);
int cmd_rotate_keys(const struct purser_config *cfg, int argc, char **argv);
#endif
