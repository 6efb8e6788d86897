/* identity_export.c: an organization's users and clients as an export carries them (issue 13:
 * lib/transfer asks here rather than reading the identity tables itself). */
#include "auth/identity.h"
#include "auth/identity_private.h"

#include <stdlib.h>
#include <string.h>

/* A principal's public keys: [{name, public_key, expiration_date}]. */
static int keys_export(struct store *store, struct arena *arena, const char *principal_id,
                       json_t **out, struct purser_error *err)
{
    struct store_rows rows;
    struct store_value p = STORE_STR(principal_id);
    int rc = store_query(store, arena, &rows,
                         "SELECT name, public_key, expires_at FROM principal_keys WHERE "
                         "principal_id = ? ORDER BY name",
                         &p, 1, err);
    *out = json_array();
    for (size_t i = 0; !rc && i < rows.count; i++)
        json_array_append_new(*out,
                              json_pack("{s:s, s:s, s:o}", "name", store_cell(&rows, i, 0),
                                        "public_key", store_cell(&rows, i, 1), "expiration_date",
                                        identity_expiration_json(store_cell(&rows, i, 2))));
    return rc;
}

int identity_org_principals(struct store *store, struct arena *arena, const char *org,
                            json_t **members, json_t **clients, struct purser_error *err)
{
    struct store_rows users, rows;
    long long oid;
    int rc = identity_org_id(store, arena, org, &oid, err);
    *members = json_array();
    *clients = json_array();
    if (!rc) {
        struct store_value id = STORE_INT(oid);
        rc = store_query(store, arena, &users,
                         "SELECT p.id, p.name, p.display_name, p.first_name, p.last_name, "
                         "p.email, p.labels, p.active, GROUP_CONCAT(m.role ORDER BY m.role "
                         "SEPARATOR ',') FROM principals p JOIN memberships m ON m.principal_id = "
                         "p.id WHERE m.org_id = ? AND p.kind = 'user' GROUP BY p.id ORDER BY "
                         "p.name",
                         &id, 1, err);
    }
    for (size_t i = 0; !rc && i < users.count; i++) {
        json_t *keys, *roles = json_array();
        char *list = arena_strdup(arena, store_cell(&users, i, 8)), *save = NULL;
        for (char *r = list ? strtok_r(list, ",", &save) : NULL; r; r = strtok_r(NULL, ",", &save))
            json_array_append_new(roles, json_string(r));
        rc = keys_export(store, arena, store_cell(&users, i, 0), &keys, err);
        json_array_append_new(
            *members,
            json_pack("{s:s, s:o, s:{s:s, s:s, s:s, s:s, s:o, s:b, s:o}}", "name",
                      store_cell(&users, i, 1), "roles", roles, "user", "display_name",
                      store_cell(&users, i, 2), "first_name", store_cell(&users, i, 3), "last_name",
                      store_cell(&users, i, 4), "email", store_cell(&users, i, 5), "labels",
                      identity_labels_value(store_cell(&users, i, 6)), "active",
                      strcmp(store_cell(&users, i, 7), "1") == 0, "keys", keys));
    }
    if (!rc) { /* not the organization's own validator: every organization gets one */
        struct store_value p[] = {
            STORE_INT(oid), STORE_STR(arena_concat(arena, org, "-validator", (const char *)NULL))};
        rc = store_query(store, arena, &rows,
                         "SELECT id, name, validator, labels, active FROM principals WHERE kind = "
                         "'client' AND org_id = ? AND name <> ? ORDER BY name",
                         p, 2, err);
    }
    for (size_t i = 0; !rc && i < rows.count; i++) {
        json_t *keys;
        rc = keys_export(store, arena, store_cell(&rows, i, 0), &keys, err);
        json_array_append_new(
            *clients, json_pack("{s:s, s:b, s:o, s:b, s:o}", "name", store_cell(&rows, i, 1),
                                "validator", strcmp(store_cell(&rows, i, 2), "1") == 0, "labels",
                                identity_labels_value(store_cell(&rows, i, 3)), "active",
                                strcmp(store_cell(&rows, i, 4), "1") == 0, "keys", keys));
    }
    if (rc) {
        json_decref(*members);
        json_decref(*clients);
        *members = *clients = NULL;
    }
    return rc;
}
