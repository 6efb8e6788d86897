/* key_expiry.c: the next expiration date among the live Chef keys (GET /metrics). */
#include "auth/key_expiry.h"

#include <stdlib.h>

int key_expiry_next(struct store *store, long long *seconds_out, struct purser_error *err)
{
    struct arena *arena = arena_new();
    struct store_rows rows;
    const char *cell;
    int rc;

    *seconds_out = 0;
    if (!arena)
        return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    /* expires_at is UTC; not UNIX_TIMESTAMP(), which is NULL past 2038 on MariaDB 10.11 */
    rc = store_query(store, arena, &rows,
                     "SELECT COALESCE(TIMESTAMPDIFF(SECOND, '1970-01-01', MIN(expires_at)), 0)"
                     " FROM principal_keys WHERE expires_at > UTC_TIMESTAMP()",
                     NULL, 0, err);
    if (!rc && (cell = store_cell(&rows, 0, 0)))
        *seconds_out = strtoll(cell, NULL, 10);
    arena_free(arena);
    return rc;
}
