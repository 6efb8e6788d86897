/* store_fetch.c: the rows of a result, each cell as text (a DATETIME written here, as the
 * client library would, without its sprintf: a page of resources has hundreds). */
#include "store/store_private.h"

#include "base/arena.h"

#include <stdlib.h>
#include <string.h>

#define INLINE_CELL 512 /* bytes bound per column; longer cells are fetched again whole */

/* The shape of a statement's result, once: its number of columns, and which are DATETIME or
 * TIMESTAMP (bound as MYSQL_TIME, written by datetime_text) with their digits of a second
 * (none past 6, as the client library does). */
static int result_shape(struct cached_stmt *cached, MYSQL_STMT *stmt, struct purser_error *err)
{
    MYSQL_RES *meta = mysql_stmt_result_metadata(stmt);
    MYSQL_FIELD *fields = meta ? mysql_fetch_fields(meta) : NULL;
    size_t n = meta ? mysql_num_fields(meta) : 0;
    free(cached->times);
    if (!(cached->times = malloc(n ? n : 1))) {
        if (meta)
            mysql_free_result(meta);
        return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    }
    for (size_t c = 0; c < n; c++)
        cached->times[c] =
            fields[c].type == MYSQL_TYPE_DATETIME || fields[c].type == MYSQL_TYPE_TIMESTAMP
                ? (signed char)(fields[c].decimals <= 6 ? fields[c].decimals : 0)
                : -1;
    cached->columns = (int)n;
    if (meta)
        mysql_free_result(meta);
    return 0;
}

/* Writes digits of v, width wide with leading zeros, at out. */
static void digits(char *out, unsigned long v, int width)
{
    for (int i = width - 1; i >= 0; i--, v /= 10)
        out[i] = (char)('0' + v % 10);
}

/* "YYYY-MM-DD HH:MM:SS" and a fraction of `decimals` digits, as the client library writes a
 * DATETIME bound as text; its length. */
static size_t datetime_text(const MYSQL_TIME *t, int decimals, char *out)
{
    digits(out, t->year, 4);
    out[4] = '-';
    digits(out + 5, t->month, 2);
    out[7] = '-';
    digits(out + 8, t->day, 2);
    out[10] = ' ';
    digits(out + 11, t->hour, 2);
    out[13] = ':';
    digits(out + 14, t->minute, 2);
    out[16] = ':';
    digits(out + 17, t->second, 2);
    if (decimals > 0) {
        char fraction[6];
        digits(fraction, t->second_part, 6);
        out[19] = '.';
        memcpy(out + 20, fraction, (size_t)decimals);
    }
    out[decimals > 0 ? 20 + decimals : 19] = '\0';
    return decimals > 0 ? 20 + (size_t)decimals : 19;
}

/* store_fetch_all once the result's shape is known. */
static int fetch_rows(struct store *s, MYSQL_STMT *stmt, struct cached_stmt *cached,
                      struct arena *arena, struct store_rows *out, const struct row_sink *sink,
                      struct purser_error *err)
{
    struct arena *row_arena = NULL;
    size_t columns, cap = 0;
    MYSQL_BIND *binds = NULL;
    unsigned long *lengths = NULL;
    my_bool *nulls = NULL;
    char *buffers;
    int rc = 0, status;

    columns = (size_t)cached->columns;
    out->columns = columns;
    if (!columns)
        return 0;
    binds = arena_calloc(arena, columns, sizeof(*binds));
    lengths = arena_calloc(arena, columns, sizeof(*lengths));
    nulls = arena_calloc(arena, columns, sizeof(*nulls));
    buffers = arena_alloc(arena, columns * INLINE_CELL);
    if (!binds || !lengths || !nulls || !buffers)
        return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    for (size_t c = 0; c < columns; c++) {
        binds[c].buffer_type = cached->times[c] >= 0 ? MYSQL_TYPE_DATETIME : MYSQL_TYPE_STRING;
        binds[c].buffer = buffers + c * INLINE_CELL;
        binds[c].buffer_length = INLINE_CELL;
        binds[c].length = &lengths[c];
        binds[c].is_null = &nulls[c];
    }
    if (mysql_stmt_bind_result(stmt, binds))
        return store_stmt_failed(s, stmt, err);
    while ((status = mysql_stmt_fetch(stmt)) == 0 || status == MYSQL_DATA_TRUNCATED) {
        struct arena *cells_arena = arena;
        if (sink) { /* one row at a time */
            if (!(row_arena = arena_new())) {
                rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
                break;
            }
            cells_arena = row_arena;
            out->count = cap = 0;
        }
        if (out->count == cap) {
            size_t ncap = cap ? cap * 2 : 16;
            char **cells = arena_calloc(cells_arena, ncap * columns, sizeof(*cells));
            size_t *lens = arena_calloc(cells_arena, ncap * columns, sizeof(*lens));
            if (!cells || !lens) {
                rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
                break;
            }
            if (cap) {
                memcpy(cells, out->cells, cap * columns * sizeof(*cells));
                memcpy(lens, out->lengths, cap * columns * sizeof(*lens));
            }
            out->cells = cells;
            out->lengths = lens;
            cap = ncap;
        }
        for (size_t c = 0; c < columns && !rc; c++) {
            size_t at = out->count * columns + c;
            char *cell;
            if (nulls[c])
                continue;
            if (cached->times[c] >= 0) {
                if (!(cell = arena_alloc(cells_arena, sizeof("0000-00-00 00:00:00.000000")))) {
                    rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
                    break;
                }
                out->cells[at] = cell;
                out->lengths[at] =
                    datetime_text((const MYSQL_TIME *)(void *)(buffers + c * INLINE_CELL),
                                  cached->times[c], cell);
                continue;
            }
            if (!(cell = arena_alloc(cells_arena, lengths[c] + 1))) {
                rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
                break;
            }
            if (lengths[c] < INLINE_CELL) {
                memcpy(cell, buffers + c * INLINE_CELL, lengths[c]);
            } else {
                MYSQL_BIND one;
                memset(&one, 0, sizeof(one));
                one.buffer_type = MYSQL_TYPE_STRING;
                one.buffer = cell;
                one.buffer_length = lengths[c] + 1;
                if (mysql_stmt_fetch_column(stmt, &one, (unsigned)c, 0)) {
                    rc = store_stmt_failed(s, stmt, err);
                    break;
                }
            }
            cell[lengths[c]] = '\0';
            out->cells[at] = cell;
            out->lengths[at] = lengths[c];
        }
        if (rc)
            break;
        out->count++;
        if (sink) {
            rc = sink->fn(sink->ctx, out, err);
            arena_free(row_arena);
            row_arena = NULL;
            if (rc)
                break;
        }
    }
    arena_free(row_arena);
    if (sink)
        memset(out, 0, sizeof(*out));
    if (!rc && status == 1)
        rc = store_stmt_failed(s, stmt, err);
    if (s->conn)
        mysql_stmt_free_result(stmt);
    return rc;
}

int store_fetch_all(struct store *s, MYSQL_STMT *stmt, struct cached_stmt *cached,
                    struct arena *arena, struct store_rows *out, const struct row_sink *sink,
                    struct purser_error *err)
{
    int rc = 0;
    memset(out, 0, sizeof(*out));
    if (cached->columns < 0)
        rc = result_shape(cached, stmt, err);
    if (!rc)
        rc = fetch_rows(s, stmt, cached, arena, out, sink, err);
    return rc;
}
