/* store_private.h: what store.c and store_fetch.c share. */
#ifndef PURSER_STORE_PRIVATE_H
#define PURSER_STORE_PRIVATE_H

#include "store/store.h"

#include <jansson.h>
#include <mysql.h>

#define STMT_CACHE_SIZE 64

struct cached_stmt {
    char *sql; /* our copy of the statement's text (callers may build it in an arena) */
    size_t sql_len;
    int columns;        /* of its result, -1 until known */
    signed char *times; /* per column of the result: -1, or a DATETIME's digits of a second */
    size_t params;
    MYSQL_STMT *stmt;
    unsigned long last_used;
};

struct store {
    MYSQL *conn;          /* NULL while disconnected */
    int connected_before; /* a connection was made once: the next one is a reconnect */
    int in_txn;
    int causal_reads; /* database.causal_reads */
    int galera;       /* the server is a Galera node (@@wsrep_on, at connect) */
    int causal_due;   /* the request's causality wait is still to come */
    unsigned long clock;
    struct cached_stmt cache[STMT_CACHE_SIZE];
    struct store_stats stats;
    unsigned last_error;   /* the server's code for the most recent failure */
    const char *statement; /* the SQL being run (placeholders, never values), for the log */
    char *socket, *host, *user, *password_file, *name;
    unsigned port, connect_timeout;
    unsigned long max_packet; /* the server's max_allowed_packet for this connection; 0: unknown */
    json_t *notices;          /* what the open transaction leaves for after its commit */
    void (*commit_hook)(void *ctx, const json_t *notices);
    void *commit_ctx;
    int (*txn_last)(struct store *store, void *ctx, struct purser_error *err); /* txn_end */
    void (*txn_committed)(void *ctx);
    void *txn_ctx;
};

/* Rows handed one at a time to fn (store_query_each). */
struct row_sink {
    int (*fn)(void *ctx, const struct store_rows *row, struct purser_error *err);
    void *ctx;
};

/* The failure of a statement: its own error, else the connection's, else a lost connection. */
int store_stmt_failed(struct store *s, MYSQL_STMT *stmt, struct purser_error *err);

/* Reads the result's rows into out, their cells in arena; with a sink, each row instead goes
 * to the sink alone (out->count 1), its cells in an arena of its own freed after the call. */
int store_fetch_all(struct store *s, MYSQL_STMT *stmt, struct cached_stmt *cached,
                    struct arena *arena, struct store_rows *out, const struct row_sink *sink,
                    struct purser_error *err);

#endif
