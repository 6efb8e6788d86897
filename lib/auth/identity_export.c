/* identity_export.c: an organization's users and clients as an export carries them (issue 13:
 * identity_transfer.c asks here for an export rather than reading the tables itself). */
#include "auth/identity.h"
#include "auth/identity_private.h"

#include <stdlib.h>
#include <string.h>

/* The public keys of the organization's members and clients, in one query:
 * {"principal id": [{name, public_key, expiration_date}]}. */
static int keys_export(struct store *store, struct arena *arena, long long oid, json_t **out,
                       struct purser_error *err)
{
    struct store_rows rows;
    struct store_value p[] = {STORE_INT(oid), STORE_INT(oid)};
    int rc = store_query(store, arena, &rows,
                         "SELECT principal_id, name, public_key, expires_at FROM principal_keys"
                         " WHERE principal_id IN (SELECT principal_id FROM memberships WHERE"
                         " org_id = ?) OR principal_id IN (SELECT id FROM principals WHERE kind ="
                         " 'client' AND org_id = ?) ORDER BY principal_id, name",
                         p, 2, err);
    *out = json_object();
    for (size_t i = 0; !rc && i < rows.count; i++) {
        json_t *list = json_object_get(*out, store_cell(&rows, i, 0));
        if (!list)
            json_object_set_new(*out, store_cell(&rows, i, 0), list = json_array());
        json_array_append_new(list,
                              identity_key_json(store_cell(&rows, i, 1), store_cell(&rows, i, 2),
                                                store_cell(&rows, i, 3)));
    }
    return rc;
}

/* The keys of principal id from keys_export's answer (a new reference; [] when none). */
static json_t *keys_of(const json_t *keys, const char *id)
{
    json_t *list = json_object_get(keys, id);
    return list ? json_incref(list) : json_array();
}

/* sub_kind and expires (columns col, col + 1) into principal, when set (an export of a
 * principal without them reads as before). */
static void lifetime_add(json_t *principal, const struct store_rows *rows, size_t i, size_t col)
{
    const char *sub_kind = store_cell(rows, i, col), *expires = store_cell(rows, i, col + 1);
    if (sub_kind)
        json_object_set_new(principal, "sub_kind", json_string(sub_kind));
    if (expires)
        json_object_set_new(principal, "expires", json_string(expires));
}

int identity_org_principals(struct store *store, struct arena *arena, const char *org,
                            json_t **members, json_t **clients, struct purser_error *err)
{
    struct store_rows users, rows;
    long long oid;
    json_t *keys = NULL;
    int rc = identity_org_id(store, arena, org, &oid, err);
    *members = json_array();
    *clients = json_array();
    if (!rc)
        rc = keys_export(store, arena, oid, &keys, err);
    if (!rc) {
        struct store_value id = STORE_INT(oid);
        rc = store_query(
            store, arena, &users,
            "SELECT p.id, p.name, p.display_name, p.first_name, p.last_name, "
            "p.email, p.labels, p.active, GROUP_CONCAT(m.role ORDER BY m.role "
            "SEPARATOR ','), GROUP_CONCAT(CONCAT(m.role, '=', m.policy_groups) "
            "ORDER BY m.role SEPARATOR ';'), p.sub_kind, " STORE_ISO_TIME(
                "p.expires_at") " FROM principals p JOIN memberships m ON "
                                "m.principal_id = "
                                "p.id WHERE m.org_id = ? AND p.kind = 'user' AND (p.expires_at IS "
                                "NULL "
                                "OR p.expires_at > NOW(6)) GROUP BY p.id ORDER BY p.name",
            &id, 1, err);
    }
    for (size_t i = 0; !rc && i < users.count; i++) {
        json_t *member = json_pack(
            "{s:s, s:o, s:o*, s:{s:s, s:s, s:s, s:s, s:o, s:b, s:o}}", "name",
            store_cell(&users, i, 1), "roles", identity_split_groups(store_cell(&users, i, 8)),
            "policy_groups", identity_limited_roles(store_cell(&users, i, 9)), "user",
            "display_name", store_cell(&users, i, 2), "first_name", store_cell(&users, i, 3),
            "last_name", store_cell(&users, i, 4), "email", store_cell(&users, i, 5), "labels",
            identity_labels_value(store_cell(&users, i, 6)), "active",
            strcmp(store_cell(&users, i, 7), "1") == 0, "keys",
            keys_of(keys, store_cell(&users, i, 0)));
        lifetime_add(json_object_get(member, "user"), &users, i, 10);
        json_array_append_new(*members, member);
    }
    if (!rc) { /* not the organization's own validator: every organization gets one */
        struct store_value p[] = {
            STORE_INT(oid), STORE_STR(arena_concat(arena, org, "-validator", (const char *)NULL))};
        rc = store_query(
            store, arena, &rows,
            "SELECT p.id, p.name, p.validator, p.labels, p.active, p.sub_kind, " STORE_ISO_TIME(
                "p.expires_at") ", GROUP_CONCAT(m.role ORDER BY m.role SEPARATOR ','), "
                                "GROUP_CONCAT(CONCAT(m.role, '=', m.policy_groups) ORDER BY m.role "
                                "SEPARATOR ';') FROM principals p LEFT JOIN memberships m ON "
                                "m.principal_id = p.id AND m.org_id = p.org_id WHERE p.kind = "
                                "'client' AND p.org_id = ? AND p.name <> ? AND (p.expires_at IS "
                                "NULL OR p.expires_at > NOW(6)) GROUP BY p.id ORDER BY p.name",
            p, 2, err);
    }
    for (size_t i = 0; !rc && i < rows.count; i++) {
        int validator = strcmp(store_cell(&rows, i, 2), "1") == 0;
        const char *roles = store_cell(&rows, i, 7);
        json_t *client = json_pack("{s:s, s:b, s:o, s:b, s:o, s:o*}", "name",
                                   store_cell(&rows, i, 1), "validator", validator, "labels",
                                   identity_labels_value(store_cell(&rows, i, 3)), "active",
                                   strcmp(store_cell(&rows, i, 4), "1") == 0, "keys",
                                   keys_of(keys, store_cell(&rows, i, 0)), "policy_groups",
                                   identity_limited_roles(store_cell(&rows, i, 8)));
        /* its roles when they are not the one its creation gives (validator or node), so that
         * an export of clients made as Chef makes them reads as before */
        if (!roles || strcmp(roles, validator ? "validator" : "node"))
            json_object_set_new(client, "roles", identity_split_groups(roles));
        lifetime_add(client, &rows, i, 5);
        json_array_append_new(*clients, client);
    }
    json_decref(keys);
    if (rc) {
        json_decref(*members);
        json_decref(*clients);
        *members = *clients = NULL;
    }
    return rc;
}
