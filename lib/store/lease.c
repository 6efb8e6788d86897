/* lease.c: a named lease in the settings table (lease.h). */
#include "store/lease.h"

#include <stdio.h>

/* updated_at first: MariaDB evaluates ON DUPLICATE KEY UPDATE's assignments left to right,
 * each seeing the ones before it, so value follows whether updated_at was just renewed (set
 * explicitly: a renewal changes no value, and ON UPDATE CURRENT_TIMESTAMP would not fire). */
static const char take_sql[] =
    "INSERT INTO settings (name, value, updated_at) VALUES (?, ?, NOW(6)) ON DUPLICATE KEY "
    "UPDATE updated_at = IF(value = VALUES(value) OR updated_at <= NOW(6) - INTERVAL ? SECOND, "
    "NOW(6), updated_at), value = IF(updated_at = NOW(6), VALUES(value), value)";

int lease_take(struct store *store, const char *name, const char *holder, long seconds, int *held,
               struct purser_error *err)
{
    char key[200];
    unsigned long long affected = 0;
    int rc;
    snprintf(key, sizeof(key), "lease:%s", name);
    struct store_value p[] = {STORE_STR(key), STORE_STR(holder), STORE_INT(seconds)};
    rc = store_exec(store, take_sql, p, 3, &affected, NULL, err);
    *held = !rc && affected > 0;
    return rc;
}
