/* identity_principal_write.c: changing and deleting users and clients (Chef's PUT, a merge
 * patch, DELETE), each conditional on the revision when the caller names one (If-Match), and
 * the server admin switch. */
#include "auth/identity.h"
#include "auth/identity_private.h"

#include "codec/merge_patch.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

int identity_principal_extras(const json_t *body, struct principal_extras *x,
                              struct purser_error *err)
{
    const json_t *sub = json_object_get(body, "sub_kind"), *exp = json_object_get(body, "expires");
    long long when;
    int rc = 0;
    memset(x, 0, sizeof(*x));
    x->sub_kind_given = sub != NULL;
    x->expires_given = exp != NULL;
    if (sub && !json_is_null(sub)) {
        rc = resource_sub_kind_check("Field 'sub_kind'", sub, err);
        if (!rc)
            x->sub_kind = json_string_value(sub);
    }
    if (!rc && exp && !json_is_null(exp)) {
        rc = resource_expires_parse("Field 'expires'", json_string_value(exp), x->expires, &when,
                                    err);
        if (!rc && when <= (long long)time(NULL))
            rc = purser_error_set(err, PURSER_EINVAL,
                                  "Field 'expires' invalid: %s UTC is in the past", x->expires);
    }
    return rc;
}

/* A user's profile fields given in body, into the batch. */
static int profile_fields(const json_t *body, long long id, struct identity_batch *batch,
                          struct purser_error *err)
{
    static const char *const fields[] = {"display_name", "first_name", "last_name", "email"};
    static const char *const sql[] = {"UPDATE principals SET display_name = ? WHERE id = ?",
                                      "UPDATE principals SET first_name = ? WHERE id = ?",
                                      "UPDATE principals SET last_name = ? WHERE id = ?",
                                      "UPDATE principals SET email = ? WHERE id = ?"};
    int rc = 0;
    for (size_t i = 0; i < 4 && !rc; i++) {
        const char *value;
        rc = identity_field_string(body, fields[i], &value, err);
        if (!rc && value)
            identity_batch_add(batch, sql[i],
                               (struct store_value[]){STORE_STR(value), STORE_INT(id)}, 2);
    }
    return rc;
}

/* What else body gives (active, validator, labels, sub_kind, expires), into the batch; *labels
 * holds the labels' text until the batch has run. */
static int other_fields(const json_t *body, const char *org, long long id,
                        struct identity_batch *batch, char **labels, struct principal_extras *x,
                        struct purser_error *err)
{
    const json_t *active = json_object_get(body, "active");
    const json_t *validator = org ? json_object_get(body, "validator") : NULL;
    int rc;
    if (active && !json_is_boolean(active))
        return identity_invalid(err, "active");
    if (validator && !json_is_boolean(validator))
        return identity_invalid(err, "validator");
    rc = identity_principal_extras(body, x, err);
    if (!rc)
        rc = identity_labels(body, labels, err);
    if (!rc) {
        if (active)
            identity_batch_add(
                batch, "UPDATE principals SET active = ? WHERE id = ?",
                (struct store_value[]){STORE_INT(json_is_true(active)), STORE_INT(id)}, 2);
        if (*labels)
            identity_batch_add(batch, "UPDATE principals SET labels = ? WHERE id = ?",
                               (struct store_value[]){STORE_STR(*labels), STORE_INT(id)}, 2);
        if (validator)
            identity_batch_add(
                batch, "UPDATE principals SET validator = ? WHERE id = ?",
                (struct store_value[]){STORE_INT(json_is_true(validator)), STORE_INT(id)}, 2);
        if (x->sub_kind_given)
            identity_batch_add(
                batch, "UPDATE principals SET sub_kind = ? WHERE id = ?",
                (struct store_value[]){x->sub_kind ? STORE_STR(x->sub_kind) : STORE_NULLV,
                                       STORE_INT(id)},
                2);
        if (x->expires_given)
            identity_batch_add(
                batch, "UPDATE principals SET expires_at = ? WHERE id = ?",
                (struct store_value[]){x->expires[0] ? STORE_STR(x->expires) : STORE_NULLV,
                                       STORE_INT(id)},
                2);
    }
    return rc;
}

/* Writes the fields body gives, in one transaction, conditional on if_match. Every field is
 * checked before anything is written. */
static int principal_write(struct store *store, const char *actor, struct arena *arena,
                           const char *org, const char *name, const json_t *body,
                           const char *if_match, struct purser_error *err)
{
    struct identity_row row = {.table = IDENTITY_ROW_PRINCIPAL,
                               .kind = org ? "Client" : "User",
                               .name = name,
                               .if_match = if_match};
    struct identity_batch batch = {
        .actor = actor, .kind = org ? "client" : "user", .name = name, .op = "put", .row = &row};
    struct principal_extras x;
    const char *new_name;
    char *labels = NULL;
    int rc;

    rc = identity_require_object(body, err);
    if (!rc)
        rc = identity_field_string(body, org ? "name" : "username", &new_name, err);
    if (!rc)
        rc = identity_principal_id(store, arena, org, name, &batch.principal_id, err);
    if (!rc && new_name && strcmp(new_name, name) != 0)
        rc = purser_error_set(err, PURSER_EINVAL,
                              "Field '%s' cannot be changed (renaming is not supported)",
                              org ? "name" : "username");
    if (!rc) {
        row.key[0] = (struct store_value)STORE_INT(batch.principal_id);
        if (!org)
            rc = profile_fields(body, batch.principal_id, &batch, err);
    }
    if (!rc) {
        if (!(rc = other_fields(body, org, batch.principal_id, &batch, &labels, &x, err)) &&
            (batch.count || if_match)) /* a condition alone is checked, and changes nothing */
            rc = identity_batch_run(store, &batch, err);
        free(labels);
    }
    return rc;
}

/* A merge patch of what GET shows (with labels and active): what it removes is emptied or
 * back to its default; the name, Chef's fixed fields and a client's roles stay. */
static int principal_target(const json_t *current, const json_t *patch, const char *org,
                            json_t **out, struct purser_error *err)
{
    static const char *const fixed[] = {"username", "name",       "clientname",
                                        "orgname",  "json_class", "chef_type"};
    static const char *const texts[] = {"display_name", "first_name", "last_name", "email"};
    static const char *const shown[] = {"roles", "policy_groups"}; /* a client's, shown only */
    json_t *target = merge_patch(current, patch);
    if (!(*out = target))
        return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
        if (!json_equal(json_object_get(target, fixed[i]), json_object_get(current, fixed[i])) &&
            json_object_get(current, fixed[i]))
            return purser_error_set(err, PURSER_EINVAL, "Field '%s' cannot be changed", fixed[i]);
    for (size_t i = 0; org && i < sizeof(shown) / sizeof(shown[0]); i++) {
        const json_t *now = json_object_get(current, shown[i]),
                     *then = json_object_get(target, shown[i]);
        if ((now || then) && !(now && then && json_equal(now, then)))
            return purser_error_set(err, PURSER_EINVAL,
                                    "Field '%s' cannot be changed: a client's roles are those it "
                                    "was made with",
                                    shown[i]);
    }
    for (size_t i = 0; !org && i < 4; i++)
        if (!json_object_get(target, texts[i]))
            json_object_set_new(target, texts[i], json_string(""));
    if (!json_object_get(target, "labels"))
        json_object_set_new(target, "labels", json_object());
    if (!json_object_get(target, "active"))
        json_object_set_new(target, "active", json_true());
    if (org && !json_object_get(target, "validator"))
        json_object_set_new(target, "validator", json_false());
    if (!json_object_get(target, "sub_kind"))
        json_object_set_new(target, "sub_kind", json_null());
    if (!json_object_get(target, "expires"))
        json_object_set_new(target, "expires", json_null());
    return 0;
}

/* A merge patch, computed from a revision and written on it: when another write came between
 * and the caller named no revision, it is computed again (at most 5 times). */
static int principal_merge(struct store *store, const char *actor, struct arena *arena,
                           const char *org, const char *name, const json_t *patch,
                           const char *if_match, struct purser_error *err)
{
    int rc = 0;
    if (!json_is_object(patch))
        return purser_error_set(err, PURSER_EINVAL, "a merge patch must be a JSON object");
    for (int attempt = 0; attempt < 5; attempt++) {
        json_t *current = NULL, *target = NULL;
        const char *revision;
        rc = identity_principal_shape(store, arena, org, name, 1, &current, &revision, err);
        if (!rc)
            rc = principal_target(current, patch, org, &target, err);
        if (!rc)
            rc = principal_write(store, actor, arena, org, name, target,
                                 if_match ? if_match : revision, err);
        json_decref(current);
        json_decref(target);
        if (rc != PURSER_ECOMPARE || if_match)
            break;
    }
    return rc;
}

int identity_principal_update(struct store *store, const char *actor, struct arena *arena,
                              const char *org, const char *name, const json_t *body,
                              struct identity_cond *cond, json_t **out, struct purser_error *err)
{
    const char *if_match = cond ? cond->if_match : NULL;
    int rc = cond && cond->merge
                 ? principal_merge(store, actor, arena, org, name, body, if_match, err)
                 : principal_write(store, actor, arena, org, name, body, if_match, err);
    *out = NULL;
    if (!rc)
        rc = identity_principal_get(store, arena, org, name, out, cond ? &cond->revision : NULL,
                                    err);
    return rc;
}

int identity_principal_delete(struct store *store, const char *actor, struct arena *arena,
                              const char *org, const char *name, const char *if_match, json_t **out,
                              struct purser_error *err)
{
    struct identity_row row = {.table = IDENTITY_ROW_PRINCIPAL,
                               .kind = org ? "Client" : "User",
                               .name = name,
                               .if_match = if_match};
    long long id;
    int rc = identity_principal_get(store, arena, org, name, out, NULL, err);
    if (!rc && !(rc = identity_principal_id(store, arena, org, name, &id, err))) {
        struct identity_batch batch = {.actor = actor,
                                       .principal_id = id,
                                       .kind = org ? "client" : "user",
                                       .name = name,
                                       .op = "delete",
                                       .row = &row};
        row.key[0] = (struct store_value)STORE_INT(id);
        identity_batch_add(&batch, "DELETE FROM principals WHERE id = ?",
                           (struct store_value[]){STORE_INT(id)}, 1);
        rc = identity_batch_run(store, &batch, err);
    }
    if (rc && *out) {
        json_decref(*out);
        *out = NULL;
    }
    return rc;
}

int identity_set_server_admin(struct store *store, const char *actor, const char *user, int admin,
                              struct purser_error *err)
{
    struct arena *arena = arena_new();
    struct identity_row row = {.table = IDENTITY_ROW_PRINCIPAL, .kind = "User", .name = user};
    long long id = 0;
    int rc = arena ? identity_principal_id(store, arena, NULL, user, &id, err)
                   : purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    if (!rc) {
        struct identity_batch batch = {.actor = actor,
                                       .principal_id = id,
                                       .kind = "user",
                                       .name = user,
                                       .op = "put",
                                       .row = &row};
        row.key[0] = (struct store_value)STORE_INT(id);
        identity_batch_add(&batch, "UPDATE principals SET server_admin = ? WHERE id = ?",
                           (struct store_value[]){STORE_INT(admin), STORE_INT(id)}, 2);
        rc = identity_batch_run(store, &batch, err);
    }
    arena_free(arena);
    return rc;
}
