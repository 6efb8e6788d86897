/* identity_changes.c: the database's record of credential, membership and grant changes
 * (sql/0021), through which every host's authentication caches learn of a change made
 * elsewhere (identity.h). */
#include "auth/identity.h"

#include <stdlib.h>

/* Rows kept behind the newest: a reader only compares the newest id with the one it saw. */
#define CHANGES_KEPT 100

int identity_changes_note(struct store *store, struct purser_error *err)
{
    unsigned long long id = 0;
    int rc = store_exec(store, "INSERT INTO auth_changes () VALUES ()", NULL, 0, NULL, &id, err);
    if (!rc && id > CHANGES_KEPT && id % CHANGES_KEPT == 0) { /* now and then, the old ones */
        struct store_value p[] = {STORE_INT((long long)(id - CHANGES_KEPT))};
        rc = store_exec(store, "DELETE FROM auth_changes WHERE id < ?", p, 1, NULL, NULL, err);
    }
    return rc;
}

int identity_changes_newest(struct store *store, struct arena *arena, long long *newest,
                            struct purser_error *err)
{
    struct store_rows rows;
    const char *cell;
    int rc = store_query(store, arena, &rows, "SELECT COALESCE(MAX(id), 0) FROM auth_changes", NULL,
                         0, err);
    if (!rc) {
        cell = store_cell(&rows, 0, 0);
        *newest = cell ? atoll(cell) : 0;
    }
    return rc;
}
