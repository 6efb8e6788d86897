/* identity.c: SQL and Chef-shaped JSON for organizations, principals, keys, tokens, members. */
#include "auth/identity.h"

#include "base/buf.h"
#include "base/crypto.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PRINCIPAL_BY_NAME                                                                          \
    "SELECT p.id, p.kind, COALESCE(p.org_id, 0), p.name, p.server_admin FROM principals p"

/* ---- small helpers ---------------------------------------------------------------------- */

int identity_name_ok(const char *name, int allow_upper_and_dot)
{
    size_t n = name ? strlen(name) : 0;
    if (n == 0 || n > 255)
        return 0;
    if (!allow_upper_and_dot &&
        !(islower((unsigned char)name[0]) || isdigit((unsigned char)name[0])))
        return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)name[i];
        int ok = islower(c) || isdigit(c) || c == '_' || c == '-' ||
                 (allow_upper_and_dot && (isupper(c) || c == '.'));
        if (!ok)
            return 0;
    }
    return 1;
}

static int missing(struct purser_error *err, const char *field)
{
    return purser_error_set(err, PURSER_EINVAL, "Field '%s' missing", field);
}

static int invalid(struct purser_error *err, const char *field)
{
    return purser_error_set(err, PURSER_EINVAL, "Field '%s' invalid", field);
}

/* A string field of body: *out is NULL when absent; PURSER_EINVAL when not a string. */
static int field_string(const json_t *body, const char *field, const char **out,
                        struct purser_error *err)
{
    const json_t *v = json_object_get(body, field);
    *out = NULL;
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_string(v))
        return invalid(err, field);
    *out = json_string_value(v);
    return 0;
}

static int require_object(const json_t *body, struct purser_error *err)
{
    return json_is_object(body) ? 0 : purser_error_set(err, PURSER_EINVAL, "invalid JSON");
}

/* base + "/a/b/c/d", the NULL parts left out (Chef's "uri" fields). */
static json_t *url(const char *base, const char *a, const char *b, const char *c, const char *d)
{
    const char *parts[] = {a, b, c, d};
    json_t *out = json_string(base);
    for (size_t i = 0; out && i < 4 && parts[i]; i++) {
        json_t *longer = json_sprintf("%s/%s", json_string_value(out), parts[i]);
        json_decref(out);
        out = longer;
    }
    return out;
}

/* "infinity", or an ISO 8601 UTC time from a DATETIME cell. */
static json_t *expiration_json(const char *cell)
{
    if (!cell)
        return json_string("infinity");
    return json_sprintf("%.10sT%.8sZ", cell, cell + 11);
}

/* Parses Chef's expiration_date ("infinity" or ISO 8601 UTC) into a DATETIME parameter. */
static int expiration_param(const char *text, char out[20], int *infinite, struct purser_error *err)
{
    struct tm tm;
    const char *rest;
    *infinite = !text || strcmp(text, "infinity") == 0;
    if (*infinite)
        return 0;
    memset(&tm, 0, sizeof(tm));
    rest = strptime(text, "%Y-%m-%dT%H:%M:%S", &tm);
    if (!rest || (strcmp(rest, "Z") != 0 && *rest))
        return invalid(err, "expiration_date");
    strftime(out, 20, "%Y-%m-%d %H:%M:%S", &tm);
    return 0;
}

int identity_org_id(struct store *store, struct arena *arena, const char *org, long long *id,
                    struct purser_error *err)
{
    struct store_rows rows;
    struct store_value p = STORE_STR(org);
    int rc =
        store_query(store, arena, &rows, "SELECT id FROM organizations WHERE name = ?", &p, 1, err);
    if (rc)
        return rc;
    if (rows.count == 0)
        return purser_error_set(err, PURSER_ENOTFOUND, "organization '%s' does not exist", org);
    *id = atoll(store_cell(&rows, 0, 0));
    return 0;
}

static void principal_from_row(struct principal *out, const struct store_rows *rows, size_t r)
{
    out->id = atoll(store_cell(rows, r, 0));
    out->is_user = strcmp(store_cell(rows, r, 1), "user") == 0;
    out->org_id = atoll(store_cell(rows, r, 2));
    out->name = store_cell(rows, r, 3);
    out->server_admin = strcmp(store_cell(rows, r, 4), "1") == 0;
}

/* ---- authentication lookups, with the per-worker cache ------------------------------------ */

#define FIELD '\x1f' /* separates the fields of a cached entry; never in names or PEM */
#define FIELD_TEXT "\x1f"

void identity_cache_clear(struct lru *cache)
{
    if (cache)
        lru_clear(cache);
}

/* "id FIELD is_user FIELD org_id FIELD server_admin FIELD name (FIELD extra)*" */
static void cache_put_principal(struct lru *cache, const char *key, const struct principal *who,
                                const char *const *extra, size_t n)
{
    struct buf b = BUF_INIT;
    if (!cache)
        return;
    buf_printf(&b, "%lld%c%d%c%lld%c%d%c%s", who->id, FIELD, who->is_user, FIELD, who->org_id,
               FIELD, who->server_admin, FIELD, who->name);
    for (size_t i = 0; i < n; i++)
        buf_printf(&b, "%c%s", FIELD, extra[i]);
    lru_put(cache, key, buf_cstr(&b), b.len, time(NULL));
    buf_release(&b);
}

/* Splits a cached entry (copied into the arena); 1 on a hit. */
static int cache_get_principal(struct lru *cache, struct arena *arena, const char *key,
                               struct principal *who, const char ***extra, size_t *n)
{
    size_t len, count = 1;
    const char *hit = cache ? lru_get(cache, key, &len, time(NULL)) : NULL;
    char *copy, *field, **parts;
    if (!hit || !(copy = arena_strndup(arena, hit, len)))
        return 0;
    for (size_t i = 0; i < len; i++)
        count += copy[i] == FIELD;
    if (count < 5 || !(parts = arena_calloc(arena, count + 1, sizeof(*parts))))
        return 0;
    field = copy;
    for (size_t i = 0; i < count; i++) {
        char *end = strchr(field, FIELD);
        if (end)
            *end = '\0';
        parts[i] = field;
        field = end ? end + 1 : field + strlen(field);
    }
    who->id = atoll(parts[0]);
    who->is_user = atoi(parts[1]);
    who->org_id = atoll(parts[2]);
    who->server_admin = atoi(parts[3]);
    who->name = parts[4];
    if (extra) {
        *extra = (const char **)parts + 5;
        *n = count - 5;
    }
    return 1;
}

static int keys_of(struct store *store, struct arena *arena, long long id, const char ***keys,
                   size_t *count, struct purser_error *err)
{
    struct store_rows rows;
    struct store_value p = STORE_INT(id);
    int rc = store_query(store, arena, &rows,
                         "SELECT public_key FROM principal_keys WHERE principal_id = ?"
                         " AND (expires_at IS NULL OR expires_at > UTC_TIMESTAMP()) ORDER BY name",
                         &p, 1, err);
    if (rc)
        return rc;
    *keys = arena_calloc(arena, rows.count + 1, sizeof(**keys));
    if (!*keys)
        return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    for (size_t i = 0; i < rows.count; i++)
        (*keys)[i] = store_cell(&rows, i, 0);
    *count = rows.count;
    return 0;
}

int identity_requestor(struct store *store, struct lru *cache, struct arena *arena, const char *org,
                       const char *name, struct principal *out, const char ***keys,
                       size_t *key_count, struct purser_error *err)
{
    struct store_rows rows;
    struct store_value client[] = {STORE_STR(org ? org : ""), STORE_STR(name)};
    struct store_value user = STORE_STR(name);
    const char *key = arena_sprintf(arena, "requestor%c%s%c%s", FIELD, org ? org : "", FIELD, name);
    int rc = 0;

    if (key && cache_get_principal(cache, arena, key, out, keys, key_count))
        return 0;
    rows.count = 0;
    if (org)
        rc = store_query(store, arena, &rows,
                         PRINCIPAL_BY_NAME " JOIN organizations o ON o.id = p.org_id"
                                           " WHERE p.kind = 'client' AND o.name = ? AND p.name = ?",
                         client, 2, err);
    if (!rc && rows.count == 0)
        rc = store_query(store, arena, &rows,
                         PRINCIPAL_BY_NAME " WHERE p.kind = 'user' AND p.name = ?", &user, 1, err);
    if (rc)
        return rc;
    if (rows.count == 0)
        return purser_error_set(err, PURSER_ENOTFOUND, "no user or client '%s'", name);
    principal_from_row(out, &rows, 0);
    rc = keys_of(store, arena, out->id, keys, key_count, err);
    if (!rc && key)
        cache_put_principal(cache, key, out, *keys, *key_count);
    return rc;
}

int identity_token_principal(struct store *store, struct lru *cache, struct arena *arena,
                             const char *token, struct principal *out, struct purser_error *err)
{
    char hash[65];
    struct store_rows rows;
    struct store_value p;
    const char *key;
    int rc;

    crypto_sha256_hex(hash, token, strlen(token));
    key = arena_concat(arena, "token" FIELD_TEXT, hash, (const char *)NULL);
    if (key && cache_get_principal(cache, arena, key, out, NULL, NULL))
        return 0;
    p = (struct store_value)STORE_STR(hash);
    rc = store_query(store, arena, &rows,
                     "SELECT p.id, p.kind, COALESCE(p.org_id, 0), p.name, p.server_admin, t.id,"
                     " t.expires_at IS NOT NULL AND t.expires_at <= UTC_TIMESTAMP(),"
                     " TIMESTAMPDIFF(SECOND, UTC_TIMESTAMP(), t.expires_at)"
                     " FROM api_tokens t JOIN principals p ON p.id = t.principal_id"
                     " WHERE t.token_sha256 = ?",
                     &p, 1, err);
    if (rc)
        return rc;
    if (rows.count == 0)
        return purser_error_set(err, PURSER_EUNAUTH, "invalid token");
    if (strcmp(store_cell(&rows, 0, 6), "1") == 0)
        return purser_error_set(err, PURSER_EUNAUTH, "token expired");
    principal_from_row(out, &rows, 0);
    {
        struct store_value id = STORE_STR(store_cell(&rows, 0, 5));
        struct purser_error ignored;
        store_exec(store,
                   "UPDATE api_tokens SET last_used_at = UTC_TIMESTAMP() WHERE id = ? AND"
                   " (last_used_at IS NULL OR last_used_at < UTC_TIMESTAMP() - INTERVAL 60 SECOND)",
                   &id, 1, NULL, NULL, &ignored);
    }
    /* A token about to expire is not cached: it must stop working on time. */
    if (key && (!store_cell(&rows, 0, 7) || atoll(store_cell(&rows, 0, 7)) > 3600))
        cache_put_principal(cache, key, out, NULL, 0);
    return 0;
}

int identity_roles(struct store *store, struct lru *cache, struct arena *arena,
                   long long principal_id, const char *org, const char ***roles, size_t *count,
                   struct purser_error *err)
{
    struct store_rows rows;
    struct store_value p[] = {STORE_INT(principal_id), STORE_STR(org)};
    const char *key = arena_sprintf(arena, "roles%c%lld%c%s", FIELD, principal_id, FIELD, org);
    struct principal holder;
    int rc;

    if (key && cache_get_principal(cache, arena, key, &holder, roles, count))
        return 0;
    rc = store_query(store, arena, &rows,
                     "SELECT m.role FROM memberships m JOIN organizations o ON o.id = m.org_id"
                     " WHERE m.principal_id = ? AND o.name = ? ORDER BY m.role",
                     p, 2, err);
    if (rc)
        return rc;
    *roles = arena_calloc(arena, rows.count + 1, sizeof(**roles));
    if (!*roles)
        return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    for (size_t i = 0; i < rows.count; i++)
        (*roles)[i] = store_cell(&rows, i, 0);
    *count = rows.count;
    if (key) {
        holder = (struct principal){.id = principal_id, .name = ""};
        cache_put_principal(cache, key, &holder, *roles, *count);
    }
    return 0;
}

/* ---- organizations ------------------------------------------------------------------------ */

int identity_org_list(struct store *store, struct arena *arena, const struct principal *who,
                      const char *base, json_t **out, struct purser_error *err)
{
    struct store_rows rows;
    struct store_value p = STORE_INT(who ? who->id : 0);
    int all = !who || who->server_admin;
    int rc = all ? store_query(store, arena, &rows, "SELECT name FROM organizations ORDER BY name",
                               NULL, 0, err)
                 : store_query(store, arena, &rows,
                               "SELECT DISTINCT o.name FROM organizations o"
                               " JOIN memberships m ON m.org_id = o.id"
                               " WHERE m.principal_id = ? ORDER BY o.name",
                               &p, 1, err);
    if (rc)
        return rc;
    *out = json_object();
    for (size_t i = 0; i < rows.count; i++)
        json_object_set_new(*out, store_cell(&rows, i, 0),
                            url(base, "organizations", store_cell(&rows, i, 0), NULL, NULL));
    return 0;
}

struct new_principal {
    const char *org; /* NULL for users */
    const char *name;
    const char *display_name, *first_name, *last_name, *email;
    int validator;
    const char *public_key; /* the key to register, or NULL for none */
    const char *role;       /* a membership to add in org, or NULL */
    long long id;           /* out */
};

static int insert_principal(struct store *store, struct new_principal *np, struct purser_error *err)
{
    struct arena *arena = arena_new();
    long long oid = 0;
    unsigned long long id = 0;
    int rc = 0;

    if (!arena)
        return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    if (np->org)
        rc = identity_org_id(store, arena, np->org, &oid, err);
    if (!rc) {
        struct store_value p[] = {STORE_STR(np->org ? "client" : "user"),
                                  np->org ? STORE_INT(oid) : STORE_NULLV,
                                  STORE_STR(np->name),
                                  STORE_STR(np->display_name ? np->display_name : ""),
                                  STORE_STR(np->first_name ? np->first_name : ""),
                                  STORE_STR(np->last_name ? np->last_name : ""),
                                  STORE_STR(np->email ? np->email : ""),
                                  STORE_INT(np->validator)};
        rc = store_exec(store,
                        "INSERT INTO principals (kind, org_id, name, display_name, first_name,"
                        " last_name, email, validator) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                        p, 8, NULL, &id, err);
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
        struct store_value p[] = {STORE_INT(oid), STORE_INT((long long)id), STORE_STR(np->role)};
        rc = store_exec(store,
                        "INSERT INTO memberships (org_id, principal_id, role) VALUES (?, ?, ?)", p,
                        3, NULL, NULL, err);
    }
    np->id = (long long)id;
    arena_free(arena);
    return rc;
}

struct new_org {
    const char *name, *full_name;
    struct new_principal validator;
};

static int insert_org(struct store *store, void *ctx, struct purser_error *err)
{
    struct new_org *no = ctx;
    char *guid = crypto_random_hex(16);
    struct store_value p[] = {STORE_STR(no->name), STORE_STR(no->full_name),
                              STORE_STR(guid ? guid : "")};
    int rc = guid ? store_exec(store,
                               "INSERT INTO organizations (name, full_name, guid) VALUES (?, ?, ?)",
                               p, 3, NULL, NULL, err)
                  : purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    free(guid);
    if (rc == PURSER_EEXISTS)
        return purser_error_set(err, PURSER_EEXISTS, "Organization already exists");
    return rc ? rc : insert_principal(store, &no->validator, err);
}

int identity_org_create(struct store *store, const json_t *body, const char *base, json_t **out,
                        struct purser_error *err)
{
    struct new_org no;
    char validator_name[300];
    char *private_pem = NULL, *public_pem = NULL;
    int rc;

    memset(&no, 0, sizeof(no));
    if ((rc = require_object(body, err)) || (rc = field_string(body, "name", &no.name, err)) ||
        (rc = field_string(body, "full_name", &no.full_name, err)))
        return rc;
    if (!no.name)
        return missing(err, "name");
    if (!identity_name_ok(no.name, 0))
        return invalid(err, "name");
    if (!no.full_name)
        no.full_name = no.name;
    if (strlen(no.full_name) > 1023)
        return invalid(err, "full_name");
    snprintf(validator_name, sizeof(validator_name), "%s-validator", no.name);
    if ((rc = crypto_rsa_generate(&private_pem, &public_pem, 2048, err)))
        return rc;
    no.validator = (struct new_principal){.org = no.name,
                                          .name = validator_name,
                                          .validator = 1,
                                          .public_key = public_pem,
                                          .role = "validator"};
    rc = store_txn(store, 0, insert_org, &no, err);
    if (!rc)
        *out = json_pack("{s:o, s:s, s:s}", "uri", url(base, "organizations", no.name, NULL, NULL),
                         "clientname", validator_name, "private_key", private_pem);
    crypto_free_secret(private_pem);
    free(public_pem);
    return rc;
}

int identity_org_get(struct store *store, struct arena *arena, const char *org, json_t **out,
                     struct purser_error *err)
{
    struct store_rows rows;
    struct store_value p = STORE_STR(org);
    int rc =
        store_query(store, arena, &rows,
                    "SELECT name, full_name, guid FROM organizations WHERE name = ?", &p, 1, err);
    if (rc)
        return rc;
    if (rows.count == 0)
        return purser_error_set(err, PURSER_ENOTFOUND, "organization '%s' does not exist", org);
    *out = json_pack("{s:s, s:s, s:s}", "name", store_cell(&rows, 0, 0), "full_name",
                     store_cell(&rows, 0, 1), "guid", store_cell(&rows, 0, 2));
    return 0;
}

int identity_org_update(struct store *store, struct arena *arena, const char *org,
                        const json_t *body, json_t **out, struct purser_error *err)
{
    const char *full_name, *name;
    unsigned long long affected = 0;
    int rc;
    if ((rc = require_object(body, err)) ||
        (rc = field_string(body, "full_name", &full_name, err)) ||
        (rc = field_string(body, "name", &name, err)))
        return rc;
    if (name && strcmp(name, org) != 0)
        return purser_error_set(err, PURSER_EINVAL, "Field 'name' cannot be changed");
    if (full_name) {
        struct store_value p[] = {STORE_STR(full_name), STORE_STR(org)};
        if (strlen(full_name) > 1023)
            return invalid(err, "full_name");
        if ((rc = store_exec(store, "UPDATE organizations SET full_name = ? WHERE name = ?", p, 2,
                             &affected, NULL, err)))
            return rc;
    }
    return identity_org_get(store, arena, org, out, err);
}

int identity_org_delete(struct store *store, struct arena *arena, const char *org, json_t **out,
                        struct purser_error *err)
{
    struct store_value p = STORE_STR(org);
    int rc = identity_org_get(store, arena, org, out, err);
    if (!rc)
        rc = store_exec(store, "DELETE FROM organizations WHERE name = ?", &p, 1, NULL, NULL, err);
    if (rc) {
        json_decref(*out);
        *out = NULL;
    }
    return rc;
}

/* ---- users and clients -------------------------------------------------------------------- */

/* "/users/NAME" or "/organizations/ORG/clients/NAME" */
static json_t *principal_uri(const char *base, const char *org, const char *name)
{
    return org ? url(base, "organizations", org, "clients", name)
               : url(base, "users", name, NULL, NULL);
}

static const char *principal_select(const char *org)
{
    return org ? "SELECT p.id, p.name, p.display_name, p.first_name, p.last_name, p.email,"
                 " p.validator, o.name FROM principals p JOIN organizations o ON o.id = p.org_id"
                 " WHERE p.kind = 'client' AND o.name = ? AND p.name = ?"
               : "SELECT p.id, p.name, p.display_name, p.first_name, p.last_name, p.email,"
                 " p.validator, '' FROM principals p WHERE p.kind = 'user' AND p.name = ?";
}

static int principal_row(struct store *store, struct arena *arena, const char *org,
                         const char *name, struct store_rows *rows, struct purser_error *err)
{
    struct store_value p[] = {STORE_STR(org ? org : name), STORE_STR(name)};
    int rc = store_query(store, arena, rows, principal_select(org), p, org ? 2 : 1, err);
    if (rc)
        return rc;
    if (rows->count == 0) {
        if (org)
            return purser_error_set(err, PURSER_ENOTFOUND, "Cannot load client %s", name);
        return purser_error_set(err, PURSER_ENOTFOUND, "Cannot load user %s", name);
    }
    return 0;
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
                            const char *base, json_t **out, struct purser_error *err)
{
    struct store_rows rows;
    struct store_value p = STORE_STR(org ? org : "");
    long long oid;
    int rc = org ? identity_org_id(store, arena, org, &oid, err) : 0;
    if (!rc)
        rc = org ? store_query(
                       store, arena, &rows,
                       "SELECT p.name FROM principals p JOIN organizations o ON o.id = p.org_id"
                       " WHERE p.kind = 'client' AND o.name = ? ORDER BY p.name",
                       &p, 1, err)
                 : store_query(store, arena, &rows,
                               "SELECT name FROM principals WHERE kind = 'user' ORDER BY name",
                               NULL, 0, err);
    if (rc)
        return rc;
    *out = json_object();
    for (size_t i = 0; i < rows.count; i++)
        json_object_set_new(*out, store_cell(&rows, i, 0),
                            principal_uri(base, org, store_cell(&rows, i, 0)));
    return 0;
}

static int txn_insert_principal(struct store *store, void *ctx, struct purser_error *err)
{
    return insert_principal(store, ctx, err);
}

/* Reads public_key / create_key of a create or key body: *public_pem is the key to store
 * (borrowed or generated), *private_pem the generated private key (caller frees). */
static int key_material(const json_t *body, int default_create, const char **public_pem,
                        char **generated_public, char **private_pem, struct purser_error *err)
{
    const json_t *create = json_object_get(body, "create_key");
    int rc;
    *generated_public = *private_pem = NULL;
    if ((rc = field_string(body, "public_key", public_pem, err)))
        return rc;
    if (create && !json_is_boolean(create))
        return invalid(err, "create_key");
    if (*public_pem && json_is_true(create))
        return purser_error_set(err, PURSER_EINVAL,
                                "Fields 'public_key' and 'create_key' cannot both be given");
    if (*public_pem)
        return crypto_public_key_check(*public_pem, "public_key", err);
    if (create ? json_is_true(create) : default_create) {
        if ((rc = crypto_rsa_generate(private_pem, generated_public, 2048, err)))
            return rc;
        *public_pem = *generated_public;
    }
    return 0;
}

int identity_principal_create(struct store *store, const char *org, const json_t *body,
                              const char *base, json_t **out, struct purser_error *err)
{
    struct new_principal np;
    const char *public_pem = NULL;
    char *generated = NULL, *private_pem = NULL;
    const json_t *validator = json_object_get(body, "validator");
    int rc;

    memset(&np, 0, sizeof(np));
    np.org = org;
    if ((rc = require_object(body, err)) ||
        (rc = field_string(body, org ? "name" : "username", &np.name, err)) ||
        (rc = field_string(body, "display_name", &np.display_name, err)) ||
        (rc = field_string(body, "first_name", &np.first_name, err)) ||
        (rc = field_string(body, "last_name", &np.last_name, err)) ||
        (rc = field_string(body, "email", &np.email, err)))
        return rc;
    if (org && !np.name && (rc = field_string(body, "clientname", &np.name, err)))
        return rc;
    if (!np.name)
        return missing(err, org ? "name" : "username");
    if (!identity_name_ok(np.name, org != NULL))
        return invalid(err, org ? "name" : "username");
    if (validator && !json_is_boolean(validator))
        return invalid(err, "validator");
    np.validator = json_is_true(validator);
    np.role = org ? (np.validator ? "validator" : "node") : NULL;
    if ((rc = key_material(body, 1, &public_pem, &generated, &private_pem, err)))
        return rc;
    np.public_key = public_pem;
    rc = store_txn(store, 0, txn_insert_principal, &np, err);
    if (!rc) {
        json_t *key = NULL;
        *out = json_pack("{s:o}", "uri", principal_uri(base, org, np.name));
        if (public_pem) {
            json_t *self = principal_uri(base, org, np.name);
            key = json_pack("{s:s, s:s, s:s, s:o}", "name", "default", "public_key", public_pem,
                            "expiration_date", "infinity", "uri",
                            json_sprintf("%s/keys/default", json_string_value(self)));
            json_decref(self);
            if (private_pem)
                json_object_set_new(key, "private_key", json_string(private_pem));
            json_object_set_new(*out, "chef_key", key);
        }
        if (private_pem) /* Chef's API v0 shape too */
            json_object_set_new(*out, "private_key", json_string(private_pem));
    }
    crypto_free_secret(private_pem);
    free(generated);
    return rc;
}

int identity_principal_get(struct store *store, struct arena *arena, const char *org,
                           const char *name, json_t **out, struct purser_error *err)
{
    struct store_rows rows;
    int rc = principal_row(store, arena, org, name, &rows, err);
    if (rc)
        return rc;
    if (org)
        *out = json_pack("{s:s, s:s, s:s, s:b, s:s, s:s}", "name", store_cell(&rows, 0, 1),
                         "clientname", store_cell(&rows, 0, 1), "orgname", store_cell(&rows, 0, 7),
                         "validator", strcmp(store_cell(&rows, 0, 6), "1") == 0, "json_class",
                         "Chef::ApiClient", "chef_type", "client");
    else
        *out = json_pack("{s:s, s:s, s:s, s:s, s:s}", "username", store_cell(&rows, 0, 1),
                         "display_name", store_cell(&rows, 0, 2), "first_name",
                         store_cell(&rows, 0, 3), "last_name", store_cell(&rows, 0, 4), "email",
                         store_cell(&rows, 0, 5));
    return *out ? 0 : purser_error_set(err, PURSER_EINTERNAL, "out of memory");
}

int identity_principal_update(struct store *store, struct arena *arena, const char *org,
                              const char *name, const json_t *body, json_t **out,
                              struct purser_error *err)
{
    static const char *const user_fields[] = {"display_name", "first_name", "last_name", "email"};
    const char *new_name;
    long long id;
    int rc;

    if ((rc = require_object(body, err)) ||
        (rc = field_string(body, org ? "name" : "username", &new_name, err)) ||
        (rc = identity_principal_id(store, arena, org, name, &id, err)))
        return rc;
    if (new_name && strcmp(new_name, name) != 0)
        return purser_error_set(err, PURSER_EINVAL,
                                "Field '%s' cannot be changed (renaming is "
                                "not supported)",
                                org ? "name" : "username");
    for (size_t i = 0; !org && i < 4; i++) {
        const char *value;
        char sql[128];
        struct store_value p[2];
        if ((rc = field_string(body, user_fields[i], &value, err)))
            return rc;
        if (!value)
            continue;
        /* The column name comes from the fixed list above, never from the request. */
        snprintf(sql, sizeof(sql), "UPDATE principals SET %s = ? WHERE id = ?", user_fields[i]);
        p[0] = (struct store_value)STORE_STR(value);
        p[1] = (struct store_value)STORE_INT(id);
        if ((rc = store_exec(store, arena_strdup(arena, sql), p, 2, NULL, NULL, err)))
            return rc;
    }
    if (org && json_object_get(body, "validator")) {
        const json_t *v = json_object_get(body, "validator");
        struct store_value p[] = {STORE_INT(json_is_true(v)), STORE_INT(id)};
        if (!json_is_boolean(v))
            return invalid(err, "validator");
        if ((rc = store_exec(store, "UPDATE principals SET validator = ? WHERE id = ?", p, 2, NULL,
                             NULL, err)))
            return rc;
    }
    return identity_principal_get(store, arena, org, name, out, err);
}

int identity_principal_delete(struct store *store, struct arena *arena, const char *org,
                              const char *name, json_t **out, struct purser_error *err)
{
    long long id;
    int rc = identity_principal_get(store, arena, org, name, out, err);
    if (!rc && !(rc = identity_principal_id(store, arena, org, name, &id, err))) {
        struct store_value p = STORE_INT(id);
        rc = store_exec(store, "DELETE FROM principals WHERE id = ?", &p, 1, NULL, NULL, err);
    }
    if (rc && *out) {
        json_decref(*out);
        *out = NULL;
    }
    return rc;
}

int identity_set_server_admin(struct store *store, const char *user, int admin,
                              struct purser_error *err)
{
    struct store_value p[] = {STORE_INT(admin), STORE_STR(user)};
    unsigned long long affected = 0;
    int rc =
        store_exec(store, "UPDATE principals SET server_admin = ? WHERE kind = 'user' AND name = ?",
                   p, 2, &affected, NULL, err);
    if (!rc && affected == 0) {
        struct arena *arena = arena_new();
        long long id;
        rc = arena ? identity_principal_id(store, arena, NULL, user, &id, err) : PURSER_EINTERNAL;
        arena_free(arena);
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
    if (rc)
        return rc;
    *out = json_array();
    for (size_t i = 0; i < rows.count; i++)
        json_array_append_new(*out,
                              json_pack("{s:o, s:s, s:b}", "uri",
                                        json_sprintf("%s/%s", keys_uri, store_cell(&rows, i, 0)),
                                        "name", store_cell(&rows, i, 0), "expired",
                                        strcmp(store_cell(&rows, i, 1), "1") == 0));
    return 0;
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
    if (rc)
        return rc;
    if (rows.count == 0)
        return purser_error_set(err, PURSER_ENOTFOUND, "key '%s' not found", key);
    *out = json_pack("{s:s, s:s, s:o}", "name", store_cell(&rows, 0, 0), "public_key",
                     store_cell(&rows, 0, 1), "expiration_date",
                     expiration_json(store_cell(&rows, 0, 2)));
    return 0;
}

int identity_key_create(struct store *store, long long principal_id, const json_t *body,
                        const char *keys_uri, json_t **out, struct purser_error *err)
{
    const char *name, *expiration, *public_pem = NULL;
    char *generated = NULL, *private_pem = NULL, when[20];
    int infinite, rc;

    if ((rc = require_object(body, err)) || (rc = field_string(body, "name", &name, err)) ||
        (rc = field_string(body, "expiration_date", &expiration, err)))
        return rc;
    if (!name)
        return missing(err, "name");
    if (!identity_name_ok(name, 1))
        return invalid(err, "name");
    if (!expiration)
        return missing(err, "expiration_date");
    if ((rc = expiration_param(expiration, when, &infinite, err)) ||
        (rc = key_material(body, 0, &public_pem, &generated, &private_pem, err)))
        return rc;
    if (!public_pem)
        return purser_error_set(err, PURSER_EINVAL,
                                "Field 'public_key' missing (or set create_key)");
    {
        struct store_value p[] = {STORE_INT(principal_id), STORE_STR(name), STORE_STR(public_pem),
                                  infinite ? STORE_NULLV : STORE_STR(when)};
        rc = store_exec(store,
                        "INSERT INTO principal_keys (principal_id, name, public_key, expires_at)"
                        " VALUES (?, ?, ?, ?)",
                        p, 4, NULL, NULL, err);
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
    return rc;
}

int identity_key_update(struct store *store, struct arena *arena, long long principal_id,
                        const char *key, const json_t *body, json_t **out, struct purser_error *err)
{
    const char *name, *expiration, *public_pem = NULL;
    char *generated = NULL, *private_pem = NULL, when[20];
    json_t *current = NULL;
    int infinite, rc;

    if ((rc = require_object(body, err)) || (rc = field_string(body, "name", &name, err)) ||
        (rc = field_string(body, "expiration_date", &expiration, err)) ||
        (rc = identity_key_get(store, arena, principal_id, key, &current, err)))
        return rc;
    json_decref(current);
    if (name && !identity_name_ok(name, 1))
        return invalid(err, "name");
    if (expiration && (rc = expiration_param(expiration, when, &infinite, err)))
        return rc;
    if ((rc = key_material(body, 0, &public_pem, &generated, &private_pem, err)))
        return rc;
    if (public_pem) {
        struct store_value p[] = {STORE_STR(public_pem), STORE_INT(principal_id), STORE_STR(key)};
        rc = store_exec(
            store, "UPDATE principal_keys SET public_key = ? WHERE principal_id = ? AND name = ?",
            p, 3, NULL, NULL, err);
    }
    if (!rc && expiration) {
        struct store_value p[] = {infinite ? STORE_NULLV : STORE_STR(when), STORE_INT(principal_id),
                                  STORE_STR(key)};
        rc = store_exec(
            store, "UPDATE principal_keys SET expires_at = ? WHERE principal_id = ? AND name = ?",
            p, 3, NULL, NULL, err);
    }
    if (!rc && name && strcmp(name, key) != 0) {
        struct store_value p[] = {STORE_STR(name), STORE_INT(principal_id), STORE_STR(key)};
        rc = store_exec(store,
                        "UPDATE principal_keys SET name = ? WHERE principal_id = ? AND name = ?", p,
                        3, NULL, NULL, err);
        if (rc == PURSER_EEXISTS)
            rc = purser_error_set(err, PURSER_EEXISTS, "key '%s' already exists", name);
    }
    if (!rc)
        rc = identity_key_get(store, arena, principal_id, name ? name : key, out, err);
    if (!rc && private_pem)
        json_object_set_new(*out, "private_key", json_string(private_pem));
    crypto_free_secret(private_pem);
    free(generated);
    return rc;
}

int identity_key_delete(struct store *store, struct arena *arena, long long principal_id,
                        const char *key, json_t **out, struct purser_error *err)
{
    struct store_value p[] = {STORE_INT(principal_id), STORE_STR(key)};
    int rc = identity_key_get(store, arena, principal_id, key, out, err);
    if (!rc)
        rc = store_exec(store, "DELETE FROM principal_keys WHERE principal_id = ? AND name = ?", p,
                        2, NULL, NULL, err);
    return rc;
}

/* ---- tokens --------------------------------------------------------------------------------- */

int identity_token_create(struct store *store, long long principal_id, const json_t *body,
                          json_t **out, struct purser_error *err)
{
    const char *description = NULL;
    const json_t *expires_in = json_object_get(body, "expires_in");
    char hash[65], *token = NULL, *id = NULL;
    struct arena *arena = NULL;
    struct store_rows rows;
    int rc;

    if (body && (rc = require_object(body, err)))
        return rc;
    if (body && (rc = field_string(body, "description", &description, err)))
        return rc;
    if (description && strlen(description) > 1023)
        return invalid(err, "description");
    if (expires_in && !json_is_null(expires_in) &&
        (!json_is_integer(expires_in) || json_integer_value(expires_in) <= 0 ||
         json_integer_value(expires_in) > 10LL * 366 * 86400))
        return invalid(err, "expires_in");
    token = crypto_new_token();
    id = crypto_random_hex(8);
    arena = arena_new();
    if (!token || !id || !arena) {
        rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
        goto cleanup;
    }
    crypto_sha256_hex(hash, token, strlen(token));
    {
        int expires = expires_in && json_is_integer(expires_in);
        struct store_value p[] = {STORE_STR(id), STORE_INT(principal_id), STORE_STR(hash),
                                  STORE_STR(description ? description : ""),
                                  expires ? STORE_INT(json_integer_value(expires_in))
                                          : STORE_NULLV};
        rc = store_exec(
            store,
            "INSERT INTO api_tokens (id, principal_id, token_sha256, description, expires_at)"
            " VALUES (?, ?, ?, ?, UTC_TIMESTAMP() + INTERVAL ? SECOND)",
            p, 5, NULL, NULL, err);
    }
    if (!rc) {
        struct store_value p = STORE_STR(id);
        rc = store_query(
            store, arena, &rows,
            "SELECT DATE_FORMAT(created_at, '%Y-%m-%dT%H:%i:%sZ'),"
            " DATE_FORMAT(expires_at, '%Y-%m-%dT%H:%i:%sZ') FROM api_tokens WHERE id = ?",
            &p, 1, err);
    }
    if (!rc)
        *out = json_pack(
            "{s:s, s:s, s:s, s:s, s:o}", "id", id, "token", token, "description",
            description ? description : "", "created_at", store_cell(&rows, 0, 0), "expires_at",
            store_cell(&rows, 0, 1) ? json_string(store_cell(&rows, 0, 1)) : json_null());
cleanup:
    crypto_free_secret(token);
    free(id);
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
    int rc = store_query(store, arena, &rows,
                         "SELECT id, description, DATE_FORMAT(created_at, '%Y-%m-%dT%H:%i:%sZ'),"
                         " DATE_FORMAT(expires_at, '%Y-%m-%dT%H:%i:%sZ'),"
                         " DATE_FORMAT(last_used_at, '%Y-%m-%dT%H:%i:%sZ')"
                         " FROM api_tokens WHERE principal_id = ? ORDER BY created_at, id",
                         &p, 1, err);
    if (rc)
        return rc;
    *out = json_array();
    for (size_t i = 0; i < rows.count; i++)
        json_array_append_new(*out,
                              json_pack("{s:s, s:s, s:s, s:o, s:o}", "id", store_cell(&rows, i, 0),
                                        "description", store_cell(&rows, i, 1), "created_at",
                                        store_cell(&rows, i, 2), "expires_at",
                                        optional_string(store_cell(&rows, i, 3)), "last_used_at",
                                        optional_string(store_cell(&rows, i, 4))));
    return 0;
}

int identity_token_delete(struct store *store, long long principal_id, const char *id,
                          struct purser_error *err)
{
    struct store_value p[] = {STORE_STR(id), STORE_INT(principal_id)};
    unsigned long long affected = 0;
    int rc = store_exec(store, "DELETE FROM api_tokens WHERE id = ? AND principal_id = ?", p, 2,
                        &affected, NULL, err);
    if (!rc && affected == 0)
        return purser_error_set(err, PURSER_ENOTFOUND, "token '%s' not found", id);
    return rc;
}

/* ---- members -------------------------------------------------------------------------------- */

int identity_member_list(struct store *store, struct arena *arena, const char *org, json_t **out,
                         struct purser_error *err)
{
    struct store_rows rows;
    long long oid;
    struct store_value p;
    json_t *last = NULL;
    int rc = identity_org_id(store, arena, org, &oid, err);
    if (rc)
        return rc;
    p = (struct store_value)STORE_INT(oid);
    rc = store_query(
        store, arena, &rows,
        "SELECT p.name, m.role FROM memberships m JOIN principals p ON p.id = m.principal_id"
        " WHERE m.org_id = ? AND p.kind = 'user' ORDER BY p.name, m.role",
        &p, 1, err);
    if (rc)
        return rc;
    *out = json_array();
    for (size_t i = 0; i < rows.count; i++) {
        const char *user = store_cell(&rows, i, 0);
        if (!last || strcmp(json_string_value(json_object_get(last, "username")), user) != 0) {
            last = json_pack("{s:s, s:[]}", "username", user, "roles");
            json_array_append_new(*out, json_pack("{s:o}", "user", last));
        }
        json_array_append_new(json_object_get(last, "roles"), json_string(store_cell(&rows, i, 1)));
    }
    return 0;
}

struct member_add {
    const char *org, *user;
    const json_t *roles;
};

static int txn_member_add(struct store *store, void *ctx, struct purser_error *err)
{
    struct member_add *m = ctx;
    struct arena *arena = arena_new();
    long long oid = 0, uid = 0;
    size_t i;
    json_t *role;
    int rc = arena ? 0 : purser_error_set(err, PURSER_EINTERNAL, "out of memory");

    if (!rc)
        rc = identity_org_id(store, arena, m->org, &oid, err);
    if (!rc)
        rc = identity_principal_id(store, arena, NULL, m->user, &uid, err);
    json_array_foreach (m->roles, i, role) {
        struct store_value p[] = {STORE_INT(oid), STORE_INT(uid),
                                  STORE_STR(json_string_value(role))};
        if (rc)
            break;
        rc = store_exec(
            store, "INSERT IGNORE INTO memberships (org_id, principal_id, role) VALUES (?, ?, ?)",
            p, 3, NULL, NULL, err);
    }
    arena_free(arena);
    return rc;
}

int identity_member_add(struct store *store, const char *org, const json_t *body,
                        int (*valid_role)(const char *role, void *ctx), void *ctx, json_t **out,
                        struct purser_error *err)
{
    struct member_add m = {.org = org};
    json_t *roles = NULL, *role;
    size_t i;
    int rc;

    if ((rc = require_object(body, err)) || (rc = field_string(body, "username", &m.user, err)))
        return rc;
    if (!m.user)
        return missing(err, "username");
    roles = json_object_get(body, "roles");
    if (!roles)
        roles = json_pack("[s]", "reader");
    else if (!json_is_array(roles) || json_array_size(roles) == 0)
        return invalid(err, "roles");
    else
        json_incref(roles);
    json_array_foreach (roles, i, role) {
        if (!json_is_string(role) || !valid_role(json_string_value(role), ctx)) {
            json_decref(roles);
            return purser_error_set(err, PURSER_EINVAL, "Field 'roles': unknown role %s",
                                    json_is_string(role) ? json_string_value(role)
                                                         : "(not a string)");
        }
    }
    m.roles = roles;
    rc = store_txn(store, 0, txn_member_add, &m, err);
    if (!rc)
        *out = json_pack("{s:{s:s, s:O}}", "user", "username", m.user, "roles", roles);
    json_decref(roles);
    return rc;
}

int identity_member_remove(struct store *store, const char *org, const char *user,
                           struct purser_error *err)
{
    struct store_value p[] = {STORE_STR(org), STORE_STR(user)};
    unsigned long long affected = 0;
    int rc = store_exec(store,
                        "DELETE m FROM memberships m JOIN organizations o ON o.id = m.org_id"
                        " JOIN principals p ON p.id = m.principal_id"
                        " WHERE o.name = ? AND p.kind = 'user' AND p.name = ?",
                        p, 2, &affected, NULL, err);
    if (!rc && affected == 0)
        return purser_error_set(err, PURSER_ENOTFOUND, "user '%s' is not a member of '%s'", user,
                                org);
    return rc;
}
