/* identity_resource.c: organizations, users, clients, members and tokens as kinds of the
 * resource convention (docs/inventory.md): where their rows are (lib/resource's lists read
 * them: pages, selectors, filters, sort), the revision each write checks and changes, and the
 * deletion of expired users, clients and tokens with their events. */
#include "auth/identity.h"
#include "auth/identity_private.h"

#include "base/crypto.h"
#include "base/log.h"
#include "store/events.h"

#include <stdlib.h>
#include <string.h>

#define ISO(col) STORE_ISO_TIME(col)
#define JSON_BOOL(col) "JSON_EXTRACT(IF(" col ", 'true', 'false'), '$')"
/* the envelope's columns after spec and status (resource.h, struct resource_table) */
#define TIMES(title, expires) "r.created_at, r.updated_at, " title ", r.sub_kind, " expires
#define HEAD "SELECT r.id, r.name, r.revision, COALESCE(r.labels, '{}'), '{}', '', "
#define ACTIVE_IS "r.active = CASE ? WHEN 'true' THEN 1 WHEN 'false' THEN 0 END"
#define PROFILE                                                                                    \
    "'display_name', r.display_name, 'first_name', r.first_name, 'last_name', r.last_name, "       \
    "'email', r.email, 'active', " JSON_BOOL("r.active")

/* ---- the kinds ---- */

static const struct resource_field user_filters[] = {
    {"display_name", "r.display_name = ?"},
    {"first_name", "r.first_name = ?"},
    {"last_name", "r.last_name = ?"},
    {"email", "r.email = ?"},
    {"active", ACTIVE_IS},
    {"tenant", "r.id IN (SELECT m.principal_id FROM memberships m JOIN organizations o ON o.id ="
               " m.org_id WHERE o.name = ?)"},
    {"external_id", "r.id IN (SELECT m.principal_id FROM memberships m JOIN"
                    " organization_external_ids x ON x.org_id = m.org_id WHERE x.external_id = ?)"},
};

/* clang-format off */
static const char user_select[] = HEAD "JSON_OBJECT(" PROFILE "), '{}', "
    TIMES("r.display_name", "r.expires_at")
    " FROM principals r WHERE r.kind = 'user'";
/* clang-format on */
static const struct resource_table user_table = {
    .select = user_select,
    .name = "r.name",
    .title = "r.display_name",
    .labels = "r.labels",
    .sub_kind = "r.sub_kind",
    .expires = "r.expires_at",
};

const struct resource_kind identity_user_kind = {
    .kind = "User",
    .version = "v1",
    .stored = "user",
    .filters = user_filters,
    .filter_count = sizeof(user_filters) / sizeof(user_filters[0]),
    .title = "display_name",
    .table = &user_table,
};

static const struct resource_field client_filters[] = {
    {"validator", "r.validator = CASE ? WHEN 'true' THEN 1 WHEN 'false' THEN 0 END"},
    {"active", ACTIVE_IS},
};

#define CLIENT_ROLES "FROM memberships m WHERE m.principal_id = r.id AND m.org_id = r.org_id"
/* a client: spec what its writer sets, status its roles (and their policy group limits) */
/* clang-format off */
static const char client_select[] = HEAD
    "JSON_OBJECT('validator', " JSON_BOOL("r.validator") ","
    " 'active', " JSON_BOOL("r.active") "),"
    " JSON_OBJECT('roles', COALESCE((SELECT JSON_ARRAYAGG(m.role ORDER BY m.role) " CLIENT_ROLES
    "), JSON_ARRAY()), 'policy_groups', COALESCE((SELECT JSON_OBJECTAGG(m.role,"
    " JSON_EXTRACT(CONCAT('[\"', REPLACE(m.policy_groups, ',', '\",\"'), '\"]'), '$')) "
    CLIENT_ROLES " AND m.policy_groups IS NOT NULL), JSON_OBJECT())), "
    TIMES("''", "r.expires_at")
    " FROM principals r WHERE r.kind = 'client' AND r.org_scope = ?";
/* clang-format on */
static const struct resource_table client_table = {
    .select = client_select,
    .name = "r.name",
    .labels = "r.labels",
    .sub_kind = "r.sub_kind",
    .expires = "r.expires_at",
};

const struct resource_kind identity_client_kind = {
    .kind = "Client",
    .version = "v1",
    .stored = "client",
    .filters = client_filters,
    .filter_count = sizeof(client_filters) / sizeof(client_filters[0]),
    .table = &client_table,
};

static const struct resource_field org_filters[] = {
    {"full_name", "r.full_name = ?"},
    {"display_name", "r.full_name = ?"}, /* OSIS's word for it */
    {"external_id", "r.id IN (SELECT x.org_id FROM organization_external_ids x WHERE"
                    " x.external_id = ?)"},
};

/* every organization (the first parameter 1) or those of the principal of the second */
/* clang-format off */
static const char org_select[] = HEAD
    "JSON_OBJECT('full_name', r.full_name, 'external_ids', COALESCE((SELECT"
    " JSON_ARRAYAGG(x.external_id ORDER BY x.external_id) FROM organization_external_ids x"
    " WHERE x.org_id = r.id), JSON_ARRAY())), JSON_OBJECT('guid', r.guid), "
    TIMES("r.full_name", "NULL")
    " FROM organizations r WHERE (? = 1 OR r.id IN (SELECT m.org_id FROM memberships m"
    " WHERE m.principal_id = ?))";
/* clang-format on */
static const struct resource_table org_table = {
    .select = org_select,
    .name = "r.name",
    .title = "r.full_name",
    .labels = "r.labels",
    .sub_kind = "r.sub_kind",
};

const struct resource_kind identity_org_kind = {
    .kind = "Organization",
    .version = "v1",
    .stored = "organization",
    .filters = org_filters,
    .filter_count = sizeof(org_filters) / sizeof(org_filters[0]),
    .title = "full_name",
    .table = &org_table,
};

static const struct resource_field member_filters[] = {
    {"display_name", "r.display_name = ?"},
    {"email", "r.email = ?"},
    {"active", ACTIVE_IS},
    {"role", "EXISTS (SELECT 1 FROM memberships m WHERE m.principal_id = r.id AND m.org_id ="
             " mo.org_id AND m.role = ?)"},
};

#define MEMBERSHIPS "FROM memberships m WHERE m.principal_id = r.id AND m.org_id = mo.org_id"
/* a member: the user's metadata, its roles (and their policy group limits) as spec */
/* clang-format off */
static const char member_select[] = HEAD
    "JSON_OBJECT('roles', (SELECT JSON_ARRAYAGG(m.role ORDER BY m.role) " MEMBERSHIPS "),"
    " 'policy_groups', COALESCE((SELECT JSON_OBJECTAGG(m.role, JSON_EXTRACT(CONCAT('[\"',"
    " REPLACE(m.policy_groups, ',', '\",\"'), '\"]'), '$')) " MEMBERSHIPS
    " AND m.policy_groups IS NOT NULL), JSON_OBJECT())), JSON_OBJECT(" PROFILE "), "
    TIMES("r.display_name", "r.expires_at")
    " FROM principals r JOIN (SELECT principal_id, MIN(org_id) AS org_id FROM memberships"
    " WHERE org_id = ? GROUP BY principal_id) mo ON mo.principal_id = r.id"
    " WHERE r.kind = 'user'";
/* clang-format on */
static const struct resource_table member_table = {
    .select = member_select,
    .name = "r.name",
    .title = "r.display_name",
    .labels = "r.labels",
    .sub_kind = "r.sub_kind",
    .expires = "r.expires_at",
};

const struct resource_kind identity_member_kind = {
    .kind = "Member",
    .version = "v1",
    .stored = "member",
    .filters = member_filters,
    .filter_count = sizeof(member_filters) / sizeof(member_filters[0]),
    .title = "display_name",
    .table = &member_table,
};

static const struct resource_field token_filters[] = {
    {"description", "r.description = ?"},
    {"active", ACTIVE_IS},
};

/* a token is named by its id */
/* clang-format off */
static const char token_select[] =
    "SELECT r.id, r.id, r.revision, COALESCE(r.labels, '{}'), '{}', '', "
    "JSON_OBJECT('description', r.description, 'active', " JSON_BOOL("r.active") "), "
    "JSON_MERGE_PATCH(JSON_OBJECT('last_used_at', " ISO("r.last_used_at") "), "
    /* a sign-in's session: status.session names its identity provider */
    "IF(r.provider_id IS NULL, '{}', JSON_OBJECT('session', JSON_OBJECT('provider', "
    "(SELECT i.name FROM identity_providers i WHERE i.id = r.provider_id))))), "
    TIMES("''", "r.expires_at")
    " FROM api_tokens r WHERE r.principal_id = ?";
/* clang-format on */
static const struct resource_table token_table = {
    .select = token_select,
    .name = "r.id",
    .labels = "r.labels",
    .sub_kind = "r.sub_kind",
    .expires = "r.expires_at",
};

const struct resource_kind identity_token_kind = {
    .kind = "Token",
    .version = "v1",
    .stored = "token",
    .filters = token_filters,
    .filter_count = sizeof(token_filters) / sizeof(token_filters[0]),
    .table = &token_table,
};

/* ---- lists ---- */

/* The list's scope: its select's parameters, and what expired in it deleted first. */
static int list_scope(const struct resource_kind *k, struct store *store, struct arena *arena,
                      const struct identity_list *l, struct resource_query *q,
                      struct purser_error *err)
{
    struct store_value *p = arena_calloc(arena, 2, sizeof(*p));
    long long oid = 0;
    int rc = p ? 0 : purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    *q = l->q;
    if (!rc && (k == &identity_client_kind || k == &identity_member_kind))
        rc = identity_org_id(store, arena, l->org, &oid, err);
    if (!rc) {
        q->scope = p;
        if (k == &identity_org_kind) {
            p[0] = (struct store_value)STORE_INT(!l->who || l->who->server_admin);
            p[1] = (struct store_value)STORE_INT(l->who ? l->who->id : 0);
            q->scope_count = 2;
        } else if (k != &identity_user_kind) {
            p[0] = (struct store_value)STORE_INT(k == &identity_token_kind ? l->principal_id : oid);
            q->scope_count = 1;
        }
        if (k == &identity_token_kind)
            identity_expire(store, "token", l->principal_id, NULL);
        else if (k == &identity_client_kind)
            identity_expire(store, "client", oid, NULL);
        else if (k != &identity_org_kind)
            identity_expire(store, "user", 0, NULL);
    }
    return rc;
}

int identity_page(const struct resource_kind *k, struct store *store, struct arena *arena,
                  const struct identity_list *l, struct buf *out, struct purser_error *err)
{
    struct resource_scope s = {.store = store, .arena = arena};
    struct resource_query q;
    int rc = list_scope(k, store, arena, l, &q, err);
    if (!rc)
        rc = resource_list(k, &s, &q, out, err);
    return rc;
}

static int identity_selected(const struct resource_kind *k, struct store *store,
                             struct arena *arena, const struct identity_list *l,
                             const char ***names, size_t *count, struct purser_error *err)
{
    struct resource_scope s = {.store = store, .arena = arena};
    struct resource_query q;
    int rc = list_scope(k, store, arena, l, &q, err);
    if (!rc)
        rc = resource_list_names(k, &s, &q, names, count, err);
    return rc;
}

static int name_order(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int identity_narrowed(const struct identity_list *l)
{
    return l && ((l->q.labels && *l->q.labels) || (l->q.filter && *l->q.filter));
}

int identity_keep(const char **names, size_t count, const char *name)
{
    if (!names) /* nothing narrows: every one */
        return 1;
    return bsearch(&name, names, count, sizeof(*names), name_order) != NULL;
}

int identity_selection(const struct resource_kind *k, struct store *store, struct arena *arena,
                       const struct identity_list *l, const char ***names, size_t *count,
                       struct purser_error *err)
{
    int rc;
    *names = NULL;
    *count = 0;
    if (!identity_narrowed(l))
        return 0;
    rc = identity_selected(k, store, arena, l, names, count, err);
    if (!rc)
        qsort(*names, *count, sizeof(**names), name_order);
    return rc;
}

/* ---- revisions ---- */

static const struct {
    const char *lock, *bump;
    int params; /* the row's key: 1 (id), 2 (a token: id and its principal) */
} rows[] = {
    [IDENTITY_ROW_PRINCIPAL] = {"SELECT revision FROM principals WHERE id = ? FOR UPDATE",
                                "UPDATE principals SET revision = ? WHERE id = ?", 1},
    [IDENTITY_ROW_TOKEN] = {"SELECT revision FROM api_tokens WHERE id = ? AND principal_id = ?"
                            " FOR UPDATE",
                            "UPDATE api_tokens SET revision = ?, updated_at = NOW(6) WHERE id = ?"
                            " AND principal_id = ?",
                            2},
    [IDENTITY_ROW_ORG] = {"SELECT revision FROM organizations WHERE id = ? FOR UPDATE",
                          "UPDATE organizations SET revision = ? WHERE id = ?", 1},
};

int identity_revision_check(struct store *store, struct arena *arena, struct identity_row *row,
                            struct purser_error *err)
{
    struct store_rows found;
    int rc = store_query(store, arena, &found, rows[row->table].lock, row->key,
                         (size_t)rows[row->table].params, err);
    if (!rc && found.count > 0) { /* (a row that is not there: the write's own 404) */
        snprintf(row->revision, sizeof(row->revision), "%s", store_cell(&found, 0, 0));
        rc = resource_precondition(arena, row->kind, row->name, row->if_match, row->revision, 0,
                                   err);
    }
    return rc;
}

int identity_revision_bump(struct store *store, struct identity_row *row, struct purser_error *err)
{
    char *fresh = crypto_random_hex(8);
    struct store_value p[3];
    int rc;
    if (!fresh)
        return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    snprintf(row->revision, sizeof(row->revision), "%s", fresh);
    free(fresh);
    p[0] = (struct store_value)STORE_STR(row->revision);
    memcpy(p + 1, row->key, (size_t)rows[row->table].params * sizeof(*p));
    rc = store_exec(store, rows[row->table].bump, p, 1 + (size_t)rows[row->table].params, NULL,
                    NULL, err);
    return rc;
}

/* ---- expiry ---- */

struct expiry {
    const char *kind; /* "user", "client", "token" */
    long long scope;  /* a client's organization, a token's principal */
    const char *name; /* NULL: any */
};

static const char *const expired_sql[] = {
    "SELECT p.id, p.name, " ISO(
        "p.expires_at") " FROM principals p WHERE p.kind = 'user' AND"
                        " p.org_scope = 0 AND p.expires_at <= NOW(6) AND (? = 0 OR p.name = ?)"
                        " ORDER BY p.expires_at LIMIT 100",
    "SELECT p.id, p.name, " ISO(
        "p.expires_at") " FROM principals p WHERE p.kind = 'client' AND"
                        " p.org_scope = ? AND p.expires_at <= NOW(6) AND (? = 0 OR p.name = ?)"
                        " ORDER BY p.expires_at LIMIT 100",
    "SELECT t.id, t.principal_id, " ISO(
        "t.expires_at") " FROM api_tokens t WHERE"
                        " t.principal_id = ? AND t.expires_at <= NOW(6) AND (? = 0 OR t.id = ?)"
                        " ORDER BY t.expires_at LIMIT 100",
    /* IDENTITY_ANY_SCOPE: the background sweep's, every organization's clients and every
     * principal's tokens */
    "SELECT p.id, p.name, " ISO("p.expires_at") " FROM principals p WHERE p.kind = 'client' AND"
                                                " p.expires_at <= NOW(6) AND (? = 0 OR p.name = ?)"
                                                " ORDER BY p.expires_at LIMIT 100",
    "SELECT t.id, t.principal_id, " ISO(
        "t.expires_at") " FROM api_tokens t WHERE"
                        " t.expires_at <= NOW(6) AND (? = 0 OR t.id = ?)"
                        " ORDER BY t.expires_at LIMIT 100",
};

static const char *expired_query(const struct expiry *e)
{
    size_t i = !strcmp(e->kind, "user") ? 0 : !strcmp(e->kind, "client") ? 1 : 2;
    return expired_sql[i > 0 && e->scope == IDENTITY_ANY_SCOPE ? i + 2 : i];
}

static int expired_rows(struct store *store, struct arena *arena, const struct expiry *e, int lock,
                        struct store_rows *found, struct purser_error *err)
{
    /* users have no scope, nor has the sweep: their query starts at the name */
    struct store_value p[] = {STORE_INT(e->scope), STORE_INT(e->name != NULL),
                              STORE_STR(e->name ? e->name : "")};
    const char *sql = expired_query(e);
    int user = !strcmp(e->kind, "user") || e->scope == IDENTITY_ANY_SCOPE;
    if (lock && !(sql = arena_concat(arena, sql, " FOR UPDATE", (const char *)NULL)))
        return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    return store_query(store, arena, found, sql, p + user, 3 - (size_t)user, err);
}

/* One expired user, client or token deleted, with its event in each organization of its
 * principal (a client's tokens go with it, each with its event). The server expires it,
 * whoever's request found it: the events' actor is "purser". */
static int expire_one(struct store *store, struct arena *arena, const struct expiry *e,
                      const struct store_rows *found, size_t i, struct purser_error *err)
{
    int token = !strcmp(e->kind, "token");
    long long principal = atoll(store_cell(found, i, token ? 1 : 0));
    json_t *detail =
        json_pack("{s:s, s:s}", "reason", "expired", "expires", store_cell(found, i, 2));
    struct store_rows orgs, tokens = {0};
    struct store_value id = token ? STORE_STR(store_cell(found, i, 0)) : STORE_INT(principal);
    int rc = detail ? identity_principal_orgs(store, arena, principal, &orgs, err)
                    : purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    if (!rc && !token)
        rc = store_query(store, arena, &tokens,
                         "SELECT id FROM api_tokens WHERE principal_id = ? ORDER BY id", &id, 1,
                         err);
    if (!rc)
        rc = store_exec(store,
                        token ? "DELETE FROM api_tokens WHERE id = ?"
                              : "DELETE FROM principals WHERE id = ?",
                        &id, 1, NULL, NULL, err);
    if (!rc)
        rc = identity_append_each(store, "purser", &orgs, e->kind,
                                  token ? store_cell(found, i, 0) : store_cell(found, i, 1),
                                  "delete", detail, err);
    for (size_t t = 0; !rc && !strcmp(e->kind, "client") && t < tokens.count; t++)
        rc = identity_append_each(store, "purser", &orgs, "token", store_cell(&tokens, t, 0),
                                  "delete", detail, err);
    json_decref(detail);
    return rc;
}

static int expire_txn(struct store *store, void *ctx, struct purser_error *err)
{
    const struct expiry *e = ctx;
    struct arena *arena = arena_new();
    struct store_rows found;
    int rc = arena ? expired_rows(store, arena, e, 1, &found, err)
                   : purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    for (size_t i = 0; !rc && i < found.count; i++)
        rc = expire_one(store, arena, e, &found, i, err);
    arena_free(arena);
    return rc;
}

int identity_expire(struct store *store, const char *kind, long long scope, const char *name)
{
    struct expiry e = {kind, scope, name};
    struct arena *arena = arena_new();
    struct store_rows found;
    struct purser_error err;
    int rc = arena ? expired_rows(store, arena, &e, 0, &found, &err) : PURSER_EINTERNAL;
    arena_free(arena);
    if (!rc && found.count > 0) { /* (a cheap read: nothing expired, nothing written) */
        rc = store_txn(store, 0, expire_txn, &e, &err); /* by the server ("purser": expire_one) */
        if (rc) {
            json_t *fields = json_pack("{s:s, s:s}", "kind", kind, "error", err.message);
            log_message("warning", "expired principals or tokens could not be deleted", fields);
            json_decref(fields);
        }
    }
    return rc;
}
