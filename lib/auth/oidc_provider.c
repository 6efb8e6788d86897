/* oidc_provider.c: the IdentityProvider kind: checks, storage, the sealed secret (oidc_provider.h).
 */
#include "auth/oidc_provider.h"
#include "auth/identity.h"
#include "auth/keyring.h"
#include "auth/oidc_fetch.h"
#include "auth/rbac.h"
#include "base/crypto.h"
#include "base/json_text.h"
#include "resource/resource.h"
#include "resource/transfer_hooks.h"
#include "store/events.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SECRET_MAX 1024
#define MAPPINGS_MAX 256

static const char *const spec_fields[] = {
    "display_name",   "issuer",       "client_id",       "client_secret", "scopes",
    "username_claim", "groups_claim", "session_seconds", "mappings",      NULL};
static const char *const mapping_fields[] = {"value",         "organization", "role",
                                             "policy_groups", "claim",        NULL};

static int known(const char *const *fields, const char *key)
{
    for (size_t i = 0; fields[i]; i++)
        if (!strcmp(fields[i], key))
            return 1;
    return 0;
}

/* A string member of at most max bytes, printable ASCII; required or absent. */
static int text_member(const json_t *obj, const char *key, const char *where, size_t max,
                       int required, struct purser_error *err)
{
    const json_t *v = json_object_get(obj, key);
    const char *s = json_string_value(v);
    if (!v && !required)
        return 0;
    if (!s || !*s || json_string_length(v) > max)
        return purser_error_set(err, PURSER_EINVAL, "%s%s must be a string of 1 to %zu bytes",
                                where, key, max);
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            return purser_error_set(err, PURSER_EINVAL, "%s%s holds a control character", where,
                                    key);
    return 0;
}

static int mapping_check(const json_t *m, size_t i, struct purser_error *err)
{
    char where[48];
    const char *key;
    const json_t *v;
    int rc = 0;
    snprintf(where, sizeof where, "spec.mappings[%zu].", i);
    if (!json_is_object(m))
        return purser_error_set(err, PURSER_EINVAL, "spec.mappings[%zu] must be an object", i);
    json_object_foreach ((json_t *)m, key, v)
        if (!known(mapping_fields, key))
            return purser_error_set(err, PURSER_EINVAL,
                                    "%s%.60s: unknown field (value, organization, role, "
                                    "policy_groups, claim)",
                                    where, key);
    rc = text_member(m, "value", where, 255, 1, err);
    if (!rc)
        rc = text_member(m, "organization", where, 255, 1, err);
    if (!rc)
        rc = text_member(m, "role", where, 64, 1, err);
    if (!rc)
        rc = text_member(m, "policy_groups", where, 4096, 0, err);
    if (!rc)
        rc = text_member(m, "claim", where, 255, 0, err);
    if (!rc && !identity_name_ok(json_string_value(json_object_get(m, "organization")), 0))
        rc = purser_error_set(err, PURSER_EINVAL, "%sorganization is not an organization name",
                              where);
    return rc;
}

static int scopes_check(const json_t *scopes, struct purser_error *err)
{
    const json_t *v;
    size_t i;
    int openid = 0;
    if (!scopes)
        return 0;
    if (!json_is_array(scopes) || json_array_size(scopes) > 32)
        return purser_error_set(err, PURSER_EINVAL, "spec.scopes must be a list of scopes");
    json_array_foreach (scopes, i, v) {
        const char *s = json_string_value(v);
        if (!s || !*s || strlen(s) > 128 || strpbrk(s, " \"\\%&+#") || s[strcspn(s, "\x01\x7f")])
            return purser_error_set(err, PURSER_EINVAL,
                                    "spec.scopes[%zu] must be a scope token (no spaces)", i);
        openid |= !strcmp(s, "openid");
    }
    return openid ? 0 : purser_error_set(err, PURSER_EINVAL, "spec.scopes must include openid");
}

int oidc_provider_check_spec(const json_t *spec, int creating, struct purser_error *err)
{
    const json_t *seconds = json_object_get(spec, "session_seconds");
    const json_t *mappings = json_object_get(spec, "mappings"), *m;
    const char *key;
    const json_t *v;
    size_t i;
    int rc = 0;
    if (!json_is_object(spec))
        return purser_error_set(err, PURSER_EINVAL, "spec must be an object");
    json_object_foreach ((json_t *)spec, key, v)
        if (!known(spec_fields, key))
            return purser_error_set(err, PURSER_EINVAL, "spec.%.60s: unknown field", key);
    rc = text_member(spec, "issuer", "spec.", OIDC_URL_MAX - 1, 1, err);
    if (!rc && !oidc_url_allowed(json_string_value(json_object_get(spec, "issuer"))))
        rc = purser_error_set(err, PURSER_EINVAL,
                              "spec.issuer must be an https URL (http only to a loopback address)");
    if (!rc)
        rc = text_member(spec, "client_id", "spec.", 255, 1, err);
    if (!rc)
        rc = text_member(spec, "client_secret", "spec.", SECRET_MAX, creating, err);
    if (!rc)
        rc = text_member(spec, "display_name", "spec.", 255, 0, err);
    if (!rc)
        rc = text_member(spec, "username_claim", "spec.", 255, 0, err);
    if (!rc)
        rc = text_member(spec, "groups_claim", "spec.", 255, 0, err);
    if (!rc)
        rc = scopes_check(json_object_get(spec, "scopes"), err);
    if (!rc && seconds &&
        (!json_is_integer(seconds) || json_integer_value(seconds) < 300 ||
         json_integer_value(seconds) > 86400))
        rc = purser_error_set(err, PURSER_EINVAL,
                              "spec.session_seconds must be an integer from 300 to 86400");
    if (!rc && mappings && (!json_is_array(mappings) || json_array_size(mappings) > MAPPINGS_MAX))
        rc = purser_error_set(err, PURSER_EINVAL, "spec.mappings must be a list of at most %d",
                              MAPPINGS_MAX);
    json_array_foreach (mappings, i, m) {
        if (!rc)
            rc = mapping_check(m, i, err);
    }
    return rc;
}

json_t *oidc_provider_orgs(const json_t *spec)
{
    json_t *orgs = json_array(), *m;
    size_t i, j;
    json_array_foreach (json_object_get(spec, "mappings"), i, m) {
        const json_t *org = json_object_get(m, "organization"), *seen;
        int dup = 0;
        json_array_foreach (orgs, j, seen)
            dup |= json_equal(seen, org);
        if (!dup && json_is_string(org))
            json_array_append(orgs, (json_t *)org);
    }
    return orgs;
}

/* ---- storage ---- */

/* What a write stores: the checked body split into its columns. */
struct provider_write {
    const char *name;
    const json_t *body;
    const struct keyring *ring;
    const char *if_match; /* replace only */
    int creating;
    char revision[17];
    const char *event_op;
    const char *actor; /* who writes: the events' actor */
};

/* The organizations the provider's mappings name, each an event of kind identity_provider. */
static int events_append(struct store *store, const char *actor, const json_t *spec,
                         const char *name, const char *op, const char *revision,
                         struct purser_error *err)
{
    json_t *orgs = oidc_provider_orgs(spec), *org;
    size_t i;
    int rc = 0;
    json_array_foreach (orgs, i, org) {
        /* an organization named that does not exist (yet) has no feed: nothing to tell */
        struct arena *scratch = arena_new();
        long long oid = 0;
        struct purser_error ignored;
        if (scratch && !identity_org_id(store, scratch, json_string_value(org), &oid, &ignored))
            rc =
                event_append(store, actor, oid, "identity_provider", name, op, revision, NULL, err);
        arena_free(scratch);
        if (rc)
            break;
    }
    json_decref(orgs);
    return rc;
}

static int secret_seal(const struct keyring *ring, const char *name, const char *secret,
                       unsigned char **sealed, size_t *sealed_len, int *key_id,
                       struct purser_error *err)
{
    char aad[96];
    if (!ring)
        return purser_error_set(err, PURSER_EUNAVAIL,
                                "no keyring is configured: a client secret cannot be sealed");
    snprintf(aad, sizeof aad, "identity_provider/%s", name);
    return keyring_seal(ring, aad, strlen(aad), secret, strlen(secret), sealed, sealed_len, key_id,
                        err);
}

/* 1 when the field differs between the two specs. */
static int spec_differs(const json_t *a, const json_t *b, const char *field)
{
    return !json_equal(json_object_get(a, field), json_object_get(b, field)) &&
           (json_object_get(a, field) || json_object_get(b, field));
}

/* What a provider's sign-ins made: the memberships its mappings granted, its sessions and the
 * tokens made with them, and the sign-ins under way. A change of what it grants (provider_change)
 * and its delete (txn_delete) take them all back. */
static int take_back(struct store *store, const struct store_value *id, struct purser_error *err)
{
    static const char *const statements[] = {
        "DELETE FROM memberships WHERE provider_id = ?",
        "DELETE FROM api_tokens WHERE provider_id = ?",
        "DELETE FROM oidc_handoffs WHERE provider_id = ?",
        "DELETE FROM oidc_logins WHERE provider_id = ?",
    };
    int rc = 0;
    for (size_t i = 0; !rc && i < sizeof statements / sizeof *statements; i++)
        rc = store_exec(store, statements[i], id, 1, NULL, NULL, err);
    return rc;
}

/* A change of a provider that changes who its sign-ins are or what they grant (inside the
 * write's transaction, before it): a new issuer or client id needs the client secret again
 * (else the stored one would go to the new issuer's token endpoint), a new issuer unlinks its
 * users (a subject is unique within one issuer only: another issuer's alice is not this one),
 * and a new issuer, client, claim or mapping takes back the memberships it granted and ends
 * its sessions, the tokens made with them and the sign-ins under way (the next sign-in grants
 * what it grants now). */
static int provider_change(struct store *store, const char *name, const json_t *spec,
                           const char *secret, struct purser_error *err)
{
    struct arena *arena = arena_new();
    struct store_rows rows;
    struct store_value p = STORE_STR(name);
    json_t *old = NULL;
    int rc = arena ? 0 : purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    int issuer, client, grants;
    if (!rc)
        rc = store_query(store, arena, &rows,
                         "SELECT id, spec FROM identity_providers WHERE name = ? FOR UPDATE", &p, 1,
                         err);
    if (!rc && rows.count) {
        struct store_value id = STORE_INT(atoll(store_cell(&rows, 0, 0)));
        old = json_loads(store_cell(&rows, 0, 1), 0, NULL);
        issuer = spec_differs(old, spec, "issuer");
        client = spec_differs(old, spec, "client_id");
        grants = issuer || client || spec_differs(old, spec, "mappings") ||
                 spec_differs(old, spec, "groups_claim") ||
                 spec_differs(old, spec, "username_claim");
        if ((issuer || client) && !secret)
            rc = purser_error_set(err, PURSER_EINVAL,
                                  "spec.client_secret: give it again with a new issuer or "
                                  "client_id (the stored one is the old client's)");
        if (!rc && issuer)
            rc = store_exec(store, "DELETE FROM user_external_ids WHERE provider_id = ?", &id, 1,
                            NULL, NULL, err);
        if (!rc && grants)
            rc = take_back(store, &id, err);
    }
    json_decref(old);
    arena_free(arena);
    return rc;
}

static int txn_write(struct store *store, void *ctx, struct purser_error *err)
{
    struct provider_write *w = ctx;
    const json_t *spec = json_object_get(w->body, "spec");
    const json_t *meta = json_object_get(w->body, "metadata");
    const char *secret = json_string_value(json_object_get(spec, "client_secret"));
    json_t *stored_spec = json_deep_copy(spec);
    const json_t *labels = json_object_get(meta, "labels");
    const char *description = json_string_value(json_object_get(meta, "description"));
    char *spec_text = NULL, *labels_text = NULL;
    unsigned char *sealed = NULL;
    size_t sealed_len = 0;
    int key_id = 0, rc = 0;
    json_object_del(stored_spec, "client_secret");
    spec_text = json_text(stored_spec, JSON_COMPACT | JSON_SORT_KEYS);
    labels_text = labels ? json_text(labels, JSON_COMPACT | JSON_SORT_KEYS) : strdup("{}");
    if (!spec_text || !labels_text) {
        rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
        goto cleanup;
    }
    if (secret && (rc = secret_seal(w->ring, w->name, secret, &sealed, &sealed_len, &key_id, err)))
        goto cleanup;
    if (w->creating) {
        struct store_value p[] = {STORE_STR(w->name),
                                  STORE_STR(w->revision),
                                  STORE_STR(labels_text),
                                  STORE_STR(description ?: ""),
                                  STORE_STR(spec_text),
                                  STORE_INT(key_id),
                                  sealed ? STORE_BLOB((const char *)sealed, sealed_len)
                                         : STORE_BLOB("", 0)};
        rc = store_exec(store,
                        "INSERT INTO identity_providers (name, revision, labels, description, spec,"
                        " secret_key_id, client_secret, created_at, updated_at) VALUES"
                        " (?, ?, ?, ?, ?, ?, ?, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6))",
                        p, 7, NULL, NULL, err);
        if (rc == PURSER_EEXISTS)
            rc = purser_error_set(err, PURSER_EEXISTS, "IdentityProvider '%s' already exists",
                                  w->name);
    } else if (!(rc = provider_change(store, w->name, spec, secret, err))) {
        struct store_value p[] = {STORE_STR(w->revision),
                                  STORE_STR(labels_text),
                                  STORE_STR(description ?: ""),
                                  STORE_STR(spec_text),
                                  STORE_INT(secret != NULL),
                                  STORE_INT(key_id),
                                  STORE_INT(secret != NULL),
                                  secret ? STORE_BLOB((const char *)sealed, sealed_len)
                                         : STORE_STR(""),
                                  STORE_STR(w->name)};
        rc = store_exec(store,
                        "UPDATE identity_providers SET revision = ?, labels = ?, description = ?,"
                        " spec = ?, secret_key_id = IF(?, ?, secret_key_id),"
                        " client_secret = IF(?, ?, client_secret), updated_at = UTC_TIMESTAMP(6)"
                        " WHERE name = ?",
                        p, 9, NULL, NULL, err);
    }
    if (rc)
        goto cleanup;
    rc = events_append(store, w->actor, spec, w->name, w->event_op, w->revision, err);
    if (rc)
        goto cleanup;
    rc = identity_changes_note(store, err);
cleanup:
    free(sealed);
    free(spec_text);
    free(labels_text);
    json_decref(stored_spec);
    return rc;
}

static int body_check(const json_t *body, const char **name, int creating, struct purser_error *err)
{
    const json_t *meta = json_object_get(body, "metadata"), *v;
    const char *key;
    if (!json_is_object(body) || !json_is_object(meta))
        return purser_error_set(err, PURSER_EINVAL, "the body must be {metadata: {name}, spec}");
    json_object_foreach ((json_t *)body, key, v)
        if (strcmp(key, "metadata") && strcmp(key, "spec") && strcmp(key, "kind") &&
            strcmp(key, "version") && strcmp(key, "status"))
            return purser_error_set(err, PURSER_EINVAL, "%.60s: unknown field", key);
    json_object_foreach ((json_t *)meta, key, v)
        if (strcmp(key, "name") && strcmp(key, "labels") && strcmp(key, "description") &&
            strcmp(key, "revision") && strcmp(key, "created_at") && strcmp(key, "updated_at"))
            return purser_error_set(err, PURSER_EINVAL, "metadata.%.60s: unknown field", key);
    if (json_object_get(meta, "labels") && !json_is_object(json_object_get(meta, "labels")))
        return purser_error_set(err, PURSER_EINVAL, "metadata.labels must be an object");
    if (json_object_get(meta, "description") &&
        !json_is_string(json_object_get(meta, "description")))
        return purser_error_set(err, PURSER_EINVAL, "metadata.description must be a string");
    if (creating) {
        *name = json_string_value(json_object_get(meta, "name"));
        if (!*name || strlen(*name) > 63 || !identity_name_ok(*name, 0))
            return purser_error_set(err, PURSER_EINVAL,
                                    "metadata.name must be 1 to 63 of [a-z0-9_-], starting with a "
                                    "letter or digit");
    }
    return oidc_provider_check_spec(json_object_get(body, "spec"), creating, err);
}

int oidc_provider_roles_check(const json_t *body, const struct rbac_policy *policy,
                              struct purser_error *err)
{
    const json_t *mapping;
    size_t i;
    json_array_foreach (json_object_get(json_object_get(body, "spec"), "mappings"), i, mapping) {
        const char *role = json_string_value(json_object_get(mapping, "role"));
        if (role && !rbac_role_exists(policy, role))
            return purser_error_set(err, PURSER_EINVAL,
                                    "spec.mappings[%zu].role: unknown role %.64s (the policy "
                                    "file's roles only)",
                                    i, role);
    }
    return 0;
}

static void revision_new(char out[17])
{
    unsigned char bytes[8];
    crypto_random(bytes, sizeof bytes);
    crypto_hex(out, bytes, sizeof bytes);
    out[16] = '\0';
}

int oidc_provider_create(struct store *store, const char *actor, const struct keyring *ring,
                         const json_t *body, json_t **out, struct purser_error *err)
{
    struct provider_write w = {
        .body = body, .ring = ring, .creating = 1, .event_op = "put", .actor = actor};
    struct arena *arena = NULL;
    int rc = body_check(body, &w.name, 1, err);
    *out = NULL;
    revision_new(w.revision);
    if (!rc)
        rc = store_txn(store, 0, txn_write, &w, err);
    if (!rc && !(arena = arena_new()))
        rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    if (!rc)
        rc = oidc_provider_get(store, arena, w.name, out, err);
    arena_free(arena);
    return rc;
}

int oidc_provider_replace(struct store *store, const char *actor, struct arena *arena,
                          const struct keyring *ring, const char *name, const json_t *body,
                          const char *if_match, json_t **out, struct purser_error *err)
{
    struct provider_write w = {
        .name = name, .body = body, .ring = ring, .event_op = "put", .actor = actor};
    const char *given =
        if_match
            ? if_match
            : json_string_value(json_object_get(json_object_get(body, "metadata"), "revision"));
    json_t *current = NULL;
    int rc = body_check(body, NULL, 0, err);
    *out = NULL;
    if (!rc)
        rc = oidc_provider_get(store, arena, name, &current, err);
    if (!rc)
        rc = resource_precondition(
            arena, "IdentityProvider", name, given,
            json_string_value(json_object_get(json_object_get(current, "metadata"), "revision")), 1,
            err);
    json_decref(current);
    revision_new(w.revision);
    if (!rc)
        rc = store_txn(store, 0, txn_write, &w, err);
    if (!rc)
        rc = oidc_provider_get(store, arena, name, out, err);
    return rc;
}

static json_t *envelope(const struct store_rows *rows, size_t i)
{
    json_t *spec = json_loads(store_cell(rows, i, 4), 0, NULL);
    json_t *labels = json_loads(store_cell(rows, i, 2), 0, NULL);
    return json_pack("{s:s, s:s, s:{s:s, s:s, s:o, s:s, s:s, s:s}, s:o, s:{s:b}}", "kind",
                     "IdentityProvider", "version", "v1", "metadata", "name",
                     store_cell(rows, i, 0), "revision", store_cell(rows, i, 1), "labels",
                     labels ? labels : json_object(), "description", store_cell(rows, i, 3),
                     "created_at", store_cell(rows, i, 5), "updated_at", store_cell(rows, i, 6),
                     "spec", spec ? spec : json_object(), "status", "client_secret_set",
                     strcmp(store_cell(rows, i, 7), "1") == 0);
}

#define ENVELOPE_COLUMNS                                                                           \
    "SELECT name, revision, labels, description, spec, " STORE_ISO_TIME(                           \
        "created_at") ", " STORE_ISO_TIME("updated_at") ", LENGTH(client_secret) > 0"              \
                                                        " FROM identity_providers"

int oidc_provider_get(struct store *store, struct arena *arena, const char *name, json_t **out,
                      struct purser_error *err)
{
    struct store_rows rows;
    struct store_value p = STORE_STR(name ? name : "");
    int rc = store_query(store, arena, &rows, ENVELOPE_COLUMNS " WHERE name = ?", &p, 1, err);
    *out = NULL;
    if (!rc && rows.count == 0)
        rc = purser_error_set(err, PURSER_ENOTFOUND, "IdentityProvider '%.63s' was not found",
                              name ? name : "");
    if (!rc)
        *out = envelope(&rows, 0);
    return rc;
}

int oidc_provider_list(struct store *store, struct arena *arena, int public, json_t **out,
                       struct purser_error *err)
{
    struct store_rows rows;
    json_t *items;
    int rc = store_query(store, arena, &rows, ENVELOPE_COLUMNS " ORDER BY name", NULL, 0, err);
    *out = NULL;
    items = rc ? NULL : json_array();
    for (size_t i = 0; !rc && i < rows.count; i++) {
        json_t *one = envelope(&rows, i);
        const json_t *shown = json_object_get(json_object_get(one, "spec"), "display_name");
        if (public)
            json_array_append_new(
                items, json_pack("{s:s, s:s}", "name", store_cell(&rows, i, 0), "display_name",
                                 json_is_string(shown) ? json_string_value(shown)
                                                       : store_cell(&rows, i, 0)));
        else
            json_array_append(items, one);
        json_decref(one);
    }
    if (!rc)
        *out = json_pack("{s:o, s:s}", "items", items, "next_page_token", "");
    return rc;
}

struct provider_delete {
    long long id;
    const char *name;
    const json_t *spec;
    const char *actor; /* who deletes: the events' actor */
};

static int txn_delete(struct store *store, void *ctx, struct purser_error *err)
{
    struct provider_delete *d = ctx;
    struct store_value p = STORE_INT(d->id);
    int rc = events_append(store, d->actor, d->spec, d->name, "delete", NULL, err);
    if (!rc)
        rc = take_back(store, &p, err);
    if (!rc)
        rc = store_exec(store, "DELETE FROM user_external_ids WHERE provider_id = ?", &p, 1, NULL,
                        NULL, err);
    if (!rc)
        rc = store_exec(store, "DELETE FROM identity_providers WHERE id = ?", &p, 1, NULL, NULL,
                        err);
    if (!rc)
        rc = identity_changes_note(store, err);
    return rc;
}

int oidc_provider_delete(struct store *store, const char *actor, struct arena *arena,
                         const char *name, const char *if_match, struct purser_error *err)
{
    struct store_rows rows;
    struct store_value p = STORE_STR(name ? name : "");
    struct provider_delete d = {.name = name, .actor = actor};
    json_t *spec = NULL;
    int rc =
        store_query(store, arena, &rows,
                    "SELECT id, revision, spec FROM identity_providers WHERE name = ?", &p, 1, err);
    if (!rc && rows.count == 0)
        rc = purser_error_set(err, PURSER_ENOTFOUND, "IdentityProvider '%.63s' was not found",
                              name ? name : "");
    if (!rc && if_match)
        rc = resource_precondition(arena, "IdentityProvider", name, if_match,
                                   store_cell(&rows, 0, 1), 0, err);
    if (!rc) {
        d.id = atoll(store_cell(&rows, 0, 0));
        d.spec = spec = json_loads(store_cell(&rows, 0, 2), 0, NULL);
        rc = store_txn(store, 0, txn_delete, &d, err);
    }
    json_decref(spec);
    return rc;
}

int oidc_provider_load(struct store *store, struct arena *arena, const struct keyring *ring,
                       const char *name, long long by_id, struct oidc_provider *out,
                       struct purser_error *err)
{
    struct store_rows rows;
    struct store_value p = by_id ? STORE_INT(by_id) : STORE_STR(name ? name : "");
    char aad[96];
    int rc = 0;
    memset(out, 0, sizeof *out);
    rc = store_query(store, arena, &rows,
                     by_id ? "SELECT id, name, spec, secret_key_id, client_secret FROM"
                             " identity_providers WHERE id = ?"
                           : "SELECT id, name, spec, secret_key_id, client_secret FROM"
                             " identity_providers WHERE name = ?",
                     &p, 1, err);
    if (!rc && rows.count == 0)
        rc = purser_error_set(err, PURSER_ENOTFOUND, "identity provider '%.63s' is not known",
                              by_id  ? "(deleted)"
                              : name ? name
                                     : "");
    if (!rc && !ring)
        rc = purser_error_set(err, PURSER_EUNAVAIL,
                              "no keyring: the client secret cannot be opened");
    if (!rc && rows.lengths[4] == 0)
        rc = purser_error_set(err, PURSER_EINVAL,
                              "identity provider '%.63s' has no client secret (imported "
                              "without it): set spec.client_secret again",
                              store_cell(&rows, 0, 1));
    if (!rc) {
        out->id = atoll(store_cell(&rows, 0, 0));
        out->name = store_cell(&rows, 0, 1);
        out->spec = json_loads(store_cell(&rows, 0, 2), 0, NULL);
        out->issuer = json_string_value(json_object_get(out->spec, "issuer"));
        out->client_id = json_string_value(json_object_get(out->spec, "client_id"));
        snprintf(aad, sizeof aad, "identity_provider/%s", out->name);
    }
    if (!rc)
        rc = keyring_open(ring, atoi(store_cell(&rows, 0, 3)), aad, strlen(aad),
                          (const unsigned char *)store_cell(&rows, 0, 4), rows.lengths[4],
                          &out->client_secret, &out->client_secret_len, err);
    if (!rc && (!out->issuer || !out->client_id))
        rc = purser_error_set(err, PURSER_EINTERNAL, "identity provider '%s': spec unreadable",
                              out->name);
    if (rc)
        oidc_provider_release(out);
    return rc;
}

void oidc_provider_release(struct oidc_provider *p)
{
    keyring_free_plain(p->client_secret, p->client_secret_len);
    json_decref(p->spec);
    p->client_secret = NULL;
    p->spec = NULL;
}

/* ---- an organization's export and import ---- */

/* The providers with a mapping to org, with those mappings only, appended to docs. */
static int export_org(struct store *store, struct arena *arena, const char *org, json_t *docs,
                      struct purser_error *err)
{
    json_t *list = NULL, *item, *mapping;
    size_t i, j;
    int rc = oidc_provider_list(store, arena, 0, &list, err);
    json_array_foreach (json_object_get(list, "items"), i, item) {
        json_t *meta = json_object_get(item, "metadata");
        json_t *spec = json_deep_copy(json_object_get(item, "spec")), *kept = json_array();
        json_array_foreach (json_object_get(spec, "mappings"), j, mapping)
            if (!strcmp(json_string_value(json_object_get(mapping, "organization")) ?: "", org))
                json_array_append(kept, mapping);
        json_object_set_new(spec, "mappings", kept);
        json_object_del(spec, "client_secret"); /* never stored in spec; never exported */
        if (json_array_size(kept))
            json_array_append_new(
                docs, json_pack("{s:s, s:s, s:{s:O, s:O, s:O}, s:o}", "kind", "IdentityProvider",
                                "version", "v1", "metadata", "name", json_object_get(meta, "name"),
                                "labels", json_object_get(meta, "labels"), "description",
                                json_object_get(meta, "description"), "spec", spec));
        else
            json_decref(spec);
    }
    json_decref(list);
    return rc;
}

/* One provider's import into org (inside the import's transaction). *made: 1 when it made
 * the provider. */
static int import_org(struct store *store, struct arena *arena, const char *actor, const char *org,
                      const json_t *doc, json_t *left_out, int *made, struct purser_error *err)
{
    const char *name = json_string_value(json_object_get(json_object_get(doc, "metadata"), "name"));
    json_t *current = NULL, *body, *spec, *mapping;
    struct purser_error ignored;
    struct provider_write w = {
        .name = name, .ring = NULL, .creating = 1, .event_op = "put", .actor = actor};
    size_t i;
    int rc;
    *made = 0;
    if (!oidc_provider_get(store, arena, name, &current, &ignored)) {
        json_decref(current);
        json_array_append_new(
            left_out, json_pack("{s:s, s:s, s:s}", "kind", "IdentityProvider", "name", name,
                                "reason", "one of that name is on this server: left as it is"));
        return 0;
    }
    body = json_pack("{s:O, s:O}", "metadata", json_object_get(doc, "metadata"), "spec",
                     json_object_get(doc, "spec"));
    spec = json_deep_copy(json_object_get(body, "spec"));
    json_object_set_new(body, "spec", spec);
    json_object_del(spec, "client_secret");
    json_array_foreach (json_object_get(spec, "mappings"), i, mapping)
        if (json_is_object(mapping)) /* the exported organization's grants are this one's */
            json_object_set_new(mapping, "organization", json_string(org));
    w.body = body;
    rc = body_check(body, &w.name, 0, err);
    if (!rc && (!name || strlen(name) > 63 || !identity_name_ok(name, 0)))
        rc = purser_error_set(err, PURSER_EINVAL, "metadata.name is not a provider's name");
    revision_new(w.revision);
    if (!rc)
        rc = txn_write(store, &w, err); /* inside the import's transaction */
    *made = !rc;
    if (!rc)
        json_array_append_new(
            left_out,
            json_pack("{s:s, s:s, s:s, s:s}", "kind", "IdentityProvider", "name", name, "field",
                      "spec.client_secret", "reason",
                      "never exported: set it again (its spec.client_secret); until then no one "
                      "signs in through it"));
    json_decref(body);
    return rc;
}

/* ---- an organization's export and import (transfer_hooks.h) -------------------------------- */

static int provider_export(const struct transfer_ctx *c, long long oid, json_t *out,
                           struct purser_error *err)
{
    size_t before = json_array_size(out);
    /* the server's: only to who may read them (an organization's admin may not) */
    int rc = c->identity_providers ? export_org(c->store, c->arena, c->org, out, err) : 0;
    (void)oid; /* one signature for every export */
    for (size_t i = before; c->progress && i < json_array_size(out); i++)
        c->progress(c->progress_ctx, i + 1, "IdentityProvider");
    return rc;
}

static int provider_import(struct transfer_import *im, const json_t *doc, const char *name,
                           const json_t *spec, json_t **out, struct purser_error *err)
{
    const json_t *mapping;
    size_t i;
    int rc = 0;
    *out = NULL;
    im->made = 0;
    if (!im->c->identity_providers) { /* an organization's importer: the server's are not its */
        json_array_append_new(im->left_out,
                              json_pack("{s:s, s:s?, s:s}", "kind", "IdentityProvider", "name",
                                        name, "reason",
                                        "identity providers are the server's: only a holder of "
                                        "write_identity_providers imports them"));
        return 0;
    }
    json_array_foreach (json_object_get(spec, "mappings"), i, mapping) {
        const char *role = json_string_value(json_object_get(mapping, "role"));
        if (!rc && role && !im->c->valid_role(role, im->c->role_ctx))
            rc = purser_error_set(err, PURSER_EINVAL,
                                  "spec.mappings[%zu].role: unknown role %.64s (the policy "
                                  "file's roles only)",
                                  i, role);
    }
    if (!rc)
        rc = import_org(im->c->store, im->c->arena, im->c->actor, im->c->org, doc, im->left_out,
                        &im->made, err);
    return rc;
}

const struct transfer_hooks oidc_provider_transfer = {{{"IdentityProvider", NULL, provider_import}},
                                                      provider_export};
