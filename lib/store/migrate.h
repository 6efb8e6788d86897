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

/* Whether m contracts the schema (drops or rewrites what an older binary reads or writes): its
 * SQL has a line `-- purser: contract`. Recorded in schema_migrations.contract (from 0025 on). */
int migrate_contracts(const struct migration *m);

/* The database's schema for a binary made for version expected: *current_out its version, and
 * *floor_out the newest migration after expected that contracts it (0: none, or not newer). */
int migrate_schema_state(struct store *store, int expected, int *current_out, int *floor_out,
                         struct purser_error *err);

/* Whether a binary made for schema expected serves on a database at current whose newest
 * contracting migration after expected is contract (migrate_schema_state): on its own schema,
 * and on a newer one that only expanded it (a rolling upgrade, docs/operator/upgrades.md).
 * Otherwise PURSER_EUNAVAIL saying which: older (migrations not run yet), or contracted. */
int migrate_serves(int expected, int current, int contract, struct purser_error *err);

/* A migration's progress: note is NULL as m starts, then each line m reports as it runs (a
 * result row of its script, such as a long conversion's count). */
typedef void (*migrate_progress_fn)(const struct migration *m, const char *note, void *ctx);

/* Applies every migration of list newer than the database's, in order. progress (may be
 * NULL) hears of each one. *applied_out (may be NULL) counts those applied. */
int migrate_apply(struct store *store, const struct migration *list, size_t count,
                  migrate_progress_fn progress, void *ctx, int *applied_out,
                  struct purser_error *err);

#endif
