/* identity_principal.c: users and clients, and their public keys, in Chef's shapes. */
#include "auth/identity.h"
#include "auth/identity_private.h"

#include "base/crypto.h"
#include "store/events.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int identity_principal_insert(struct store *store, struct new_principal *np,
                              struct purser_error *err)
{
    struct arena *arena = arena_new();
    long long oid = 0;
    unsigned long long id = 0;
    int rc = 0;

    if (!arena)
        return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    if (np->org)
        rc = identity_org_id(store, arena, np->org, &oid, err);
    char *revision = crypto_random_hex(8);
    if (!rc && !revision)
        rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    if (!rc) {
        struct store_value p[] = {STORE_STR(np->org ? "client" : "user"),
                                  np->org ? STORE_INT(oid) : STORE_NULLV,
                                  STORE_STR(np->name),
                                  STORE_STR(np->display_name ? np->display_name : ""),
                                  STORE_STR(np->first_name ? np->first_name : ""),
                                  STORE_STR(np->last_name ? np->last_name : ""),
                                  STORE_STR(np->email ? np->email : ""),
                                  STORE_INT(np->validator),
                                  np->labels ? STORE_STR(np->labels) : STORE_NULLV,
                                  STORE_STR(revision),
                                  np->sub_kind ? STORE_STR(np->sub_kind) : STORE_NULLV,
                                  np->expires[0] ? STORE_STR(np->expires) : STORE_NULLV};
        rc = store_exec(store,
                        "INSERT INTO principals (kind, org_id, name, display_name, first_name,"
                        " last_name, email, validator, labels, revision, sub_kind, expires_at)"
                        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        p, 12, NULL, &id, err);
        if (rc == PURSER_EEXISTS)
            rc = purser_error_set(err, PURSER_EEXISTS, "%s '%s' already exists",
                                  np->org ? "Client" : "User", np->name);
    }
    if (!rc && np->public_key) {
        struct store_value p[] = {STORE_INT((long long)id), STORE_STR(np->public_key)};
        rc = store_exec(store,
                        "INSERT INTO principal_keys (principal_id, name, public_key)"
                        " VALUES (?, 'default', ?)",
                        p, 2, NULL, NULL, err);
    }
    if (!rc && np->role) {
        struct store_value p[] = {STORE_INT(oid), STORE_INT((long long)id), STORE_STR(np->role),
                                  np->limit ? STORE_STR(np->limit) : STORE_NULLV};
        rc = store_exec(store,
                        "INSERT INTO memberships (org_id, principal_id, role, policy_groups)"
                        " VALUES (?, ?, ?, ?)",
                        p, 4, NULL, NULL, err);
    }
    np->id = (long long)id;
    free(revision);
    arena_free(arena);
    return rc;
}
int identity_client_credential(struct store *store, const char *org, const char *name,
                               const char *role, const char *limit, const char *public_key,
                               const char *bearer, const char *description, long long own_id,
                               long long *client_id, char token_id[17], struct purser_error *err)
{
    struct arena *arena = arena_new();
    struct store_rows rows;
    struct store_value who[] = {STORE_STR(org), STORE_STR(name)};
    int rc =
        arena ? store_query(store, arena, &rows,
                            "SELECT p.id FROM principals p JOIN organizations o ON o.id = "
                            "p.org_id WHERE p.kind = 'client' AND o.name = ? AND p.org_scope = o.id"
                            " AND p.name = ? FOR UPDATE",
                            who, 2, err)
              : purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    if (!rc && rows.count == 0) { /* a new client with the key and the role */
        struct new_principal np = {
            .org = org, .name = name, .public_key = public_key, .role = role, .limit = limit};
        rc = identity_principal_insert(store, &np, err);
        *client_id = np.id;
    } else if (!rc && atoll(store_cell(&rows, 0, 0)) != own_id) {
        rc = purser_error_set(err, PURSER_EEXISTS,
                              "a client named '%.80s' exists and is not this one's credential: "
                              "rename or delete it first",
                              name);
    } else if (!rc) { /* the client again: only the new key, and the role */
        struct store_value p = STORE_INT(atoll(store_cell(&rows, 0, 0)));
        *client_id = p.num;
        rc = store_exec(store, "DELETE FROM principal_keys WHERE principal_id = ?", &p, 1, NULL,
                        NULL, err);
        if (!rc)
            rc = store_exec(store, "DELETE FROM api_tokens WHERE principal_id = ?", &p, 1, NULL,
                            NULL, err);
        if (!rc) {
            struct store_value q[] = {p, STORE_STR(public_key)};
            rc = store_exec(store,
                            "INSERT INTO principal_keys (principal_id, name, public_key) VALUES "
                            "(?, 'default', ?)",
                            q, 2, NULL, NULL, err);
        }
        if (!rc) {
            /* the role limited as this credential's maker was (NULL: not) */
            struct store_value q[] = {p, STORE_STR(role), limit ? STORE_STR(limit) : STORE_NULLV,
                                      STORE_STR(org)};
            rc = store_exec(store,
                            "INSERT INTO memberships (org_id, principal_id, role, policy_groups)"
                            " SELECT o.id, ?, ?, ? FROM organizations o WHERE o.name = ?"
                            " ON DUPLICATE KEY UPDATE policy_groups = VALUES(policy_groups)",
                            q, 4, NULL, NULL, err);
        }
        if (!rc) { /* what its GET shows (its roles' limits) may have changed: a new ETag */
            struct identity_row row = {.table = IDENTITY_ROW_PRINCIPAL, .key = {p}};
            rc = identity_revision_bump(store, &row, err);
        }
    }
    if (!rc)
        rc = identity_token_insert(store, *client_id, bearer, description, 0, token_id, err);
    arena_free(arena);
    return rc;
}

int identity_client_remove(struct store *store, const char *actor, long long org_id,
                           long long client_id, struct purser_error *err)
{
    struct arena *arena = arena_new();
    struct store_rows client, tokens;
    struct store_value p[] = {STORE_INT(client_id), STORE_INT(org_id)};
    int rc = arena ? store_query(store, arena, &client,
                                 "SELECT name FROM principals WHERE id = ? AND org_id = ? AND "
                                 "kind = 'client' FOR UPDATE",
                                 p, 2, err)
                   : purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    if (!rc && client.count == 1)
        rc = store_query(store, arena, &tokens,
                         "SELECT id FROM api_tokens WHERE principal_id = ? ORDER BY id", p, 1, err);
    if (!rc && client.count == 1) /* its keys, tokens and memberships go with it (cascades) */
        rc = store_exec(store, "DELETE FROM principals WHERE id = ?", p, 1, NULL, NULL, err);
    if (!rc && client.count == 1)
        rc = event_append(store, actor, org_id, "client", store_cell(&client, 0, 0), "delete", NULL,
                          NULL, err);
    for (size_t i = 0; !rc && client.count == 1 && i < tokens.count; i++)
        rc = event_append(store, actor, org_id, "token", store_cell(&tokens, i, 0), "delete", NULL,
                          NULL, err);
    arena_free(arena);
    return rc;
}

/* ---- users and clients -------------------------------------------------------------------- */

/* The expired user (org NULL) or client of org named name, deleted with its event. */
static void principal_expire(struct store *store, const char *org, const char *name)
{
    struct arena *arena = arena_new();
    long long oid = 0;
    struct purser_error ignored;
    if (arena && (!org || !identity_org_id(store, arena, org, &oid, &ignored)))
        identity_expire(store, org ? "client" : "user", oid, name);
    arena_free(arena);
}

/* A user's link, or a client's of org */
static json_t *principal_uri(const struct links *links, const char *org, const char *name)
{
    return org ? link_url(links, LINK_CLIENT, org, name, NULL)
               : link_url(links, LINK_USER, name, NULL, NULL);
}

/* A live user or client (an expired one is gone), in these columns. */
#define LIVE " AND (p.expires_at IS NULL OR p.expires_at > NOW(6))"
enum {
    P_ID,
    P_NAME,
    P_DISPLAY,
    P_FIRST,
    P_LAST,
    P_EMAIL,
    P_VALIDATOR,
    P_ORG,
    P_LABELS,
    P_ACTIVE,
    P_REVISION,
    P_SUB_KIND,
    P_EXPIRES,
    P_LIMITS /* a client's limited roles in its organization, "role=patterns;..." */
};

static const char *principal_select(const char *org)
{
    return org ? "SELECT p.id, p.name, p.display_name, p.first_name, p.last_name, p.email,"
                 " p.validator, o.name, p.labels, p.active, p.revision, "
                 "p.sub_kind, " STORE_ISO_TIME(
                     "p.expires_at") ", (SELECT GROUP_CONCAT(CONCAT(m.role, '=', "
                                     "m.policy_groups) ORDER BY m.role SEPARATOR ';') FROM "
                                     "memberships m WHERE m.principal_id = p.id AND m.org_id = "
                                     "p.org_id) FROM principals p JOIN organizations o ON o.id ="
                                     " p.org_id WHERE p.kind = 'client' AND o.name = ? AND "
                                     "p.org_scope = o.id AND p.name = ?" LIVE
               : "SELECT p.id, p.name, p.display_name, p.first_name, p.last_name, p.email,"
                 " p.validator, '', p.labels, p.active, p.revision, p.sub_kind, " STORE_ISO_TIME(
                     "p.expires_at") ", NULL FROM principals p WHERE p.kind = 'user' AND"
                                     " p.name = ?" LIVE;
}

static int principal_row(struct store *store, struct arena *arena, const char *org,
                         const char *name, struct store_rows *rows, struct purser_error *err)
{
    struct store_value p[] = {STORE_STR(org ? org : name), STORE_STR(name)};
    int rc = store_query(store, arena, rows, principal_select(org), p, org ? 2 : 1, err);
    if (!rc) {
        if (rows->count == 0)
            principal_expire(store, org, name); /* an expired one goes now, with its event */
        if (rows->count == 0) {
            if (org)
                return purser_error_set(err, PURSER_ENOTFOUND, "Cannot load client %s", name);
            return purser_error_set(err, PURSER_ENOTFOUND, "Cannot load user %s", name);
        }
    }
    return rc;
}

int identity_principal_id(struct store *store, struct arena *arena, const char *org,
                          const char *name, long long *id_out, struct purser_error *err)
{
    struct store_rows rows;
    int rc = principal_row(store, arena, org, name, &rows, err);
    if (!rc)
        *id_out = atoll(store_cell(&rows, 0, 0));
    return rc;
}

int identity_principal_list(struct store *store, struct arena *arena, const char *org,
                            const struct identity_list *narrow, const struct links *links,
                            json_t **out, struct purser_error *err)
{
    struct store_rows rows;
    struct store_value p = STORE_STR(org ? org : "");
    struct identity_list l = {.org = org};
    const char **names;
    size_t count;
    long long oid = 0;
    int rc = org ? identity_org_id(store, arena, org, &oid, err) : 0;
    if (narrow)
        l.q = narrow->q;
    if (!rc) /* what has expired goes first, with its events */
        identity_expire(store, org ? "client" : "user", oid, NULL);
    if (!rc)
        rc = identity_selection(org ? &identity_client_kind : &identity_user_kind, store, arena, &l,
                                &names, &count, err);
    if (!rc)
        rc = org ? store_query(
                       store, arena, &rows,
                       "SELECT p.name FROM principals p JOIN organizations o ON o.id = p.org_id"
                       " WHERE p.kind = 'client' AND o.name = ?" LIVE " ORDER BY p.name",
                       &p, 1, err)
                 : store_query(store, arena, &rows,
                               "SELECT p.name FROM principals p WHERE p.kind = 'user'" LIVE
                               " ORDER BY p.name",
                               NULL, 0, err);
    if (!rc) {
        *out = json_object();
        for (size_t i = 0; i < rows.count; i++)
            if (identity_keep(names, count, store_cell(&rows, i, 0)))
                json_object_set_new(*out, store_cell(&rows, i, 0),
                                    principal_uri(links, org, store_cell(&rows, i, 0)));
    }
    return rc;
}

static int txn_insert_principal(struct store *store, void *ctx, struct purser_error *err)
{
    struct new_principal *np = ctx;
    int rc = identity_principal_insert(store, np, err);
    if (!rc)
        rc = identity_principal_events(store, np->actor, np->id, np->org ? "client" : "user",
                                       np->name, "put", err);
    return rc;
}

/* Reads public_key / create_key of a create or key body: *public_pem is the key to store
 * (borrowed or generated), *private_pem the generated private key (caller frees). */
static int key_material(const json_t *body, int default_create, const char **public_pem,
                        char **generated_public, char **private_pem, struct purser_error *err)
{
    const json_t *create = json_object_get(body, "create_key");
    int rc;
    *generated_public = *private_pem = NULL;
    rc = identity_field_string(body, "public_key", public_pem, err);
    if (!rc && create && !json_is_boolean(create))
        rc = identity_invalid(err, "create_key");
    if (!rc && *public_pem && json_is_true(create))
        rc = purser_error_set(err, PURSER_EINVAL,
                              "Fields 'public_key' and 'create_key' cannot both be given");
    if (!rc && *public_pem) {
        rc = crypto_public_key_check(*public_pem, "public_key", err);
    } else if (!rc && (create ? json_is_true(create) : default_create)) {
        rc = crypto_rsa_generate(private_pem, generated_public, 2048, err);
        if (!rc)
            *public_pem = *generated_public;
    }
    return rc;
}

const char *identity_client_role(const json_t *body)
{
    return json_is_true(json_object_get(body, "validator")) ? "validator" : "node";
}

int identity_principal_create(struct store *store, const char *actor, const char *org,
                              const json_t *body, const char *limit, const struct links *links,
                              json_t **out, struct purser_error *err)
{
    struct new_principal np;
    struct principal_extras x;
    const char *public_pem = NULL;
    char *generated = NULL, *private_pem = NULL;
    const json_t *validator = json_object_get(body, "validator");
    int rc;

    memset(&np, 0, sizeof(np));
    np.actor = actor;
    np.org = org;
    rc = identity_require_object(body, err);
    if (!rc)
        rc = identity_field_string(body, org ? "name" : "username", &np.name, err);
    if (!rc)
        rc = identity_field_string(body, "display_name", &np.display_name, err);
    if (!rc)
        rc = identity_field_string(body, "first_name", &np.first_name, err);
    if (!rc)
        rc = identity_field_string(body, "last_name", &np.last_name, err);
    if (!rc)
        rc = identity_field_string(body, "email", &np.email, err);
    if (!rc && org && !np.name)
        rc = identity_field_string(body, "clientname", &np.name, err);
    if (!rc && !np.name)
        rc = identity_missing(err, org ? "name" : "username");
    if (!rc && !identity_name_ok(np.name, org != NULL))
        rc = identity_invalid(err, org ? "name" : "username");
    if (!rc && validator && !json_is_boolean(validator))
        rc = identity_invalid(err, "validator");
    if (!rc) {
        np.validator = json_is_true(validator);
        np.role = org ? identity_client_role(body) : NULL;
        np.limit = org ? limit : NULL;
        rc = identity_principal_extras(body, &x, err);
    }
    if (!rc) {
        np.sub_kind = x.sub_kind;
        memcpy(np.expires, x.expires, sizeof(np.expires));
        rc = key_material(body, 1, &public_pem, &generated, &private_pem, err);
    }
    if (!rc) {
        principal_expire(store, org, np.name); /* the name of an expired one is free */
        np.public_key = public_pem;
        {
            char *labels = NULL;
            if ((rc = identity_labels(body, &labels, err))) {
                crypto_free_secret(private_pem);
                free(generated);
                return rc;
            }
            np.labels = labels;
            rc = store_txn(store, 0, txn_insert_principal, &np, err);
            free(labels);
        }
        if (!rc) {
            json_t *key = NULL;
            *out = json_pack("{s:o}", "uri", principal_uri(links, org, np.name));
            if (public_pem) {
                key = json_pack("{s:s, s:s, s:s, s:o}", "name", "default", "public_key", public_pem,
                                "expiration_date", "infinity", "uri",
                                org ? link_url(links, LINK_CLIENT_KEY, org, np.name, "default")
                                    : link_url(links, LINK_USER_KEY, np.name, "default", NULL));
                if (private_pem)
                    json_object_set_new(key, "private_key", json_string(private_pem));
                json_object_set_new(*out, "chef_key", key);
            }
            if (private_pem) /* Chef's API v0 shape too */
                json_object_set_new(*out, "private_key", json_string(private_pem));
        }
        crypto_free_secret(private_pem);
        free(generated);
    }
    return rc;
}

int identity_principal_shape(struct store *store, struct arena *arena, const char *org,
                             const char *name, int full, json_t **out, const char **revision,
                             struct purser_error *err)
{
    struct store_rows rows;
    int rc = principal_row(store, arena, org, name, &rows, err);
    if (!rc) {
        if (org)
            *out = json_pack("{s:s, s:s, s:s, s:b, s:s, s:s}", "name", store_cell(&rows, 0, P_NAME),
                             "clientname", store_cell(&rows, 0, P_NAME), "orgname",
                             store_cell(&rows, 0, P_ORG), "validator",
                             strcmp(store_cell(&rows, 0, P_VALIDATOR), "1") == 0, "json_class",
                             "Chef::ApiClient", "chef_type", "client");
        else
            *out = json_pack("{s:s, s:s, s:s, s:s, s:s}", "username", store_cell(&rows, 0, P_NAME),
                             "display_name", store_cell(&rows, 0, P_DISPLAY), "first_name",
                             store_cell(&rows, 0, P_FIRST), "last_name",
                             store_cell(&rows, 0, P_LAST), "email", store_cell(&rows, 0, P_EMAIL));
        if (!*out)
            rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    }
    if (!rc) {
        if (!org ||
            full) { /* beyond Chef's fields (OSIS): labels and whether it may authenticate */
            json_object_set_new(*out, "labels",
                                identity_labels_value(store_cell(&rows, 0, P_LABELS)));
            json_object_set_new(*out, "active",
                                json_boolean(strcmp(store_cell(&rows, 0, P_ACTIVE), "1") == 0));
        }
        if (store_cell(&rows, 0, P_SUB_KIND)) /* Teleport's, when set */
            json_object_set_new(*out, "sub_kind", json_string(store_cell(&rows, 0, P_SUB_KIND)));
        if (store_cell(&rows, 0, P_EXPIRES))
            json_object_set_new(*out, "expires", json_string(store_cell(&rows, 0, P_EXPIRES)));
        if (store_cell(&rows, 0, P_LIMITS)) /* a client's limited roles, when it has some */
            json_object_set_new(*out, "policy_groups",
                                identity_limited_roles(store_cell(&rows, 0, P_LIMITS)));
        if (revision)
            *revision = store_cell(&rows, 0, P_REVISION);
    }
    return rc;
}

int identity_principal_get(struct store *store, struct arena *arena, const char *org,
                           const char *name, json_t **out, const char **revision,
                           struct purser_error *err)
{
    return identity_principal_shape(store, arena, org, name, 0, out, revision, err);
}

int identity_principal_lookup(struct store *store, struct arena *arena, const char *org,
                              const char *name, json_t **out, struct purser_error *err)
{
    struct store_value p[] = {STORE_STR(name), STORE_STR(org)};
    struct store_rows rows;
    int rc = store_query(store, arena, &rows,
                         "SELECT p.kind, p.name,"
                         " (SELECT k.public_key FROM principal_keys k WHERE k.principal_id = p.id"
                         "   AND (k.expires_at IS NULL OR k.expires_at > UTC_TIMESTAMP())"
                         "   ORDER BY k.name = 'default' DESC, k.created_at, k.name LIMIT 1),"
                         " MD5(CONCAT(p.kind, ':', p.id, ':', p.created_at)),"
                         " p.kind = 'client' OR EXISTS (SELECT 1 FROM memberships m"
                         "   WHERE m.org_id = o.id AND m.principal_id = p.id)"
                         " FROM organizations o LEFT JOIN principals p ON p.name = ?"
                         "   AND ((p.kind = 'client' AND p.org_id = o.id) OR p.kind = 'user')"
                         "   AND (p.expires_at IS NULL OR p.expires_at > NOW(6))"
                         " WHERE o.name = ? ORDER BY p.kind = 'client' DESC",
                         p, 2, err);
    if (!rc && rows.count == 0)
        rc = purser_error_set(err, PURSER_ENOTFOUND, "organization '%s' does not exist", org);
    if (!rc) {
        *out = json_array();
        for (size_t i = 0; i < rows.count; i++) {
            const char *key = store_cell(&rows, i, 2);
            if (!store_cell(&rows, i, 0))
                continue;
            json_array_append_new(*out, json_pack("{s:s, s:s, s:o, s:s, s:b}", "name",
                                                  store_cell(&rows, i, 1), "type",
                                                  store_cell(&rows, i, 0), "public_key",
                                                  key ? json_string(key) : json_null(), "authz_id",
                                                  store_cell(&rows, i, 3), "org_member",
                                                  strcmp(store_cell(&rows, i, 4), "1") == 0));
        }
    }
    return rc;
}

/* ---- keys ----------------------------------------------------------------------------------- */

int identity_key_list(struct store *store, struct arena *arena, long long principal_id,
                      const char *keys_uri, json_t **out, struct purser_error *err)
{
    struct store_rows rows;
    struct store_value p = STORE_INT(principal_id);
    int rc = store_query(store, arena, &rows,
                         "SELECT name, expires_at IS NOT NULL AND expires_at <= UTC_TIMESTAMP()"
                         " FROM principal_keys WHERE principal_id = ? ORDER BY name",
                         &p, 1, err);
    if (!rc) {
        *out = json_array();
        for (size_t i = 0; i < rows.count; i++)
            json_array_append_new(
                *out, json_pack("{s:o, s:s, s:b}", "uri",
                                json_sprintf("%s/%s", keys_uri, store_cell(&rows, i, 0)), "name",
                                store_cell(&rows, i, 0), "expired",
                                strcmp(store_cell(&rows, i, 1), "1") == 0));
    }
    return rc;
}

int identity_key_get(struct store *store, struct arena *arena, long long principal_id,
                     const char *key, json_t **out, struct purser_error *err)
{
    struct store_rows rows;
    struct store_value p[] = {STORE_INT(principal_id), STORE_STR(key)};
    int rc = store_query(store, arena, &rows,
                         "SELECT name, public_key, expires_at FROM principal_keys"
                         " WHERE principal_id = ? AND name = ?",
                         p, 2, err);
    if (!rc && rows.count == 0)
        rc = purser_error_set(err, PURSER_ENOTFOUND, "key '%s' not found", key);
    if (!rc)
        *out = identity_key_json(store_cell(&rows, 0, 0), store_cell(&rows, 0, 1),
                                 store_cell(&rows, 0, 2));
    return rc;
}

int identity_key_create(struct store *store, const char *actor, long long principal_id,
                        const json_t *body, const char *keys_uri, json_t **out,
                        struct purser_error *err)
{
    const char *name, *expiration, *public_pem = NULL;
    char *generated = NULL, *private_pem = NULL, when[20];
    int infinite, rc;

    rc = identity_require_object(body, err);
    if (!rc)
        rc = identity_field_string(body, "name", &name, err);
    if (!rc)
        rc = identity_field_string(body, "expiration_date", &expiration, err);
    if (!rc && !name)
        rc = identity_missing(err, "name");
    if (!rc && !identity_name_ok(name, 1))
        rc = identity_invalid(err, "name");
    if (!rc && !expiration)
        rc = identity_missing(err, "expiration_date");
    if (!rc) {
        rc = identity_expiration_param(expiration, when, &infinite, err);
        if (!rc)
            rc = key_material(body, 0, &public_pem, &generated, &private_pem, err);
    }
    if (!rc && !public_pem)
        rc = purser_error_set(err, PURSER_EINVAL,
                              "Field 'public_key' identity_missing (or set create_key)");
    if (!rc) {
        {
            struct identity_batch batch = {.actor = actor,
                                           .principal_id = principal_id,
                                           .kind = "key",
                                           .name = name,
                                           .op = "put",
                                           .qualify = 1};
            identity_batch_add(
                &batch,
                "INSERT INTO principal_keys (principal_id, name, public_key, expires_at)"
                " VALUES (?, ?, ?, ?)",
                (struct store_value[]){STORE_INT(principal_id), STORE_STR(name),
                                       STORE_STR(public_pem),
                                       infinite ? STORE_NULLV : STORE_STR(when)},
                4);
            rc = identity_batch_run(store, &batch, err);
        }
        if (rc == PURSER_EEXISTS)
            rc = purser_error_set(err, PURSER_EEXISTS, "key '%s' already exists", name);
        if (!rc) {
            *out = json_pack("{s:o}", "uri", json_sprintf("%s/%s", keys_uri, name));
            if (private_pem)
                json_object_set_new(*out, "private_key", json_string(private_pem));
        }
        crypto_free_secret(private_pem);
        free(generated);
    }
    return rc;
}

int identity_key_update(struct store *store, const char *actor, struct arena *arena,
                        long long principal_id, const char *key, const json_t *body, json_t **out,
                        struct purser_error *err)
{
    const char *name, *expiration, *public_pem = NULL;
    char *generated = NULL, *private_pem = NULL, when[20];
    json_t *current = NULL;
    int infinite, rc;

    rc = identity_require_object(body, err);
    if (!rc)
        rc = identity_field_string(body, "name", &name, err);
    if (!rc)
        rc = identity_field_string(body, "expiration_date", &expiration, err);
    if (!rc)
        rc = identity_key_get(store, arena, principal_id, key, &current, err);
    if (!rc) {
        json_decref(current);
        if (name && !identity_name_ok(name, 1))
            rc = identity_invalid(err, "name");
    }
    if (!rc && expiration)
        rc = identity_expiration_param(expiration, when, &infinite, err);
    if (!rc)
        rc = key_material(body, 0, &public_pem, &generated, &private_pem, err);
    if (!rc) {
        /* one transaction; the event names the key as it is after the write */
        struct identity_batch batch = {.actor = actor,
                                       .principal_id = principal_id,
                                       .kind = "key",
                                       .name = name ? name : key,
                                       .op = "put",
                                       .qualify = 1};
        if (public_pem)
            identity_batch_add(
                &batch,
                "UPDATE principal_keys SET public_key = ? WHERE principal_id = ? AND name = ?",
                (struct store_value[]){STORE_STR(public_pem), STORE_INT(principal_id),
                                       STORE_STR(key)},
                3);
        if (expiration)
            identity_batch_add(
                &batch,
                "UPDATE principal_keys SET expires_at = ? WHERE principal_id = ? AND name = ?",
                (struct store_value[]){infinite ? STORE_NULLV : STORE_STR(when),
                                       STORE_INT(principal_id), STORE_STR(key)},
                3);
        if (name && strcmp(name, key) != 0)
            identity_batch_add(
                &batch, "UPDATE principal_keys SET name = ? WHERE principal_id = ? AND name = ?",
                (struct store_value[]){STORE_STR(name), STORE_INT(principal_id), STORE_STR(key)},
                3);
        rc = batch.count ? identity_batch_run(store, &batch, err) : 0;
        if (rc == PURSER_EEXISTS)
            rc = purser_error_set(err, PURSER_EEXISTS, "key '%s' already exists", name);
        if (!rc)
            rc = identity_key_get(store, arena, principal_id, name ? name : key, out, err);
        if (!rc && private_pem)
            json_object_set_new(*out, "private_key", json_string(private_pem));
        crypto_free_secret(private_pem);
        free(generated);
    }
    return rc;
}

int identity_key_delete(struct store *store, const char *actor, struct arena *arena,
                        long long principal_id, const char *key, json_t **out,
                        struct purser_error *err)
{
    struct identity_batch batch = {.actor = actor,
                                   .principal_id = principal_id,
                                   .kind = "key",
                                   .name = key,
                                   .op = "delete",
                                   .qualify = 1};
    int rc = identity_key_get(store, arena, principal_id, key, out, err);
    identity_batch_add(&batch, "DELETE FROM principal_keys WHERE principal_id = ? AND name = ?",
                       (struct store_value[]){STORE_INT(principal_id), STORE_STR(key)}, 2);
    if (!rc)
        rc = identity_batch_run(store, &batch, err);
    return rc;
}
