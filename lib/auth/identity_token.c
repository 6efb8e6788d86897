/* identity_token.c: API tokens (bearer): made, listed, revoked; only their hashes are stored. */
#include "auth/identity.h"
#include "auth/identity_private.h"

#include "base/crypto.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* ---- tokens --------------------------------------------------------------------------------- */

int identity_token_insert(struct store *store, long long principal_id, const char *token,
                          const char *description, long long expires_in, char id_out[17],
                          struct purser_error *err)
{
    char hash[65], *id = crypto_random_hex(8);
    int rc;
    if (!id)
        return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    crypto_sha256_hex(hash, token, strlen(token));
    {
        struct store_value p[] = {STORE_STR(id), STORE_INT(principal_id), STORE_STR(hash),
                                  STORE_STR(description),
                                  expires_in > 0 ? STORE_INT(expires_in) : STORE_NULLV};
        /* expires_at has no fraction of a second: now + expires_in is rounded up, so that the
         * token lives at least expires_in seconds and stops at the second its answer shows. */
        rc = store_exec(
            store,
            "INSERT INTO api_tokens (id, principal_id, token_sha256, description, expires_at)"
            " VALUES (?, ?, ?, ?, UTC_TIMESTAMP() + INTERVAL ? SECOND"
            " + INTERVAL (MICROSECOND(UTC_TIMESTAMP(6)) > 0) SECOND)",
            p, 5, NULL, NULL, err);
    }
    snprintf(id_out, 17, "%s", id);
    free(id);
    return rc;
}

struct new_token {
    long long principal_id;
    const char *token, *description;
    long long expires_in;
    char *id; /* [17] */
};

static int txn_token_create(struct store *store, void *ctx, struct purser_error *err)
{
    struct new_token *t = ctx;
    int rc = identity_token_insert(store, t->principal_id, t->token, t->description, t->expires_in,
                                   t->id, err);
    return rc ? rc : identity_principal_events(store, t->principal_id, "token", t->id, "put", err);
}

int identity_token_create(struct store *store, long long principal_id, const json_t *body,
                          json_t **out, struct purser_error *err)
{
    const char *description = NULL;
    const json_t *expires_in = json_object_get(body, "expires_in");
    char *token = NULL, id[17];
    struct arena *arena = NULL;
    struct store_rows rows;
    int rc;

    if (body && (rc = identity_require_object(body, err)))
        return rc;
    if (body && (rc = identity_field_string(body, "description", &description, err)))
        return rc;
    if (description && strlen(description) > 1023)
        return identity_invalid(err, "description");
    if (expires_in && !json_is_null(expires_in) &&
        (!json_is_integer(expires_in) || json_integer_value(expires_in) <= 0 ||
         json_integer_value(expires_in) > 10LL * 366 * 86400))
        return identity_invalid(err, "expires_in");
    token = crypto_new_token();
    arena = arena_new();
    if (!token || !arena) {
        rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
        goto cleanup;
    }
    {
        struct new_token t = {principal_id, token, description ? description : "",
                              json_is_integer(expires_in) ? json_integer_value(expires_in) : 0, id};
        rc = store_txn(store, 0, txn_token_create, &t, err);
    }
    if (!rc) {
        struct store_value p = STORE_STR(id);
        rc = store_query(
            store, arena, &rows,
            "SELECT " STORE_ISO_TIME(
                "created_at") ","
                              " " STORE_ISO_TIME("expires_at") " FROM api_tokens WHERE id = ?",
            &p, 1, err);
    }
    if (!rc)
        *out = json_pack(
            "{s:s, s:s, s:s, s:s, s:o}", "id", id, "token", token, "description",
            description ? description : "", "created_at", store_cell(&rows, 0, 0), "expires_at",
            store_cell(&rows, 0, 1) ? json_string(store_cell(&rows, 0, 1)) : json_null());
cleanup:
    crypto_free_secret(token);
    arena_free(arena);
    return rc;
}

static json_t *optional_string(const char *s)
{
    return s ? json_string(s) : json_null();
}

int identity_token_list(struct store *store, struct arena *arena, long long principal_id,
                        json_t **out, struct purser_error *err)
{
    struct store_rows rows;
    struct store_value p = STORE_INT(principal_id);
    int rc = store_query(
        store, arena, &rows,
        "SELECT id, description, " STORE_ISO_TIME(
            "created_at") ","
                          " " STORE_ISO_TIME(
                              "expires_at") ","
                                            " " STORE_ISO_TIME(
                                                "last_used_at") ", active"
                                                                " FROM api_tokens WHERE "
                                                                "principal_id = ? ORDER BY "
                                                                "created_at, id",
        &p, 1, err);
    if (rc)
        return rc;
    *out = json_array();
    for (size_t i = 0; i < rows.count; i++)
        json_array_append_new(
            *out, json_pack("{s:s, s:s, s:b, s:s, s:o, s:o}", "id", store_cell(&rows, i, 0),
                            "description", store_cell(&rows, i, 1), "active",
                            strcmp(store_cell(&rows, i, 5), "1") == 0, "created_at",
                            store_cell(&rows, i, 2), "expires_at",
                            optional_string(store_cell(&rows, i, 3)), "last_used_at",
                            optional_string(store_cell(&rows, i, 4))));
    return 0;
}

int identity_token_update(struct store *store, struct arena *arena, long long principal_id,
                          const char *id, const json_t *body, json_t **out,
                          struct purser_error *err)
{
    const json_t *active = json_object_get(body, "active");
    const char *key;
    const json_t *v;
    json_t *all;
    size_t i;
    int rc;
    *out = NULL;
    if ((rc = identity_require_object(body, err)))
        return rc;
    json_object_foreach ((json_t *)body, key, v)
        if (strcmp(key, "active") != 0)
            return purser_error_set(err, PURSER_EINVAL,
                                    "Field '%.80s' cannot be changed (a token's active only)", key);
    if (active && !json_is_boolean(active))
        return identity_invalid(err, "active");
    if (active) {
        struct identity_batch batch = {
            .principal_id = principal_id, .kind = "token", .name = id, .op = "put"};
        identity_batch_add(&batch,
                           "UPDATE api_tokens SET active = ? WHERE id = ? AND principal_id = ?",
                           (struct store_value[]){STORE_INT(json_is_true(active)), STORE_STR(id),
                                                  STORE_INT(principal_id)},
                           3);
        if ((rc = identity_batch_run(store, &batch, err)))
            return rc;
    }
    if ((rc = identity_token_list(store, arena, principal_id, &all, err)))
        return rc;
    json_array_foreach (all, i, v)
        if (strcmp(json_string_value(json_object_get(v, "id")), id) == 0)
            *out = json_incref((json_t *)v);
    json_decref(all);
    return *out ? 0 : purser_error_set(err, PURSER_ENOTFOUND, "token '%s' not found", id);
}

int identity_token_delete(struct store *store, long long principal_id, const char *id,
                          struct purser_error *err)
{
    struct identity_batch batch = {
        .principal_id = principal_id, .kind = "token", .name = id, .op = "delete"};
    int rc;
    identity_batch_add(&batch, "DELETE FROM api_tokens WHERE id = ? AND principal_id = ?",
                       (struct store_value[]){STORE_STR(id), STORE_INT(principal_id)}, 2);
    rc = identity_batch_run(store, &batch, err);
    if (!rc && batch.affected == 0)
        return purser_error_set(err, PURSER_ENOTFOUND, "token '%s' not found", id);
    return rc;
}
