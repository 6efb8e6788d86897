/* identity.c: helpers shared by the identity files, and the authentication lookups (with the
 * per-worker cache) that establish who is asking. */
#include "auth/identity.h"
#include "auth/identity_private.h"
#include "resource/selector.h"

#include "base/buf.h"
#include "base/crypto.h"
#include "base/json_text.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A principal as authentication finds it, and whether it expires within the hour (then it is
 * not cached: it must stop working on time). */
#define PRINCIPAL_BY_NAME                                                                          \
    "SELECT p.id, p.kind, COALESCE(p.org_id, 0), p.name, p.server_admin, p.expires_at IS NOT "     \
    "NULL AND p.expires_at <= UTC_TIMESTAMP(6) + INTERVAL 1 HOUR,"                                 \
    " TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), p.expires_at) FROM principals p"
/* an expired user or client is gone */
#define PRINCIPAL_LIVE " AND (p.expires_at IS NULL OR p.expires_at > UTC_TIMESTAMP(6))"

/* ---- small helpers ---------------------------------------------------------------------- */

/* The nearer of end (ms of CLOCK_REALTIME, 0: none) and the end of left_us microseconds from now
 * (the database's count; NULL: none), ignoring what is past the hour. */
static long long credential_end(long long end, const char *left_us)
{
    struct timespec now;
    long long left = left_us ? atoll(left_us) : 0, at;
    if (!left_us || left > 3600000000LL)
        return end;
    clock_gettime(CLOCK_REALTIME, &now);
    at = (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000 + left / 1000;
    return end && end < at ? end : at;
}

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

int identity_labels(const json_t *body, char **text, struct purser_error *err)
{
    const json_t *labels = json_object_get(body, "labels"), *v;
    const char *key;
    int rc = 0;
    *text = NULL;
    if (!labels)
        return 0;
    if (!json_is_object(labels) || json_object_size(labels) > 64)
        return purser_error_set(err, PURSER_EINVAL,
                                "labels must be a mapping of at most 64 strings");
    json_object_foreach ((json_t *)labels, key, v) {
        if (!json_is_string(v))
            rc = purser_error_set(err, PURSER_EINVAL, "labels.%.80s must be a string", key);
        if (!rc)
            rc = selector_label_check("labels", key, json_string_value(v), err);
        if (rc)
            break;
    }
    if (!rc && !(*text = json_text(labels, JSON_COMPACT | JSON_PRESERVE_ORDER)))
        rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    return rc;
}

json_t *identity_labels_value(const char *text)
{
    json_t *v = text ? json_loads(text, 0, NULL) : NULL;
    if (json_is_object(v))
        return v;
    json_decref(v);
    return json_object();
}

json_t *identity_split_groups(const char *joined)
{
    json_t *out = json_array();
    for (const char *p = joined; p && *p;) {
        size_t n = strcspn(p, ",");
        json_array_append_new(out, json_stringn(p, n));
        p += n + (p[n] == ',');
    }
    return out;
}

json_t *identity_limited_roles(const char *text)
{
    json_t *out = NULL;
    for (const char *p = text; p && *p;) {
        size_t n = strcspn(p, ";"), role = strcspn(p, "=");
        if (role < n) {
            char *joined = strndup(p + role + 1, n - role - 1);
            if (!out)
                out = json_object();
            json_object_setn_new(out, p, role, identity_split_groups(joined));
            free(joined);
        }
        p += n + (p[n] == ';');
    }
    return out;
}

char *identity_join_groups(const json_t *patterns)
{
    struct buf b = BUF_INIT;
    size_t i;
    json_t *item;
    char *out;
    json_array_foreach (patterns, i, item)
        if (buf_printf(&b, "%s%s", i ? "," : "", json_string_value(item)))
            break;
    out = b.len == 0 || i < json_array_size(patterns) ? NULL : strdup(buf_cstr(&b));
    buf_release(&b);
    return out;
}

int identity_missing(struct purser_error *err, const char *field)
{
    return purser_error_set(err, PURSER_EINVAL, "Field '%s' missing", field);
}

int identity_invalid(struct purser_error *err, const char *field)
{
    return purser_error_set(err, PURSER_EINVAL, "Field '%s' invalid", field);
}

/* A string field of body: *out is NULL when absent; PURSER_EINVAL when not a string. */
int identity_field_string(const json_t *body, const char *field, const char **out,
                          struct purser_error *err)
{
    const json_t *v = json_object_get(body, field);
    *out = NULL;
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_string(v))
        return identity_invalid(err, field);
    *out = json_string_value(v);
    return 0;
}

int identity_require_object(const json_t *body, struct purser_error *err)
{
    return json_is_object(body) ? 0 : purser_error_set(err, PURSER_EINVAL, "invalid JSON");
}

/* "infinity", or an ISO 8601 UTC time from a DATETIME cell. */
json_t *identity_expiration_json(const char *cell)
{
    if (!cell)
        return json_string("infinity");
    return json_sprintf("%.10sT%.8sZ", cell, cell + 11);
}

/* A public key as Chef shows one: {name, public_key, expiration_date}. */
json_t *identity_key_json(const char *name, const char *public_key, const char *expires_at)
{
    return json_pack("{s:s, s:s, s:o}", "name", name, "public_key", public_key, "expiration_date",
                     identity_expiration_json(expires_at));
}

/* Parses Chef's expiration_date ("infinity" or ISO 8601 UTC) into a DATETIME parameter. */
int identity_expiration_param(const char *text, char out[20], int *infinite,
                              struct purser_error *err)
{
    struct tm tm;
    const char *rest;
    *infinite = !text || strcmp(text, "infinity") == 0;
    if (*infinite)
        return 0;
    memset(&tm, 0, sizeof(tm));
    rest = strptime(text, "%Y-%m-%dT%H:%M:%S", &tm);
    if (!rest || (strcmp(rest, "Z") != 0 && *rest))
        return identity_invalid(err, "expiration_date");
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
    if (!rc && rows.count == 0)
        rc = purser_error_set(err, PURSER_ENOTFOUND, "organization '%s' does not exist", org);
    if (!rc)
        *id = atoll(store_cell(&rows, 0, 0));
    return rc;
}

void identity_principal_from_row(struct principal *out, const struct store_rows *rows, size_t r)
{
    out->id = atoll(store_cell(rows, r, 0));
    out->is_user = strcmp(store_cell(rows, r, 1), "user") == 0;
    out->org_id = atoll(store_cell(rows, r, 2));
    out->name = store_cell(rows, r, 3);
    out->server_admin = strcmp(store_cell(rows, r, 4), "1") == 0;
    out->expires_ms = 0;
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

/* The principal's keys that have not expired; *expiring is set when one of them expires within
 * the hour (such a list is not cached: the key must stop working on time). */
static int keys_of(struct store *store, struct arena *arena, long long id, const char ***keys,
                   size_t *count, int *expiring, long long *end, struct purser_error *err)
{
    struct store_rows rows;
    struct store_value p = STORE_INT(id);
    int rc = store_query(store, arena, &rows,
                         "SELECT public_key, expires_at IS NOT NULL AND expires_at <="
                         " UTC_TIMESTAMP() + INTERVAL 1 HOUR, TIMESTAMPDIFF(MICROSECOND,"
                         " UTC_TIMESTAMP(6), expires_at) FROM principal_keys WHERE"
                         " principal_id = ? AND (expires_at IS NULL OR expires_at >"
                         " UTC_TIMESTAMP()) ORDER BY name",
                         &p, 1, err);
    if (!rc) {
        *expiring = 0;
        for (size_t i = 0; i < rows.count; i++) {
            *expiring |= strcmp(store_cell(&rows, i, 1), "1") == 0;
            *end = credential_end(*end, store_cell(&rows, i, 2));
        }
        *keys = arena_calloc(arena, rows.count + 1, sizeof(**keys));
        if (!*keys)
            rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    }
    if (!rc) {
        for (size_t i = 0; i < rows.count; i++)
            (*keys)[i] = store_cell(&rows, i, 0);
        *count = rows.count;
    }
    return rc;
}

int identity_requestor(struct store *store, struct lru *cache, struct arena *arena, const char *org,
                       const char *name, struct principal *out, const char ***keys,
                       size_t *key_count, struct purser_error *err)
{
    struct store_rows rows;
    struct store_value client[] = {STORE_STR(org ? org : ""), STORE_STR(name)};
    struct store_value user = STORE_STR(name);
    const char *key = arena_sprintf(arena, "requestor%c%s%c%s", FIELD, org ? org : "", FIELD, name);
    int rc = 0, expiring = 0;

    out->expires_ms = 0; /* (a cached credential does not end within the hour) */
    if (key && cache_get_principal(cache, arena, key, out, keys, key_count))
        return 0;
    rows.count = 0;
    if (org)
        rc = store_query(store, arena, &rows,
                         PRINCIPAL_BY_NAME " JOIN organizations o ON o.id = p.org_id"
                                           " WHERE p.kind = 'client' AND o.name = ?"
                                           " AND p.org_scope = o.id AND p.name = ?"
                                           " AND p.active = 1" PRINCIPAL_LIVE,
                         client, 2, err);
    if (!rc && rows.count == 0)
        rc = store_query(store, arena, &rows,
                         PRINCIPAL_BY_NAME
                         " WHERE p.kind = 'user' AND p.org_scope = 0 AND p.name = ?"
                         " AND p.active = 1" PRINCIPAL_LIVE,
                         &user, 1, err);
    if (!rc && rows.count == 0)
        rc = purser_error_set(err, PURSER_ENOTFOUND, "no user or client '%s'", name);
    if (!rc) {
        identity_principal_from_row(out, &rows, 0);
        out->expires_ms = credential_end(0, store_cell(&rows, 0, 6));
        rc = keys_of(store, arena, out->id, keys, key_count, &expiring, &out->expires_ms, err);
        expiring |= strcmp(store_cell(&rows, 0, 5), "1") == 0;
        if (!rc && key && !expiring)
            cache_put_principal(cache, key, out, *keys, *key_count);
    }
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
    out->expires_ms = 0; /* (a cached credential does not end within the hour) */
    if (key && cache_get_principal(cache, arena, key, out, NULL, NULL))
        return 0;
    p = (struct store_value)STORE_STR(hash);
    rc = store_query(store, arena, &rows,
                     "SELECT p.id, p.kind, COALESCE(p.org_id, 0), p.name, p.server_admin, t.id,"
                     " t.expires_at IS NOT NULL AND t.expires_at <= UTC_TIMESTAMP(),"
                     " TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), LEAST(COALESCE(t.expires_at,"
                     " p.expires_at), COALESCE(p.expires_at, t.expires_at))), t.active, p.active,"
                     " p.expires_at IS NOT NULL AND p.expires_at <= UTC_TIMESTAMP(6)"
                     " FROM api_tokens t JOIN principals p ON p.id = t.principal_id"
                     " WHERE t.token_sha256 = ?",
                     &p, 1, err);
    if (!rc && rows.count == 0)
        rc = purser_error_set(err, PURSER_EUNAUTH, "invalid token");
    if (!rc && strcmp(store_cell(&rows, 0, 6), "1") == 0)
        rc = purser_error_set(err, PURSER_EUNAUTH, "token expired");
    if (!rc && strcmp(store_cell(&rows, 0, 8), "1") != 0)
        rc = purser_error_set(err, PURSER_EUNAUTH, "token deactivated");
    if (!rc && strcmp(store_cell(&rows, 0, 9), "1") != 0)
        rc = purser_error_set(err, PURSER_EUNAUTH, "the token's user or client is deactivated");
    if (!rc && strcmp(store_cell(&rows, 0, 10), "1") == 0)
        rc = purser_error_set(err, PURSER_EUNAUTH, "the token's user or client has expired");
    if (!rc) {
        identity_principal_from_row(out, &rows, 0);
        out->expires_ms = credential_end(0, store_cell(&rows, 0, 7));
        {
            struct store_value id = STORE_STR(store_cell(&rows, 0, 5));
            struct purser_error ignored;
            store_exec(
                store,
                "UPDATE api_tokens SET last_used_at = UTC_TIMESTAMP() WHERE id = ? AND"
                " (last_used_at IS NULL OR last_used_at < UTC_TIMESTAMP() - INTERVAL 60 SECOND)",
                &id, 1, NULL, NULL, &ignored);
        }
        /* A token (or its principal) about to expire is not cached: it must stop working on time.
         */
        if (key && !out->expires_ms)
            cache_put_principal(cache, key, out, NULL, 0);
    }
    return rc;
}

/* The cached form of grants: the role and "=patterns" (a membership's limit, "=" one that
 * matches nothing) or "" (none) as two fields each. */
static int grants_from(struct arena *arena, const char **fields, size_t n,
                       struct rbac_grant **grants, size_t *count)
{
    *count = n / 2;
    if (!(*grants = arena_calloc(arena, *count + 1, sizeof(**grants))))
        return -1;
    for (size_t i = 0; i < *count; i++)
        (*grants)[i] =
            (struct rbac_grant){.role = fields[2 * i],
                                .policy_groups = *fields[2 * i + 1] ? fields[2 * i + 1] + 1 : NULL};
    return 0;
}

int identity_roles(struct store *store, struct lru *cache, struct arena *arena,
                   long long principal_id, const char *org, struct rbac_grant **grants,
                   size_t *count, struct purser_error *err)
{
    struct store_rows rows;
    struct store_value p[] = {STORE_INT(principal_id), STORE_STR(org)};
    const char *key = arena_sprintf(arena, "roles%c%lld%c%s", FIELD, principal_id, FIELD, org);
    const char **fields;
    struct principal holder;
    size_t n;
    int rc;

    if (key && cache_get_principal(cache, arena, key, &holder, &fields, &n))
        return grants_from(arena, fields, n, grants, count)
                   ? purser_error_set(err, PURSER_EINTERNAL, "out of memory")
                   : 0;
    rc = store_query(store, arena, &rows,
                     "SELECT m.role, IF(m.policy_groups IS NULL, '', CONCAT('=', m.policy_groups))"
                     " FROM memberships m JOIN "
                     "organizations o ON o.id = m.org_id WHERE m.principal_id = ? AND o.name = ? "
                     "ORDER BY m.role",
                     p, 2, err);
    if (!rc && !(fields = arena_calloc(arena, 2 * rows.count + 1, sizeof(*fields))))
        rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    if (!rc) {
        for (size_t i = 0; i < rows.count; i++) {
            fields[2 * i] = store_cell(&rows, i, 0);
            fields[2 * i + 1] = store_cell(&rows, i, 1);
        }
        if (grants_from(arena, fields, 2 * rows.count, grants, count))
            rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    }
    if (!rc) {
        if (key) {
            holder = (struct principal){.id = principal_id, .name = ""};
            cache_put_principal(cache, key, &holder, fields, 2 * rows.count);
        }
    }
    return rc;
}
