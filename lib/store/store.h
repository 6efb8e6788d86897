/* store.h: purser's MariaDB access: one connection, prepared statements, retrying transactions.
 *
 * A store is one connection, owned by one process (each FastCGI worker has its own). It
 * connects lazily and again after the connection is lost: a call that finds the server gone
 * reconnects once and, outside a transaction, runs the statement again; when the server
 * cannot be reached the call fails with PURSER_EUNAVAIL. SQL with values always goes through
 * prepared statements with bound parameters (cached per connection); only migrations run
 * multi-statement scripts, which take no parameters.
 */
#ifndef PURSER_STORE_H
#define PURSER_STORE_H

#include "base/arena.h"
#include "base/err.h"
#include "config/config.h"

#include <stddef.h>
#include <string.h>

struct store;

enum store_type { STORE_NULL, STORE_STR, STORE_INT, STORE_BLOB };

/* One bound parameter. Strings are borrowed for the call and may hold NULs (len counts). */
struct store_value {
    enum store_type type;
    const char *str;
    size_t len;
    long long num;
};

#define STORE_STR(s) ((struct store_value){STORE_STR, (s), strlen(s), 0})
#define STORE_STRN(s, n) ((struct store_value){STORE_STR, (s), (n), 0})
#define STORE_BLOB(s, n) ((struct store_value){STORE_BLOB, (s), (n), 0})
#define STORE_INT(n) ((struct store_value){STORE_INT, NULL, 0, (n)})
#define STORE_NULLV ((struct store_value){STORE_NULL, NULL, 0, 0})

/* SQL that reads a DATETIME column as UTC ISO 8601 with Z ("2026-11-23T08:53:00Z"): the one
 * form of time in answers (SPEC §2). col is SQL text, such as "r.created_at". */
#define STORE_ISO_TIME(col) "DATE_FORMAT(" col ", '%Y-%m-%dT%H:%i:%sZ')"

/* A whole result set; every cell is text (NULL for SQL NULL), all memory in the arena. */
struct store_rows {
    size_t count;
    size_t columns;
    char **cells;    /* cells[row * columns + column] */
    size_t *lengths; /* the same layout */
};

/* The cell at (row, column), or NULL. */
const char *store_cell(const struct store_rows *rows, size_t row, size_t column);

/* A store for the database settings of cfg (copied). It does not connect yet. */
int store_new(struct store **out, const struct purser_config *cfg, struct purser_error *err);

/* Closes the connection and frees everything. Accepts NULL. */
void store_free(struct store *store);

/* Connects now if not connected. PURSER_EUNAVAIL when the server cannot be reached. */
int store_connect(struct store *store, struct purser_error *err);

/* Runs a statement that returns no rows; *affected (if not NULL) gets the affected row
 * count and *insert_id (if not NULL) the AUTO_INCREMENT value it generated. */
int store_exec(struct store *store, const char *sql, const struct store_value *params,
               size_t nparams, unsigned long long *affected, unsigned long long *insert_id,
               struct purser_error *err);

/* Runs a query and reads all its rows into *out, allocated in arena. */
int store_query(struct store *store, struct arena *arena, struct store_rows *out, const char *sql,
                const struct store_value *params, size_t nparams, struct purser_error *err);

/* Runs a query and hands its rows to fn one at a time, as they come from the server (none
 * is kept: a large result never sits whole in memory). row holds one row (count 1) whose
 * cells live until fn returns. A nonzero return from fn stops the query and is returned.
 * fn must not use the store: the connection is busy with the result until the last row. */
int store_query_each(struct store *store, const char *sql, const struct store_value *params,
                     size_t nparams,
                     int (*fn)(void *ctx, const struct store_rows *row, struct purser_error *err),
                     void *ctx, struct purser_error *err);

/* For fn of store_txn: the attempt met a change it cannot resolve itself (a concurrent write
 * it could not see, a row that was not its own): PURSER_EUNAVAIL, and store_txn runs the
 * transaction again as after a deadlock (what stays after the last attempt is a 503). what
 * says which, for the log. A duplicate auto-increment id (Galera, while the cluster's
 * membership changes) is such a conflict too. */
int store_conflict(struct store *store, const char *what, struct purser_error *err);

/* Runs fn inside one transaction: commit when it returns 0, rollback otherwise. When the
 * server reports a deadlock (1213, also a Galera certification conflict) or a lock wait
 * timeout (1205), or the connection was lost before commit, the whole transaction runs
 * again, up to `attempts` times (0 = 10), after a short growing pause with jitter. fn must
 * therefore have no effect outside the database that it cannot repeat. Called inside another
 * transaction (an import writing through the functions that make one each), fn joins it: it
 * commits, rolls back and retries with the outer one. */
int store_txn(struct store *store, int attempts,
              int (*fn)(struct store *store, void *ctx, struct purser_error *err), void *ctx,
              struct purser_error *err);

/* Notices a transaction leaves for after its commit (the event log's, events.h). The hook
 * gets them, in order, once the transaction has committed; a rollback or a retried attempt
 * drops them. store_notice takes the value (steals the reference); outside a transaction
 * the hook gets it at once. Without a hook, notices are dropped. The worker's hook is the web
 * layer's (fcgi/events_publish.c: the events to nginx's nchan); lib/ speaks no HTTP. */
struct json_t;
void store_set_commit_hook(struct store *store,
                           void (*hook)(void *ctx, const struct json_t *notices), void *ctx);
void store_notice(struct store *store, struct json_t *notice);

/* A step that ends every transaction while it is set (last NULL: none): last runs inside it,
 * after fn and before COMMIT, so that what it writes commits with fn's writes or not at all
 * (its failure rolls them back); once the transaction has committed, committed runs, before
 * store_txn returns. The worker sets them around a handler that may change credentials: the
 * change's note (auth_changes) is written with the change, and the other workers are told
 * before the answer is written. */
void store_set_txn_end(struct store *store,
                       int (*last)(struct store *store, void *ctx, struct purser_error *err),
                       void (*committed)(void *ctx), void *ctx);

/* A request begins (the worker calls this before each): on a Galera node, with
 * database.causal_reads, its first statement is preceded by a causality wait
 * ("SET STATEMENT wsrep_sync_wait = 1 FOR SELECT 1"), so that everything the request reads
 * includes every write the cluster committed before the request began, whichever node took it.
 * One round trip per request that reads; none without Galera. */
void store_request_begins(struct store *store);

/* One round trip (SELECT 1). */
int store_ping(struct store *store, struct purser_error *err);

/* Runs a script of several statements with no parameters (migrations only). */
int store_exec_script(struct store *store, const char *sql, struct purser_error *err);

/* The same; note (may be NULL) gets the first column of each row the script answers, as it
 * comes (a migration's progress). */
int store_exec_script_notes(struct store *store, const char *sql,
                            void (*note)(const char *text, void *ctx), void *ctx,
                            struct purser_error *err);

/* The parameters the prepared statements a store keeps hold in all. A prepared statement
 * costs its connection memory by its parameters, in mariadbd (about 400 bytes each) and in the
 * client (about 100): a document write's batches of hundreds of rows have thousands, and 64
 * of them held 68 MB of the server's memory and 16 MB of a worker's. The least recently used
 * statements are closed first. */
#define STORE_CACHE_PARAMS 16384

/* Counters since store_new(), for metrics and tests; and what the statement cache holds now. */
struct store_stats {
    unsigned long connects;
    unsigned long errors;
    unsigned long txn_retries;
    size_t cached_statements;
    size_t cached_params;
};
void store_get_stats(const struct store *store, struct store_stats *out);

#endif
