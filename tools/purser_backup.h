/* purser_backup.h: the purser command's backup and restore (tools/purser_backup.c). */
#ifndef PURSER_TOOLS_BACKUP_H
#define PURSER_TOOLS_BACKUP_H
#include "config/config.h"

/* purser backup -o FILE [--keyring FILE]: argv[0] is "backup". Returns the exit status. */
int cmd_backup(const struct purser_config *cfg, int argc, char **argv);
/* purser restore FILE [--keyring FILE] [--replace]: argv[0] is "restore". */
int cmd_restore(const struct purser_config *cfg, int argc, char **argv);
#endif
