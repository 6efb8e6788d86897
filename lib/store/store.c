/* store.c: the MariaDB connection, statement cache, queries and retrying transactions. */
#include "store/store_private.h"

#include "base/crypto.h"
#include "base/metrics.h"

#include <ctype.h>
#include <errmsg.h>
#include <jansson.h>
#include <mysql.h>
#include <mysqld_error.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SESSION_SETUP                                                                              \
    "SET time_zone = '+00:00', "                                                                   \
    "sql_mode = 'STRICT_ALL_TABLES,NO_ZERO_DATE,NO_ZERO_IN_DATE,ERROR_FOR_DIVISION_BY_ZERO,"       \
    "NO_ENGINE_SUBSTITUTION'"

static void notices_flush(struct store *s, int committed);

void store_set_commit_hook(struct store *store, void (*hook)(void *ctx, const json_t *notices),
                           void *ctx)
{
    store->commit_hook = hook;
    store->commit_ctx = ctx;
}

void store_set_txn_end(struct store *store,
                       int (*last)(struct store *store, void *ctx, struct purser_error *err),
                       void (*committed)(void *ctx), void *ctx)
{
    store->txn_last = last;
    store->txn_committed = committed;
    store->txn_ctx = ctx;
}

void store_notice(struct store *store, json_t *notice)
{
    if (!notice)
        return;
    if (!store->commit_hook) {
        json_decref(notice);
        return;
    }
    if (!store->notices)
        store->notices = json_array();
    json_array_append_new(store->notices, notice);
    if (!store->in_txn)
        notices_flush(store, 1);
}

const char *store_cell(const struct store_rows *rows, size_t row, size_t column)
{
    if (row >= rows->count || column >= rows->columns)
        return NULL;
    return rows->cells[row * rows->columns + column];
}

int store_new(struct store **out, const struct purser_config *cfg, struct purser_error *err)
{
    struct store *s = calloc(1, sizeof(*s));
    *out = NULL;
    if (!s)
        return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    s->socket = strdup(cfg->db_socket);
    s->host = strdup(cfg->db_host);
    s->user = strdup(cfg->db_user);
    s->password_file = strdup(cfg->db_password_file);
    s->name = strdup(cfg->db_name);
    s->port = (unsigned)cfg->db_port;
    s->connect_timeout = (unsigned)cfg->db_connect_timeout;
    s->causal_reads = cfg->db_causal_reads;
    if (!s->socket || !s->host || !s->user || !s->password_file || !s->name) {
        store_free(s);
        return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    }
    *out = s;
    return 0;
}

static void stmt_evict(struct cached_stmt *c)
{
    if (c->stmt)
        mysql_stmt_close(c->stmt);
    free(c->sql);
    free(c->times);
    c->stmt = NULL;
    c->sql = NULL;
    c->times = NULL;
    c->params = 0;
}

static void disconnect(struct store *s)
{
    for (size_t i = 0; i < STMT_CACHE_SIZE; i++)
        stmt_evict(&s->cache[i]);
    if (s->conn)
        mysql_close(s->conn);
    s->conn = NULL;
    s->in_txn = 0;
}

void store_free(struct store *s)
{
    if (!s)
        return;
    disconnect(s);
    free(s->socket);
    free(s->host);
    free(s->user);
    free(s->password_file);
    free(s->name);
    json_decref(s->notices);
    free(s);
}

/* Errors after which the connection is unusable and a new one may succeed. A Galera node
 * that is joining, or cut off from the cluster's majority, refuses every statement with
 * ER_UNKNOWN_COM_ERROR ("WSREP has not yet prepared node for application use"): the
 * database is unavailable there until it has caught up. A node cut off while a transaction
 * commits fails the COMMIT with ER_ERROR_DURING_COMMIT ("Error while appending streaming
 * replication fragment (provider status: Not connected to Primary Component)"): the write set
 * never left the node, the transaction is rolled back, and that too is the database being
 * unavailable (t/9006 met it as a 500). */
static int is_connection_error(unsigned code)
{
    return code == CR_SERVER_GONE_ERROR || code == CR_SERVER_LOST || code == CR_CONNECTION_ERROR ||
           code == CR_CONN_HOST_ERROR || code == ER_CONNECTION_KILLED ||
           code == CR_SERVER_LOST_EXTENDED || code == ER_SERVER_SHUTDOWN ||
           code == ER_UNKNOWN_COM_ERROR || code == ER_ERROR_DURING_COMMIT;
}

static int is_retryable(unsigned code)
{
    return code == ER_LOCK_DEADLOCK || code == ER_LOCK_WAIT_TIMEOUT;
}

/* An error's kind as base/metrics.h counts it: 0 deadlock, 1 lock wait, 2 connection, 3
 * other (the order of METRIC_DB_ERROR_* and METRIC_DB_RETRY_*). */
static int error_kind(unsigned code)
{
    return code == ER_LOCK_DEADLOCK       ? 0
           : code == ER_LOCK_WAIT_TIMEOUT ? 1
           : is_connection_error(code)    ? 2
                                          : 3;
}

/* Galera hands an auto-increment id out twice while the cluster's membership changes (each
 * node's auto_increment_offset and increment are set anew, and a node that has just rejoined
 * may count from behind: MDEV-7129). The INSERT then meets a row that is not its own on the
 * PRIMARY key: "Duplicate entry '123' for key 'PRIMARY'". In purser's schema every primary key
 * of one column is an AUTO_INCREMENT id that no statement sets (keys of several columns show
 * as 'a-b'), so a plain number there can only be that. */
static int id_taken_twice(unsigned code, const char *text)
{
    const char *p = "Duplicate entry '";
    size_t n = strlen(p);
    if (code != ER_DUP_ENTRY || strncmp(text, p, n) != 0 || !isdigit((unsigned char)text[n]))
        return 0;
    for (p = text + n; isdigit((unsigned char)*p); p++)
        ;
    return strcmp(p, "' for key 'PRIMARY'") == 0;
}

int store_conflict(struct store *s, const char *what, struct purser_error *err)
{
    s->stats.errors++;
    s->last_error = ER_LOCK_DEADLOCK; /* run again, as after a certification conflict */
    metrics_add(METRIC_DB_ERROR_DEADLOCK, 1);
    return purser_error_set(err, PURSER_EUNAVAIL, "database conflict: %s", what);
}

/* Maps a server error to purser's codes. The message keeps MariaDB's text, which names the
 * table or key but never a value bound by us. */
static int db_error(struct store *s, unsigned code, const char *text, struct purser_error *err)
{
    if (id_taken_twice(code, text))
        return store_conflict(s,
                              "an auto-increment id was taken twice (a cluster membership "
                              "change)",
                              err);
    s->stats.errors++;
    s->last_error = code;
    if (code != ER_DUP_ENTRY) /* a duplicate is an answer (409), not a fault of the database */
        metrics_add(METRIC_DB_ERROR_DEADLOCK + error_kind(code), 1);
    if (is_connection_error(code)) {
        /* text lives in the statement or connection that disconnect() frees: format first */
        int rc = purser_error_set(err, PURSER_EUNAVAIL, "database unavailable: %s", text);
        disconnect(s);
        return rc;
    }
    if (code == ER_DUP_ENTRY)
        return purser_error_set(err, PURSER_EEXISTS, "already exists");
    if (is_retryable(code))
        return purser_error_set(err, PURSER_EUNAVAIL, "database busy (%u): %s", code, text);
    /* (an internal error is logged, never answered: the statement says where) */
    return purser_error_set(err, PURSER_EINTERNAL, "database error %u: %s (in %.120s)", code,
                            code || *text ? text : "none reported",
                            s->statement ? s->statement : "the session");
}

/* A prepared statement's failure. Connector/C leaves the statement's own error empty for some
 * (an error packet in the middle of a result's rows, seen when Galera aborted the transaction
 * while its rows were read): then the connection's error is the one, and when neither says
 * anything the session is in a state nobody reported, so it is dropped like a lost connection
 * (a transaction runs again on a new one). */
int store_stmt_failed(struct store *s, MYSQL_STMT *stmt, struct purser_error *err)
{
    if (mysql_stmt_errno(stmt))
        return db_error(s, mysql_stmt_errno(stmt), mysql_stmt_error(stmt), err);
    if (s->conn && mysql_errno(s->conn))
        return db_error(s, mysql_errno(s->conn), mysql_error(s->conn), err);
    return db_error(s, CR_SERVER_LOST, "the statement failed and no error was reported", err);
}

static char *read_password(const char *path)
{
    char buf[512];
    size_t n;
    FILE *f;
    if (!*path)
        return NULL;
    if (!(f = fopen(path, "r")))
        return NULL;
    n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
        n--;
    buf[n] = '\0';
    char *copy = strdup(buf);
    explicit_bzero(buf, sizeof(buf));
    return copy;
}

int store_connect(struct store *s, struct purser_error *err)
{
    MYSQL *conn;
    char *password;
    unsigned timeout = s->connect_timeout, rw_timeout = 60;
    my_bool off = 0;

    if (s->conn)
        return 0;
    if (!(conn = mysql_init(NULL)))
        return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    mysql_options(conn, MYSQL_OPT_CONNECT_TIMEOUT, &timeout);
    mysql_options(conn, MYSQL_OPT_READ_TIMEOUT, &rw_timeout);
    mysql_options(conn, MYSQL_OPT_WRITE_TIMEOUT, &rw_timeout);
    mysql_options(conn, MYSQL_OPT_RECONNECT, &off);
    mysql_options(conn, MYSQL_SET_CHARSET_NAME, "utf8mb4");
    password = read_password(s->password_file);
    if (*s->password_file && !password) {
        mysql_close(conn);
        return purser_error_set(err, PURSER_EUNAVAIL, "cannot read database.password_file %s",
                                s->password_file);
    }
    s->stats.connects++;
    if (!mysql_real_connect(conn, *s->socket ? NULL : s->host, s->user, password, s->name, s->port,
                            *s->socket ? s->socket : NULL, 0)) {
        unsigned code = mysql_errno(conn);
        int rc = purser_error_set(err, PURSER_EUNAVAIL, "cannot connect to the database (%u): %s",
                                  code, mysql_error(conn));
        if (password)
            explicit_bzero(password, strlen(password));
        free(password);
        mysql_close(conn);
        s->stats.errors++;
        metrics_add(METRIC_DB_ERROR_CONNECTION, 1);
        return rc;
    }
    if (password)
        explicit_bzero(password, strlen(password));
    free(password);
    if (mysql_real_query(conn, SESSION_SETUP, strlen(SESSION_SETUP))) {
        int rc =
            purser_error_set(err, PURSER_EUNAVAIL, "database session setup: %s", mysql_error(conn));
        mysql_close(conn);
        return rc;
    }
    s->conn = conn;
    if (s->connected_before)
        metrics_add(METRIC_DB_RECONNECT, 1);
    s->connected_before = 1;
    s->max_packet = 0;
    if (!mysql_real_query(conn, "SELECT @@max_allowed_packet", 27)) {
        MYSQL_RES *res = mysql_store_result(conn);
        MYSQL_ROW row = res ? mysql_fetch_row(res) : NULL;
        if (row && row[0])
            s->max_packet = strtoul(row[0], NULL, 10);
        mysql_free_result(res);
    }
    s->galera = 0;
    if (s->causal_reads && !mysql_real_query(conn, "SELECT @@wsrep_on", 17)) {
        MYSQL_RES *res = mysql_store_result(conn);
        MYSQL_ROW row = res ? mysql_fetch_row(res) : NULL;
        s->galera = row && row[0] && strcmp(row[0], "1") == 0;
        mysql_free_result(res);
    }
    return 0;
}

void store_request_begins(struct store *s)
{
    s->causal_due = 1;
}

/* The request's causality wait, before its first statement (store_request_begins). A failure
 * leaves it due: the statement's retry on a new connection waits first. */
static int causal_wait(struct store *s, struct purser_error *err)
{
    static const char sql[] = "SET STATEMENT wsrep_sync_wait = 1 FOR SELECT 1";
    if (!s->causal_due || !s->galera || !s->conn)
        return 0;
    s->statement = sql;
    if (mysql_real_query(s->conn, sql, sizeof(sql) - 1)) {
        int rc = db_error(s, mysql_errno(s->conn), mysql_error(s->conn), err);
        s->statement = NULL;
        return rc;
    }
    mysql_free_result(mysql_store_result(s->conn));
    s->statement = NULL;
    s->causal_due = 0;
    metrics_add(METRIC_DB_CAUSAL_WAIT, 1);
    return 0;
}

/* PURSER_ETOOLARGE when a statement's values cannot fit in one packet the server accepts:
 * sent anyway, the server would drop the connection ("gone away"), which is not the
 * database being down. */
static int check_packet(const struct store *s, const char *sql, const struct store_value *params,
                        size_t n, struct purser_error *err)
{
    unsigned long long total = strlen(sql) + 1024;
    for (size_t i = 0; i < n; i++)
        total += 16 + ((params[i].type == STORE_STR || params[i].type == STORE_BLOB) ? params[i].len
                                                                                     : 8);
    if (s->max_packet && total > s->max_packet)
        return purser_error_set(err, PURSER_ETOOLARGE,
                                "a value of %llu bytes does not fit in one database packet "
                                "(the database's max_allowed_packet is %lu bytes; it must be at "
                                "least 3 x http.max_body_bytes)",
                                total, s->max_packet);
    return 0;
}

/* The prepared statement for sql, from the cache or newly prepared. */
static int stmt_get(struct store *s, const char *sql, MYSQL_STMT **out,
                    struct cached_stmt **slot_out, struct purser_error *err)
{
    struct cached_stmt *slot = NULL;
    MYSQL_STMT *stmt;
    size_t params;
    char *copy;

    size_t sql_len = strlen(sql);
    for (size_t i = 0; i < STMT_CACHE_SIZE; i++) {
        struct cached_stmt *c = &s->cache[i];
        if (c->stmt && c->sql_len == sql_len && memcmp(c->sql, sql, sql_len) == 0) {
            c->last_used = ++s->clock;
            *out = c->stmt;
            *slot_out = c;
            return 0;
        }
    }
    if (!(copy = strdup(sql)) || !(stmt = mysql_stmt_init(s->conn))) {
        free(copy);
        return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    }
    if (mysql_stmt_prepare(stmt, sql, strlen(sql))) {
        int rc = store_stmt_failed(s, stmt, err);
        mysql_stmt_close(stmt);
        free(copy);
        return rc;
    }
    /* room for it: the least recently used go until a slot is free and its parameters fit
     * (one alone that does not fit is kept: it is the one in use) */
    params = mysql_stmt_param_count(stmt);
    for (;;) {
        struct cached_stmt *lru = NULL;
        size_t held = 0;
        slot = NULL;
        for (size_t i = 0; i < STMT_CACHE_SIZE; i++) {
            struct cached_stmt *c = &s->cache[i];
            held += c->params;
            if (!c->stmt)
                slot = slot ? slot : c;
            else if (!lru || c->last_used < lru->last_used)
                lru = c;
        }
        if (!lru || (slot && held + params <= STORE_CACHE_PARAMS))
            break;
        stmt_evict(lru);
    }
    slot->sql = copy;
    slot->sql_len = sql_len;
    slot->columns = -1;
    slot->times = NULL;
    slot->params = params;
    slot->stmt = stmt;
    slot->last_used = ++s->clock;
    *out = stmt;
    *slot_out = slot;
    return 0;
}

static int bind_params(struct store *s, MYSQL_STMT *stmt, const struct store_value *params,
                       size_t n, struct purser_error *err)
{
    MYSQL_BIND inline_binds[32], *binds = inline_binds;
    int rc = 0;
    if (n > 65535 || mysql_stmt_param_count(stmt) != n)
        return purser_error_set(err, PURSER_EINTERNAL, "statement takes %lu parameters, got %zu",
                                mysql_stmt_param_count(stmt), n);
    /* the connector copies the bind array; only the values must outlive this call */
    if (n > 32 && !(binds = malloc(n * sizeof(*binds))))
        return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    memset(binds, 0, (n > 32 ? n : 32) * sizeof(*binds));
    for (size_t i = 0; i < n; i++) {
        switch (params[i].type) {
        case STORE_NULL: binds[i].buffer_type = MYSQL_TYPE_NULL; break;
        case STORE_STR:
            binds[i].buffer_type = MYSQL_TYPE_STRING;
            binds[i].buffer = (void *)params[i].str;
            binds[i].buffer_length = params[i].len;
            break;
        case STORE_BLOB:
            binds[i].buffer_type = MYSQL_TYPE_BLOB;
            binds[i].buffer = (void *)params[i].str;
            binds[i].buffer_length = params[i].len;
            break;
        case STORE_INT:
            binds[i].buffer_type = MYSQL_TYPE_LONGLONG;
            binds[i].buffer = (void *)&params[i].num;
            break;
        }
    }
    if (n && mysql_stmt_bind_param(stmt, binds))
        rc = store_stmt_failed(s, stmt, err);
    if (binds != inline_binds)
        free(binds);
    return rc;
}

/* Prepares, binds and executes once; on a lost connection outside a transaction, connects
 * again and tries once more. Results are read by fetch_all when arena is not NULL. */
static int run(struct store *s, struct arena *arena, struct store_rows *rows, const char *sql,
               const struct store_value *params, size_t n, unsigned long long *affected,
               unsigned long long *insert_id, const struct row_sink *sink, struct purser_error *err)
{
    s->statement = sql;
    for (int attempt = 0;; attempt++) {
        MYSQL_STMT *stmt = NULL;
        struct cached_stmt *cached = NULL;
        int rc = store_connect(s, err);
        int was_in_txn = s->in_txn;
        if (!rc)
            rc = causal_wait(s, err);
        if (!rc)
            rc = check_packet(s, sql, params, n, err);
        if (!rc)
            rc = stmt_get(s, sql, &stmt, &cached, err);
        if (!rc)
            rc = bind_params(s, stmt, params, n, err);
        if (!rc && mysql_stmt_execute(stmt))
            rc = store_stmt_failed(s, stmt, err);
        if (!rc) {
            if (affected)
                *affected = mysql_stmt_affected_rows(stmt);
            if (insert_id)
                *insert_id = mysql_stmt_insert_id(stmt);
            if (arena)
                rc = store_fetch_all(s, stmt, cached, arena, rows, sink, err);
            else
                mysql_stmt_free_result(stmt);
        }
        /* (a sink that has seen rows must not see them again) */
        if (rc != PURSER_EUNAVAIL || was_in_txn || attempt >= 1 || s->conn || sink) {
            s->statement = NULL; /* (sql may not outlive the call) */
            return rc;
        }
    }
}

int store_exec(struct store *s, const char *sql, const struct store_value *params, size_t n,
               unsigned long long *affected, unsigned long long *insert_id,
               struct purser_error *err)
{
    return run(s, NULL, NULL, sql, params, n, affected, insert_id, NULL, err);
}

int store_query(struct store *s, struct arena *arena, struct store_rows *out, const char *sql,
                const struct store_value *params, size_t n, struct purser_error *err)
{
    return run(s, arena, out, sql, params, n, NULL, NULL, NULL, err);
}

int store_query_each(struct store *s, const char *sql, const struct store_value *params, size_t n,
                     int (*fn)(void *ctx, const struct store_rows *row, struct purser_error *err),
                     void *ctx, struct purser_error *err)
{
    struct row_sink sink = {fn, ctx};
    struct store_rows one;
    struct arena *arena = arena_new(); /* (the result's bindings) */
    int rc;
    if (!arena)
        return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    rc = run(s, arena, &one, sql, params, n, NULL, NULL, &sink, err);
    arena_free(arena);
    return rc;
}

int store_ping(struct store *s, struct purser_error *err)
{
    struct arena *arena = arena_new();
    struct store_rows rows;
    int rc;
    if (!arena)
        return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    rc = store_query(s, arena, &rows, "SELECT 1", NULL, 0, err);
    if (!rc && (rows.count != 1 || strcmp(store_cell(&rows, 0, 0), "1") != 0))
        rc = purser_error_set(err, PURSER_EINTERNAL, "SELECT 1 did not answer 1");
    arena_free(arena);
    return rc;
}

static int simple_query(struct store *s, const char *sql, struct purser_error *err)
{
    int rc = 0;
    s->statement = sql;
    if (mysql_real_query(s->conn, sql, strlen(sql)))
        rc = db_error(s, mysql_errno(s->conn), mysql_error(s->conn), err);
    s->statement = NULL;
    return rc;
}

static void pause_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static void notices_flush(struct store *s, int committed)
{
    if (committed && s->notices && json_array_size(s->notices) && s->commit_hook)
        s->commit_hook(s->commit_ctx, s->notices);
    json_decref(s->notices); /* made again by the next write: nothing jansson outlives a
                                request (base/json_pool.h) */
    s->notices = NULL;
}

int store_txn(struct store *s, int attempts,
              int (*fn)(struct store *store, void *ctx, struct purser_error *err), void *ctx,
              struct purser_error *err)
{
    int rc = 0;
    if (s->in_txn) /* inside another: part of it (its commit, rollback and retries) */
        return fn(s, ctx, err);
    if (attempts <= 0)
        attempts = 10;
    for (int attempt = 0; attempt < attempts; attempt++) {
        if (attempt) {
            unsigned char jitter = 0;
            s->stats.txn_retries++;
            /* (only those three end an attempt that is run again) */
            metrics_add(METRIC_DB_RETRY_DEADLOCK + error_kind(s->last_error), 1);
            crypto_random(&jitter, 1); /* racing writers must not retry in step */
            pause_ms((5L << (attempt < 6 ? attempt : 6)) + jitter % 20);
        }
        rc = store_connect(s, err);
        if (!rc)
            rc = causal_wait(s, err);
        if (!rc)
            rc = simple_query(s, "START TRANSACTION", err);
        if (rc)
            break; /* (not begun: nothing to run again) */
        s->in_txn = 1;
        s->last_error = 0;
        notices_flush(s, 0); /* (a retried attempt starts with none) */
        rc = fn(s, ctx, err);
        if (!rc && s->txn_last)
            rc = s->txn_last(s, s->txn_ctx, err);
        if (!rc && s->conn && (s->statement = "COMMIT") && mysql_commit(s->conn))
            rc = db_error(s, mysql_errno(s->conn), mysql_error(s->conn), err);
        s->statement = NULL;
        if (rc && s->conn)
            mysql_rollback(s->conn);
        s->in_txn = 0;
        notices_flush(s, !rc);
        if (!rc && s->txn_committed)
            s->txn_committed(s->txn_ctx);
        /* Run again after a deadlock or lock wait timeout (a Galera certification conflict
         * is a deadlock too), or a connection lost mid-transaction; fn's own failures stand. */
        if (!rc || (!is_retryable(s->last_error) && !is_connection_error(s->last_error)))
            break;
    }
    return rc;
}

int store_exec_script(struct store *s, const char *sql, struct purser_error *err)
{
    return store_exec_script_notes(s, sql, NULL, NULL, err);
}

/* Hands note the first column of each row of res. */
static void script_notes(MYSQL_RES *res, void (*note)(const char *text, void *ctx), void *ctx)
{
    MYSQL_ROW row;
    while (note && mysql_num_fields(res) > 0 && (row = mysql_fetch_row(res)))
        if (row[0])
            note(row[0], ctx);
}

int store_exec_script_notes(struct store *s, const char *sql,
                            void (*note)(const char *text, void *ctx), void *ctx,
                            struct purser_error *err)
{
    int rc, status;
    rc = store_connect(s, err);
    if (!rc && mysql_set_server_option(s->conn, MYSQL_OPTION_MULTI_STATEMENTS_ON))
        rc = db_error(s, mysql_errno(s->conn), mysql_error(s->conn), err);
    if (!rc) {
        status = mysql_real_query(s->conn, sql, strlen(sql));
        while (!status) {
            MYSQL_RES *res = mysql_store_result(s->conn);
            if (res) {
                script_notes(res, note, ctx);
                mysql_free_result(res);
            }
            status = mysql_next_result(s->conn);
            if (status < 0) {
                status = 0;
                break;
            }
        }
        if (status)
            rc = db_error(s, mysql_errno(s->conn), mysql_error(s->conn), err);
        if (s->conn)
            mysql_set_server_option(s->conn, MYSQL_OPTION_MULTI_STATEMENTS_OFF);
    }
    return rc;
}

void store_get_stats(const struct store *s, struct store_stats *out)
{
    *out = s->stats;
    out->cached_statements = out->cached_params = 0;
    for (size_t i = 0; i < STMT_CACHE_SIZE; i++) {
        out->cached_statements += s->cache[i].stmt != NULL;
        out->cached_params += s->cache[i].params;
    }
}
