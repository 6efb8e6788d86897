/* identity_token.c: API tokens (bearer): made, listed, revoked; only their hashes are stored. */
#include "auth/identity.h"
#include "auth/identity_private.h"

#include "base/crypto.h"
#include "codec/merge_patch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* ---- tokens --------------------------------------------------------------------------------- */

int identity_token_insert(struct store *store, long long principal_id, const char *token,
                          const char *description, long long expires_in, char id_out[17],
                          struct purser_error *err)
{
    char hash[65], *id = crypto_random_hex(8), *revision = crypto_random_hex(8);
    int rc = 0;
    if (!id || !revision)
        rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    crypto_sha256_hex(hash, token, strlen(token));
    if (!rc) {
        struct store_value p[] = {STORE_STR(id),
                                  STORE_INT(principal_id),
                                  STORE_STR(hash),
                                  STORE_STR(description),
                                  expires_in > 0 ? STORE_INT(expires_in) : STORE_NULLV,
                                  STORE_STR(revision)};
        /* expires_at has no fraction of a second: now + expires_in is rounded up, so that the
         * token lives at least expires_in seconds and stops at the second its answer shows. */
        rc = store_exec(store,
                        "INSERT INTO api_tokens (id, principal_id, token_sha256, description,"
                        " expires_at, revision) VALUES (?, ?, ?, ?, UTC_TIMESTAMP() + INTERVAL ?"
                        " SECOND + INTERVAL (MICROSECOND(UTC_TIMESTAMP(6)) > 0) SECOND, ?)",
                        p, 6, NULL, NULL, err);
        snprintf(id_out, 17, "%s", id);
    }
    free(id);
    free(revision);
    return rc;
}

struct new_token {
    const char *actor;
    long long principal_id;
    const char *token, *description;
    long long expires_in;
    const char *labels, *sub_kind; /* or NULL */
    char *id;                      /* [17] */
};

static int txn_token_create(struct store *store, void *ctx, struct purser_error *err)
{
    struct new_token *t = ctx;
    int rc = identity_token_insert(store, t->principal_id, t->token, t->description, t->expires_in,
                                   t->id, err);
    if (!rc && (t->labels || t->sub_kind)) {
        struct store_value p[] = {t->labels ? STORE_STR(t->labels) : STORE_NULLV,
                                  t->sub_kind ? STORE_STR(t->sub_kind) : STORE_NULLV,
                                  STORE_STR(t->id)};
        rc = store_exec(store, "UPDATE api_tokens SET labels = ?, sub_kind = ? WHERE id = ?", p, 3,
                        NULL, NULL, err);
    }
    if (!rc)
        rc =
            identity_principal_events(store, t->actor, t->principal_id, "token", t->id, "put", err);
    return rc;
}

int identity_token_create(struct store *store, const char *actor, long long principal_id,
                          const json_t *body, json_t **out, struct purser_error *err)
{
    const char *description = NULL;
    const json_t *expires_in = json_object_get(body, "expires_in");
    const json_t *sub_kind = json_object_get(body, "sub_kind");
    char *token = NULL, *labels = NULL, id[17];
    struct arena *arena = NULL;
    struct store_rows rows;
    int rc = 0;

    if (body && (rc = identity_require_object(body, err)))
        goto cleanup;
    if (body && (rc = identity_field_string(body, "description", &description, err)))
        goto cleanup;
    if (sub_kind && !json_is_null(sub_kind) &&
        (rc = resource_sub_kind_check("Field 'sub_kind'", sub_kind, err)))
        goto cleanup;
    if (description && strlen(description) > 1023) {
        rc = identity_invalid(err, "description");
        goto cleanup;
    }
    if (expires_in && !json_is_null(expires_in) &&
        (!json_is_integer(expires_in) || json_integer_value(expires_in) <= 0 ||
         json_integer_value(expires_in) > 10LL * 366 * 86400)) {
        rc = identity_invalid(err, "expires_in");
        goto cleanup;
    }
    if ((rc = identity_labels(body, &labels, err)))
        goto cleanup;
    token = crypto_new_token();
    arena = arena_new();
    if (!token || !arena) {
        rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
        goto cleanup;
    }
    {
        struct new_token t = {actor,
                              principal_id,
                              token,
                              description ? description : "",
                              json_is_integer(expires_in) ? json_integer_value(expires_in) : 0,
                              labels,
                              json_string_value(sub_kind),
                              id};
        if ((rc = store_txn(store, 0, txn_token_create, &t, err)))
            goto cleanup;
    }
    {
        struct store_value p = STORE_STR(id);
        if ((rc = store_query(
                 store, arena, &rows,
                 "SELECT " STORE_ISO_TIME(
                     "created_at") ","
                                   " " STORE_ISO_TIME("expires_at") " FROM api_tokens WHERE id = ?",
                 &p, 1, err)))
            goto cleanup;
    }
    *out = json_pack("{s:s, s:s, s:s, s:s, s:o}", "id", id, "token", token, "description",
                     description ? description : "", "created_at", store_cell(&rows, 0, 0),
                     "expires_at",
                     store_cell(&rows, 0, 1) ? json_string(store_cell(&rows, 0, 1)) : json_null());
cleanup:
    crypto_free_secret(token);
    free(labels);
    arena_free(arena);
    return rc;
}

static json_t *optional_string(const char *s)
{
    return s ? json_string(s) : json_null();
}

/* The tokens of a principal as listed, newest last (an expired one is gone), in these columns;
 * id (NULL: all) one only. */
enum {
    T_ID,
    T_DESCRIPTION,
    T_CREATED,
    T_EXPIRES,
    T_USED,
    T_ACTIVE,
    T_LABELS,
    T_SUB_KIND,
    T_REV,
    T_PROVIDER
};
static int token_rows(struct store *store, struct arena *arena, long long principal_id,
                      const char *id, struct store_rows *rows, struct purser_error *err)
{
    struct store_value p[] = {STORE_INT(principal_id), STORE_INT(id != NULL),
                              STORE_STR(id ? id : "")};
    return store_query(
        store, arena, rows,
        "SELECT id, description, " STORE_ISO_TIME("created_at") ", " STORE_ISO_TIME(
            "expires_at") ", " STORE_ISO_TIME("last_used_at") ", active, labels,"
                                                              " sub_kind, revision,"
                                                              " (SELECT i.name FROM"
                                                              " identity_providers i"
                                                              " WHERE i.id ="
                                                              " api_tokens.provider_id)"
                                                              " FROM api_tokens"
                                                              " WHERE principal_id"
                                                              " = ? AND (expires_at"
                                                              " IS NULL OR"
                                                              " expires_at >"
                                                              " NOW(6)) AND (? = 0"
                                                              " OR id = ?) ORDER BY"
                                                              " created_at, id",
        p, 3, err);
}

static json_t *token_json(const struct store_rows *rows, size_t i)
{
    json_t *t = json_pack("{s:s, s:s, s:b, s:s, s:o, s:o, s:o}", "id", store_cell(rows, i, T_ID),
                          "description", store_cell(rows, i, T_DESCRIPTION), "active",
                          strcmp(store_cell(rows, i, T_ACTIVE), "1") == 0, "created_at",
                          store_cell(rows, i, T_CREATED), "expires_at",
                          optional_string(store_cell(rows, i, T_EXPIRES)), "last_used_at",
                          optional_string(store_cell(rows, i, T_USED)), "labels",
                          identity_labels_value(store_cell(rows, i, T_LABELS)));
    if (t && store_cell(rows, i, T_SUB_KIND))
        json_object_set_new(t, "sub_kind", json_string(store_cell(rows, i, T_SUB_KIND)));
    /* a sign-in's session (made by purser, never by the user): marked, as tctl marks them */
    if (t && store_cell(rows, i, T_PROVIDER))
        json_object_set_new(t, "session",
                            json_pack("{s:s}", "provider", store_cell(rows, i, T_PROVIDER)));
    return t;
}

int identity_token_list(struct store *store, struct arena *arena, long long principal_id,
                        const struct identity_list *narrow, json_t **out, struct purser_error *err)
{
    struct store_rows rows;
    struct identity_list l = {.principal_id = principal_id};
    const char **ids;
    size_t count;
    int rc;
    if (narrow)
        l.q = narrow->q;
    identity_expire(store, "token", principal_id, NULL); /* with their events */
    rc = identity_selection(&identity_token_kind, store, arena, &l, &ids, &count, err);
    if (!rc)
        rc = token_rows(store, arena, principal_id, NULL, &rows, err);
    if (!rc) {
        *out = json_array();
        for (size_t i = 0; i < rows.count; i++)
            if (identity_keep(ids, count, store_cell(&rows, i, T_ID)))
                json_array_append_new(*out, token_json(&rows, i));
    }
    return rc;
}

/* A token's labels after the merge patch (labels_patch), as text in *text (malloc'd), and the
 * revision they were merged on in *revision (arena; NULL when there is no such token). */
static int merged_labels(struct store *store, struct arena *arena, long long principal_id,
                         const char *id, const json_t *labels_patch, char **text,
                         const char **revision, struct purser_error *err)
{
    struct store_rows rows;
    json_t *stored = NULL, *merged = NULL, *wrapped;
    int rc = token_rows(store, arena, principal_id, id, &rows, err);
    *revision = NULL;
    if (!rc && rows.count) {
        stored = identity_labels_value(store_cell(&rows, 0, T_LABELS));
        merged = merge_patch(stored, labels_patch);
        *revision = store_cell(&rows, 0, T_REV);
    }
    wrapped = json_pack("{s:o}", "labels", merged ? merged : json_object());
    if (!rc)
        rc = wrapped ? identity_labels(wrapped, text, err)
                     : purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    json_decref(stored);
    json_decref(wrapped);
    return rc;
}

/* The batch that writes (op "put") or deletes one token, with its row's condition. */
static void token_batch(struct identity_row *row, struct identity_batch *batch,
                        long long principal_id, const char *id, const char *if_match,
                        const char *op)
{
    *row = (struct identity_row){.table = IDENTITY_ROW_TOKEN,
                                 .key = {STORE_STR(id), STORE_INT(principal_id)},
                                 .kind = "Token",
                                 .name = id,
                                 .if_match = if_match};
    *batch = (struct identity_batch){
        .principal_id = principal_id, .kind = "token", .name = id, .op = op, .row = row};
}

/* A token's PATCH: {active, labels} (labels a merge patch of its labels), as a batch on the
 * revision given, or on the one the labels were merged with. */
static int token_write(struct store *store, const char *actor, struct arena *arena,
                       long long principal_id, const char *id, const json_t *body,
                       const char *if_match, struct purser_error *err)
{
    const json_t *active = json_object_get(body, "active"),
                 *patch = json_object_get(body, "labels");
    struct identity_row row;
    struct identity_batch batch;
    const char *merged_on = NULL;
    char *text = NULL;
    int rc =
        patch ? merged_labels(store, arena, principal_id, id, patch, &text, &merged_on, err) : 0;
    token_batch(&row, &batch, principal_id, id, if_match, "put");
    batch.actor = actor;
    if (!if_match)
        row.if_match = merged_on;
    if (!rc && text)
        identity_batch_add(
            &batch, "UPDATE api_tokens SET labels = ? WHERE id = ? AND principal_id = ?",
            (struct store_value[]){STORE_STR(text), STORE_STR(id), STORE_INT(principal_id)}, 3);
    if (!rc && active)
        identity_batch_add(&batch,
                           "UPDATE api_tokens SET active = ? WHERE id = ? AND principal_id = ?",
                           (struct store_value[]){STORE_INT(json_is_true(active)), STORE_STR(id),
                                                  STORE_INT(principal_id)},
                           3);
    if (!rc && (batch.count || if_match))
        rc = identity_batch_run(store, &batch, err);
    free(text);
    return rc;
}

int identity_token_update(struct store *store, const char *actor, struct arena *arena,
                          long long principal_id, const char *id, const json_t *body,
                          struct identity_cond *cond, json_t **out, struct purser_error *err)
{
    const json_t *active = json_object_get(body, "active"), *v;
    const char *key, *if_match = cond ? cond->if_match : NULL;
    struct store_rows rows;
    int rc;
    *out = NULL;
    rc = identity_require_object(body, err);
    if (!rc) {
        json_object_foreach ((json_t *)body, key, v)
            if (strcmp(key, "active") != 0 && strcmp(key, "labels") != 0)
                return purser_error_set(
                    err, PURSER_EINVAL,
                    "Field '%.80s' cannot be changed (a token's active and labels "
                    "only)",
                    key);
        if (active && !json_is_boolean(active))
            rc = identity_invalid(err, "active");
    }
    if (!rc && (v = json_object_get(body, "labels")) && !json_is_object(v))
        rc = identity_invalid(err, "labels");
    if (!rc) {
        for (int attempt = 0; attempt < 5; attempt++) { /* labels merged again after a race */
            rc = token_write(store, actor, arena, principal_id, id, body, if_match, err);
            if (rc != PURSER_ECOMPARE || if_match)
                break;
        }
        if (!rc)
            rc = token_rows(store, arena, principal_id, id, &rows, err);
    }
    if (!rc && rows.count == 0)
        rc = purser_error_set(err, PURSER_ENOTFOUND, "token '%s' not found", id);
    if (!rc) {
        if (cond)
            cond->revision = store_cell(&rows, 0, T_REV);
        *out = token_json(&rows, 0);
    }
    return rc;
}

int identity_token_delete(struct store *store, const char *actor, long long principal_id,
                          const char *id, const char *if_match, struct purser_error *err)
{
    struct identity_row row;
    struct identity_batch batch;
    int rc;
    token_batch(&row, &batch, principal_id, id, if_match, "delete");
    batch.actor = actor;
    identity_batch_add(&batch,
                       "DELETE FROM api_tokens WHERE id = ? AND principal_id = ? AND (expires_at"
                       " IS NULL OR expires_at > NOW(6))",
                       (struct store_value[]){STORE_STR(id), STORE_INT(principal_id)}, 2);
    rc = identity_batch_run(store, &batch, err);
    if (!rc && batch.affected == 0) {
        identity_expire(store, "token", principal_id,
                        id); /* an expired one: gone, with its event */
        return purser_error_set(err, PURSER_ENOTFOUND, "token '%s' not found", id);
    }
    return rc;
}
