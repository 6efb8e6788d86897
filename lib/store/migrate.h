/* migrate.h: applying the numbered SQL migrations of sql/ and recording them.
 *
 * Migrations are compiled into the programs (the build embeds sql/NNNN_name.sql in version
 * order), so a binary always knows the schema it needs. Each applied migration is a row of
 * `schema_migrations` (version, name, applied_at). Applying takes a named lock, so two
 * processes migrating at once apply each migration once. A failing migration stops the run
 * with the server's error and is not recorded.
 */
#ifndef PURSER_MIGRATE_H
#define PURSER_MIGRATE_H

#include "store/store.h"

#include <stddef.h>

struct migration {
    int version;
    const char *name; /* file name, e.g. "0001_init.sql" */
    const char *sql;
};

/* The migrations embedded in this build, in version order (generated from sql/). */
extern const struct migration purser_migrations[];
extern const size_t purser_migration_count;

/* The highest version in list (0 for none). */
int migrate_latest(const struct migration *list, size_t count);

/* The highest version recorded in the database (0 when nothing is applied yet). */
int migrate_current(struct store *store, int *version_out, struct purser_error *err);

/* A migration's progress: note is NULL as m starts, then each line m reports as it runs (a
 * result row of its script, such as a long conversion's count). */
typedef void (*migrate_progress_fn)(const struct migration *m, const char *note, void *ctx);

/* Applies every migration of list newer than the database's, in order. progress (may be
 * NULL) hears of each one. *applied_out (may be NULL) counts those applied. */
int migrate_apply(struct store *store, const struct migration *list, size_t count,
                  migrate_progress_fn progress, void *ctx, int *applied_out,
                  struct purser_error *err);

#endif
