/* migrate.c: the schema_migrations table and the migration runner. */
#include "store/migrate.h"

#include <stdlib.h>
#include <string.h>

#define CREATE_TABLE                                                                               \
    "CREATE TABLE IF NOT EXISTS schema_migrations ("                                               \
    " version INT NOT NULL PRIMARY KEY,"                                                           \
    " name VARCHAR(255) NOT NULL,"                                                                 \
    " applied_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6)"                                \
    ") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin"

int migrate_latest(const struct migration *list, size_t count)
{
    int latest = 0;
    for (size_t i = 0; i < count; i++)
        if (list[i].version > latest)
            latest = list[i].version;
    return latest;
}

/* the one integer a query answers (0 when it answers NULL) */
static int query_int(struct store *store, struct arena *arena, const char *sql,
                     const struct store_value *params, size_t nparams, int *out,
                     struct purser_error *err)
{
    struct store_rows rows;
    int rc = store_query(store, arena, &rows, sql, params, nparams, err);
    if (!rc)
        *out = atoi(store_cell(&rows, 0, 0) ? store_cell(&rows, 0, 0) : "0");
    return rc;
}

static int current_version(struct store *store, struct arena *arena, int *version_out,
                           struct purser_error *err)
{
    return query_int(store, arena, "SELECT COALESCE(MAX(version), 0) FROM schema_migrations", NULL,
                     0, version_out, err);
}

int migrate_current(struct store *store, int *version_out, struct purser_error *err)
{
    struct arena *arena = arena_new();
    int tables = 0;
    int rc = arena ? 0 : purser_error_set(err, PURSER_EINTERNAL, "out of memory");

    *version_out = 0;
    if (!rc)
        rc = query_int(store, arena,
                       "SELECT COUNT(*) FROM information_schema.tables"
                       " WHERE table_schema = DATABASE() AND table_name = 'schema_migrations'",
                       NULL, 0, &tables, err);
    if (!rc && tables)
        rc = current_version(store, arena, version_out, err);
    arena_free(arena);
    return rc;
}

static int lock(struct store *store, struct arena *arena, int take, struct purser_error *err)
{
    struct store_rows rows;
    int rc = store_query(store, arena, &rows,
                         take ? "SELECT GET_LOCK('purser.migrate', 120)"
                              : "SELECT RELEASE_LOCK('purser.migrate')",
                         NULL, 0, err);
    if (!rc && take && (!store_cell(&rows, 0, 0) || strcmp(store_cell(&rows, 0, 0), "1") != 0))
        rc = purser_error_set(err, PURSER_EUNAVAIL, "another migration holds the lock");
    return rc;
}

/* A migration's progress (store_exec_script_notes' note) passed on, with the migration. */
struct notes {
    const struct migration *m;
    migrate_progress_fn progress;
    void *ctx;
};

static void on_note(const char *text, void *arg)
{
    const struct notes *n = arg;
    n->progress(n->m, text, n->ctx);
}

static int apply_one(struct store *store, const struct migration *m, migrate_progress_fn progress,
                     void *ctx, struct purser_error *err)
{
    struct store_value params[] = {STORE_INT(m->version), STORE_STR(m->name)};
    struct notes notes = {m, progress, ctx};
    struct purser_error inner;
    int rc = store_exec_script_notes(store, m->sql, progress ? on_note : NULL, &notes, &inner);
    if (rc)
        return purser_error_set(err, rc, "migration %s failed: %s", m->name, inner.message);
    rc = store_exec(store, "INSERT INTO schema_migrations (version, name) VALUES (?, ?)", params, 2,
                    NULL, NULL, err);
    /* (the column is there from 0025 on: a migration before it cannot mark itself) */
    if (!rc && migrate_contracts(m))
        rc = store_exec(store, "UPDATE schema_migrations SET contract = 1 WHERE version = ?",
                        params, 1, NULL, NULL, err);
    return rc;
}

int migrate_contracts(const struct migration *m)
{
    const char *mark = "-- purser: contract";
    const char *at = strstr(m->sql, mark);
    return at && (at == m->sql || at[-1] == '\n');
}

int migrate_schema_state(struct store *store, int expected, int *current_out, int *floor_out,
                         struct purser_error *err)
{
    struct arena *arena = NULL;
    struct store_value params[] = {STORE_INT(expected)};
    int rc = migrate_current(store, current_out, err);

    *floor_out = 0;
    /* newer than this build: the newest migration after it that contracts the schema */
    if (!rc && *current_out > expected) {
        arena = arena_new();
        rc = arena ? 0 : purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    }
    if (!rc && arena)
        rc = query_int(store, arena,
                       "SELECT COALESCE(MAX(version), 0) FROM schema_migrations"
                       " WHERE contract = 1 AND version > ?",
                       params, 1, floor_out, err);
    arena_free(arena);
    return rc;
}

int migrate_serves(int expected, int current, int contract, struct purser_error *err)
{
    if (current < expected)
        return purser_error_set(err, PURSER_EUNAVAIL,
                                "the database schema is at version %d and this purser-fcgi needs "
                                "%d: an upgrade is under way (purser migrate)",
                                current, expected);
    if (current > expected && contract)
        return purser_error_set(err, PURSER_EUNAVAIL,
                                "the database schema is at version %d, past migration %d, which "
                                "contracts what this purser-fcgi (made for version %d) reads: "
                                "upgrade this host",
                                current, contract, expected);
    return 0;
}

int migrate_apply(struct store *store, const struct migration *list, size_t count,
                  migrate_progress_fn progress, void *ctx, int *applied_out,
                  struct purser_error *err)
{
    struct arena *arena = arena_new();
    int rc, current = 0, applied = 0, locked = 0;

    if (applied_out)
        *applied_out = 0;
    if (!arena)
        return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    if ((rc = store_exec(store, CREATE_TABLE, NULL, 0, NULL, NULL, err)))
        goto cleanup;
    if ((rc = lock(store, arena, 1, err)))
        goto cleanup;
    locked = 1;
    if ((rc = current_version(store, arena, &current, err)))
        goto cleanup;
    for (size_t i = 0; i < count; i++) {
        if (list[i].version <= current)
            continue;
        if (progress)
            progress(&list[i], NULL, ctx);
        if ((rc = apply_one(store, &list[i], progress, ctx, err)))
            goto cleanup;
        applied++;
    }
cleanup:
    if (locked) {
        struct purser_error ignored;
        lock(store, arena, 0, &ignored);
    }
    arena_free(arena);
    if (applied_out)
        *applied_out = applied;
    return rc;
}
