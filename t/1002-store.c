/* 1002-store: the MariaDB wrapper against a real server: parameters, results, duplicate keys,
 * reconnecting after the connection is killed, transactions and their retry on lock waits.
 * Starts its own stack (tools/stack) in a temporary folder and stops it at exit. */
#include "base/buf.h"
#include "config/config.h"
#include "store/store.h"
#include "tap.h"

#include <mysql.h>
#include <signal.h>
#include <stdlib.h>

static char dir[64];

static void stop_stack(void)
{
    char cmd[512];
    if (!dir[0])
        return;
    snprintf(cmd, sizeof(cmd), "tools/stack stop '%s' >/dev/null 2>&1; rm -rf '%s'", dir, dir);
    if (system(cmd) != 0)
        fprintf(stderr, "# stopping the stack failed\n");
    dir[0] = '\0';
}

static void on_signal(int sig)
{
    stop_stack();
    signal(sig, SIG_DFL);
    raise(sig);
}

static int start_stack(struct purser_config *cfg)
{
    char cmd[512], path[128];
    struct purser_error err;
    snprintf(dir, sizeof(dir), "/tmp/purser-store-XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    atexit(stop_stack);
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    snprintf(cmd, sizeof(cmd), "PURSER_WORKERS=1 tools/stack start '%s' >/dev/null", dir);
    if (system(cmd) != 0)
        return -1;
    snprintf(path, sizeof(path), "%s/purser.yaml", dir);
    return config_load(cfg, path, &err);
}

struct lock_test {
    struct store *holder; /* holds the row lock until the second attempt */
    int attempts;
};

static int update_locked_row(struct store *store, void *ctx, struct purser_error *err)
{
    struct lock_test *t = ctx;
    struct store_value name = STORE_STR("lock-test");
    if (++t->attempts == 2 && store_exec(t->holder, "COMMIT", NULL, 0, NULL, NULL, err))
        return PURSER_EINTERNAL;
    return store_exec(store, "UPDATE settings SET value = 'updated' WHERE name = ?", &name, 1, NULL,
                      NULL, err);
}

static int insert_then_fail(struct store *store, void *ctx, struct purser_error *err)
{
    struct store_value p[] = {STORE_STR("rolled-back"), STORE_STR("x")};
    (void)ctx;
    store_exec(store, "INSERT INTO settings (name, value) VALUES (?, ?)", p, 2, NULL, NULL, err);
    return purser_error_set(err, PURSER_EINVAL, "the handler refuses");
}

/* Attempt 1 inserts a row on an id that is taken (what Galera's auto-increment does while the
 * cluster's membership changes) or reports a conflict of its own; attempt 2 inserts it. With
 * twice_key, every attempt inserts a name that is taken instead: an answer, never retried. */
struct conflict_test {
    int attempts, own, twice_key;
};

static int insert_after_conflict(struct store *store, void *ctx, struct purser_error *err)
{
    struct conflict_test *t = ctx;
    if (t->twice_key)
        return store_exec(store, "INSERT INTO t_autoinc (name) VALUES ('first')", NULL, 0, NULL,
                          NULL, err);
    if (++t->attempts == 1 && t->own)
        return store_conflict(store, "a test", err);
    if (t->attempts == 1)
        return store_exec(store, "INSERT INTO t_autoinc (id, name) VALUES (1, 'again')", NULL, 0,
                          NULL, NULL, err);
    {
        struct store_value own = STORE_INT(t->own);
        return store_exec(store, "INSERT INTO t_autoinc (name) VALUES (CONCAT('after-', ?))", &own,
                          1, NULL, NULL, err);
    }
}

static int always_conflict(struct store *store, void *ctx, struct purser_error *err)
{
    ++*(int *)ctx;
    return store_conflict(store, "a test", err);
}

struct each_seen {
    size_t rows;
    int in_order, one_each;
    long stop_at; /* fail at this row (-1: never) */
};

static int each_row(void *arg, const struct store_rows *row, struct purser_error *err)
{
    struct each_seen *seen = arg;
    long i = atol(store_cell(row, 0, 0));
    if (!seen->rows)
        seen->in_order = seen->one_each = 1;
    seen->rows++;
    seen->in_order &= i == (long)seen->rows;
    seen->one_each &= row->count == 1 && row->lengths[1] == (size_t)(5000 + i) &&
                      store_cell(row, 0, 1)[5000 + i - 1] == 'x';
    if ((long)seen->rows == seen->stop_at)
        return purser_error_set(err, PURSER_EINVAL, "stop");
    return 0;
}

int main(int argc, char **argv)
{
    struct purser_config cfg;
    struct purser_error err;
    struct store *store = NULL, *other = NULL;
    struct arena *arena;
    struct store_rows rows;
    struct store_stats stats;
    int rc;

    tap_init(argc, argv);
    if (!tap_ok(start_stack(&cfg) == 0, "a stack to test against"))
        return tap_done();
    mysql_library_init(0, NULL, NULL);
    arena = arena_new();
    tap_is_int(store_new(&store, &cfg, &err), 0, "store_new");
    tap_is_int(store_ping(store, &err), 0, "ping");

    {
        /* Values with SQL metacharacters and a NUL byte go through as data. */
        static const char tricky[] = "it's \"quoted\"; DROP TABLE settings; --\0after";
        struct store_value p[] = {STORE_STR("tricky"), STORE_STRN(tricky, sizeof(tricky) - 1)};
        struct store_value key = STORE_STR("tricky");
        unsigned long long affected = 0;
        tap_is_int(store_exec(store, "INSERT INTO settings (name, value) VALUES (?, ?)", p, 2,
                              &affected, NULL, &err),
                   0, "insert with bound parameters");
        tap_is_int(affected, 1, "one row affected");
        tap_is_int(store_query(store, arena, &rows,
                               "SELECT value, LENGTH(value) FROM settings WHERE name = ?", &key, 1,
                               &err),
                   0, "select it back");
        tap_ok(rows.count == 1 && rows.lengths[0] == sizeof(tricky) - 1 &&
                   memcmp(store_cell(&rows, 0, 0), tricky, sizeof(tricky) - 1) == 0,
               "the value is exactly what was bound, NUL byte included");
        tap_is_int(atoi(store_cell(&rows, 0, 1)), sizeof(tricky) - 1,
                   "the server counts the same length");
        tap_is_int(store_exec(store, "INSERT INTO settings (name, value) VALUES (?, ?)", p, 2, NULL,
                              NULL, &err),
                   PURSER_EEXISTS, "a duplicate key is PURSER_EEXISTS");
        tap_is_int(store_query(store, arena, &rows, "SELECT COUNT(*) FROM settings", NULL, 0, &err),
                   0, "the table survived");
        tap_is_str(store_cell(&rows, 0, 0), "2", "with its two rows");
    }
    {
        struct store_value p[] = {STORE_NULLV, STORE_INT(-42)};
        tap_is_int(store_query(store, arena, &rows, "SELECT ? IS NULL, ? + 1", p, 2, &err), 0,
                   "NULL and integer parameters");
        tap_is_str(store_cell(&rows, 0, 0), "1", "NULL bound as NULL");
        tap_is_str(store_cell(&rows, 0, 1), "-41", "integer bound as integer");
        tap_is_int(store_query(store, arena, &rows, "SELECT NULL", NULL, 0, &err), 0,
                   "select NULL");
        tap_ok(rows.count == 1 && store_cell(&rows, 0, 0) == NULL, "SQL NULL reads as a NULL cell");
    }
    {
        /* DATETIME and TIMESTAMP cells are written by the store (store_fetch.c): the text the
         * server gives for the same values (CAST AS CHAR), with as many digits of a second as
         * the column has; z6 has a zero fraction */
        static const char *sql =
            "SELECT d6, CAST(d6 AS CHAR), d0, CAST(d0 AS CHAR), d3, CAST(d3 AS CHAR), z6, "
            "CAST(z6 AS CHAR), dn FROM (SELECT CAST('2030-01-02 03:04:05.067890' AS DATETIME(6)) "
            "AS d6, CAST('1999-12-31 23:59:59' AS DATETIME) AS d0, CAST('2030-01-02 "
            "03:04:05.067890' AS DATETIME(3)) AS d3, CAST('2030-01-02 03:04:05.000000' AS "
            "DATETIME(6)) AS z6, CAST(NULL AS DATETIME) AS dn) x";
        tap_is_int(store_query(store, arena, &rows, sql, NULL, 0, &err), 0, "DATETIME columns");
        tap_is_str(store_cell(&rows, 0, 0), store_cell(&rows, 0, 1),
                   "DATETIME(6) as the server writes it");
        tap_is_str(store_cell(&rows, 0, 0), "2030-01-02 03:04:05.067890", "  to the microsecond");
        tap_is_int((long long)rows.lengths[0], 26, "  its length");
        tap_is_str(store_cell(&rows, 0, 2), store_cell(&rows, 0, 3), "DATETIME(0): no fraction");
        tap_is_str(store_cell(&rows, 0, 4), store_cell(&rows, 0, 5), "DATETIME(3): three digits");
        tap_is_str(store_cell(&rows, 0, 6), store_cell(&rows, 0, 7), "a zero fraction written too");
        tap_ok(store_cell(&rows, 0, 8) == NULL, "a NULL DATETIME is a NULL cell");
    }
    {
        /* Rows one at a time: 300 of them, each with a cell past the inline buffer, in order;
         * a callback that stops early ends the query and leaves the connection usable. */
        struct each_seen seen = {0, 0, 0, -1};
        struct store_value p[] = {STORE_INT(300)};
        const char *sql =
            "WITH RECURSIVE n (i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)"
            " SELECT i, REPEAT('x', 5000 + i) FROM n ORDER BY i";
        tap_is_int(store_query_each(store, sql, p, 1, each_row, &seen, &err), 0,
                   "store_query_each runs a query");
        tap_is_int((long)seen.rows, 300, "and hands over every row");
        tap_ok(seen.in_order && seen.one_each, "one at a time, in order, each cell whole");
        seen = (struct each_seen){0, 0, 0, 10};
        tap_is_int(store_query_each(store, sql, p, 1, each_row, &seen, &err), PURSER_EINVAL,
                   "a callback's error stops it and is returned");
        tap_is_int((long)seen.rows, 10, "after the row that failed");
        tap_is_int(store_query(store, arena, &rows, "SELECT 7", NULL, 0, &err), 0,
                   "the connection serves the next query");
        tap_is_str(store_cell(&rows, 0, 0), "7", "with its own answer");
    }
    {
        /* Prepared statements with many parameters (a document write's batches): the cache
         * keeps at most STORE_CACHE_PARAMS of them, and closes the rest on the server too. */
        struct store_value p[1000];
        struct store_stats st;
        struct buf sql = BUF_INIT;
        long before = -1, after = -1, right = 0;
        size_t most = 0;
        for (size_t i = 0; i < 1000; i++)
            p[i] = STORE_INT((long long)i);
        if (!store_query(store, arena, &rows, "SHOW GLOBAL STATUS LIKE 'Prepared_stmt_count'", NULL,
                         0, &err))
            before = atol(store_cell(&rows, 0, 1));
        for (int k = 0; k < 40; k++) { /* 40 texts of 1,000 parameters: 40,000 in all */
            buf_reset(&sql);
            buf_printf(&sql, "SELECT %d + GREATEST(?", k);
            for (size_t i = 1; i < 1000; i++)
                buf_adds(&sql, ", ?");
            buf_adds(&sql, ")");
            right += !store_query(store, arena, &rows, buf_cstr(&sql), p, 1000, &err) &&
                     atoi(store_cell(&rows, 0, 0)) == k + 999;
            store_get_stats(store, &st);
            most = st.cached_params > most ? st.cached_params : most;
        }
        buf_release(&sql);
        if (!store_query(store, arena, &rows, "SHOW GLOBAL STATUS LIKE 'Prepared_stmt_count'", NULL,
                         0, &err))
            after = atol(store_cell(&rows, 0, 1));
        tap_is_int(right, 40, "40 statements of 1,000 parameters each answer right");
        tap_ok(most <= STORE_CACHE_PARAMS && most >= STORE_CACHE_PARAMS - 1000,
               "the statements kept hold at most STORE_CACHE_PARAMS parameters (most: %zu)", most);
        tap_ok(before >= 0 && after >= 0 && after - before <= STORE_CACHE_PARAMS / 1000 + 1,
               "the server holds no more of them (prepared statements %ld before, %ld after)",
               before, after);
        store_get_stats(store, &st);
        tap_ok(st.cached_statements < 40 && st.cached_statements >= STORE_CACHE_PARAMS / 1000,
               "and the cache keeps the most recent that fit (%zu)", st.cached_statements);
    }
    tap_is_int(store_query(store, arena, &rows, "SELECT nonsense FROM nowhere", NULL, 0, &err),
               PURSER_EINTERNAL, "a bad statement is an internal error");
    tap_ok(strstr(err.message, "nowhere") != NULL, "whose message names the table");

    /* Killing our connection from another one: the next call reconnects and succeeds. */
    tap_is_int(store_new(&other, &cfg, &err), 0, "a second store");
    tap_is_int(store_query(store, arena, &rows, "SELECT CONNECTION_ID()", NULL, 0, &err), 0,
               "our connection id");
    {
        char cmd[512];
        snprintf(cmd, sizeof(cmd),
                 "mariadb --no-defaults --socket='%s/run/mariadb.sock' -uroot -e 'KILL %s'", dir,
                 store_cell(&rows, 0, 0));
        tap_is_int(system(cmd), 0, "the connection is killed");
    }
    store_get_stats(store, &stats);
    tap_is_int(store_ping(store, &err), 0, "the next call succeeds after reconnecting");
    {
        struct store_stats after;
        store_get_stats(store, &after);
        tap_is_int(after.connects, stats.connects + 1, "it made one new connection");
    }

    /* A statement the server refuses is an internal error naming the statement, with its
     * placeholders, never the values bound to them. */
    {
        struct store_value v = STORE_STR("value-never-logged");
        rc = store_exec(store, "UPDATE no_such_table SET value = ? WHERE 1", &v, 1, NULL, NULL,
                        &err);
        tap_is_int(rc, PURSER_EINTERNAL, "a statement on a missing table: internal error");
        tap_ok(strstr(err.message, "(in UPDATE no_such_table SET value = ? WHERE 1)") != NULL &&
                   !strstr(err.message, "value-never-logged"),
               "  its message names the statement, not the value: %s", err.message);
    }

    /* A transaction whose handler fails is rolled back. */
    rc = store_txn(store, 0, insert_then_fail, NULL, &err);
    tap_is_int(rc, PURSER_EINVAL, "a failing transaction returns the handler's error");
    tap_is_int(store_query(store, arena, &rows,
                           "SELECT COUNT(*) FROM settings WHERE name = 'rolled-back'", NULL, 0,
                           &err),
               0, "look for its row");
    tap_is_str(store_cell(&rows, 0, 0), "0", "its insert was rolled back");

    /* A lock wait timeout inside a transaction runs the whole transaction again. */
    {
        struct store_value p[] = {STORE_STR("lock-test"), STORE_STR("initial")};
        struct lock_test t = {other, 0};
        struct store_value key = STORE_STR("lock-test");
        store_exec(store, "INSERT INTO settings (name, value) VALUES (?, ?)", p, 2, NULL, NULL,
                   &err);
        store_exec(store, "SET SESSION innodb_lock_wait_timeout = 1", NULL, 0, NULL, NULL, &err);
        store_exec(other, "START TRANSACTION", NULL, 0, NULL, NULL, &err);
        tap_is_int(store_query(other, arena, &rows,
                               "SELECT value FROM settings WHERE name = ? FOR UPDATE", &key, 1,
                               &err),
                   0, "another connection locks the row");
        store_get_stats(store, &stats);
        rc = store_txn(store, 0, update_locked_row, &t, &err);
        tap_is_int(rc, 0, "the transaction succeeds in the end");
        if (rc)
            tap_diag("  %s", err.message);
        tap_is_int(t.attempts, 2, "on its second attempt, after a lock wait timeout");
        {
            struct store_stats after;
            store_get_stats(store, &after);
            tap_is_int(after.txn_retries, stats.txn_retries + 1, "counted as one retry");
        }
        store_query(store, arena, &rows, "SELECT value FROM settings WHERE name = ?", &key, 1,
                    &err);
        tap_is_str(store_cell(&rows, 0, 0), "updated", "and its write landed");
    }

    /* A duplicate auto-increment id, and a conflict the transaction reports itself, run the
     * transaction again; a duplicate of any other key is the caller's answer. */
    {
        struct arena *a = arena_new();
        tap_is_int(store_exec(store,
                              "CREATE TABLE t_autoinc (id BIGINT AUTO_INCREMENT PRIMARY "
                              "KEY, name VARCHAR(32) NOT NULL UNIQUE) ENGINE=InnoDB",
                              NULL, 0, NULL, NULL, &err),
                   0, "a table with an auto-increment id");
        store_exec(store, "INSERT INTO t_autoinc (name) VALUES ('first')", NULL, 0, NULL, NULL,
                   &err);
        for (int own = 0; own < 2; own++) {
            struct conflict_test t = {0, own, 0};
            struct store_stats after;
            store_get_stats(store, &stats);
            rc = store_txn(store, 0, insert_after_conflict, &t, &err);
            store_get_stats(store, &after);
            tap_is_int(rc, 0, "%s: the transaction succeeds",
                       own ? "store_conflict" : "an id taken twice");
            tap_is_int(t.attempts, 2, "  on its second attempt");
            tap_is_int(after.txn_retries, stats.txn_retries + 1, "  counted as a retry");
            struct store_value name = STORE_STR(own ? "after-1" : "after-0");
            store_query(store, a, &rows, "SELECT COUNT(*) FROM t_autoinc WHERE name = ?", &name, 1,
                        &err);
            tap_is_str(store_cell(&rows, 0, 0), "1", "  its row is there once");
        }
        {
            struct conflict_test t = {0, 0, 1};
            store_get_stats(store, &stats);
            tap_is_int(store_txn(store, 0, insert_after_conflict, &t, &err), PURSER_EEXISTS,
                       "a name taken (a UNIQUE key): already exists");
            {
                struct store_stats after;
                store_get_stats(store, &after);
                tap_is_int(after.txn_retries, stats.txn_retries, "  and not tried again");
            }
        }
        {
            int tries = 0;
            tap_is_int(store_txn(store, 3, always_conflict, &tries, &err), PURSER_EUNAVAIL,
                       "a conflict on every attempt: unavailable (503) in the end");
            tap_is_int(tries, 3, "  after the attempts asked for");
        }
        arena_free(a);
    }

    /* With the server gone, calls fail as unavailable. */
    {
        char cmd[512];
        snprintf(cmd, sizeof(cmd), "tools/stack stop-db '%s' >/dev/null", dir);
        tap_is_int(system(cmd), 0, "MariaDB stopped");
        tap_is_int(store_ping(store, &err), PURSER_EUNAVAIL, "ping is PURSER_EUNAVAIL");
        tap_is_int(store_txn(store, 0, insert_then_fail, NULL, &err), PURSER_EUNAVAIL,
                   "a transaction too");
    }
    store_free(store);
    store_free(other);
    arena_free(arena);
    config_release(&cfg);
    mysql_library_end();
    stop_stack();
    return tap_done();
}
