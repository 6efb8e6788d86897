/* identity_org.c: organizations and their members, in Chef's shapes. */
#include "auth/identity.h"
#include "auth/identity_private.h"
#include "auth/rbac.h"

#include "store/events.h"

#include "base/crypto.h"
#include "codec/merge_patch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* ---- organizations ------------------------------------------------------------------------ */

int identity_org_list(struct store *store, struct arena *arena, const struct principal *who,
                      const struct identity_list *narrow, const struct links *links, json_t **out,
                      struct purser_error *err)
{
    struct store_rows rows;
    struct identity_list l = {.who = who};
    const char **names;
    size_t count;
    int all = !who || who->server_admin, rc;
    if (narrow)
        l.q = narrow->q;
    rc = identity_selection(&identity_org_kind, store, arena, &l, &names, &count, err);
    if (!rc) {
        struct store_value p[] = {STORE_INT(all), STORE_INT(who ? who->id : 0)};
        rc = store_query(store, arena, &rows,
                         "SELECT o.name FROM organizations o WHERE (? = 1 OR o.id IN (SELECT"
                         " m.org_id FROM memberships m WHERE m.principal_id = ?)) ORDER BY o.name",
                         p, 2, err);
    }
    if (!rc) {
        *out = json_object();
        for (size_t i = 0; i < rows.count; i++)
            if (identity_keep(names, count, store_cell(&rows, i, 0)))
                json_object_set_new(
                    *out, store_cell(&rows, i, 0),
                    link_url(links, LINK_ORGANIZATION, store_cell(&rows, i, 0), NULL, NULL));
    }
    return rc;
}

/* An organization's sub_kind when body gives it (*given set; null clears: *sub_kind NULL);
 * `expires` is refused: an organization holds everything else, and goes only when deleted. */
static int org_sub_kind(const json_t *body, int *given, const char **sub_kind,
                        struct purser_error *err)
{
    const json_t *v = json_object_get(body, "sub_kind");
    int rc = 0;
    if (json_object_get(body, "expires") && !json_is_null(json_object_get(body, "expires")))
        return purser_error_set(err, PURSER_EINVAL,
                                "Field 'expires' invalid: an organization does not expire (it "
                                "holds everything else); delete it instead");
    *given = v != NULL;
    *sub_kind = json_string_value(v);
    if (v && !json_is_null(v))
        rc = resource_sub_kind_check("Field 'sub_kind'", v, err);
    return rc;
}

struct new_org {
    const char *actor; /* who writes */
    const char *name, *full_name, *sub_kind;
    char *labels;           /* compact JSON or NULL */
    const json_t *external; /* an array of strings, or NULL */
    struct new_principal validator;
};

/* external_ids: at most 32 distinct non-empty strings of at most 255 characters. */
static int check_external_ids(const json_t *v, struct purser_error *err)
{
    size_t i;
    const json_t *x;
    if (!v)
        return 0;
    if (!json_is_array(v) || json_array_size(v) > 32)
        return purser_error_set(err, PURSER_EINVAL,
                                "Field 'external_ids' must be a list of at most 32 strings");
    json_array_foreach (v, i, x)
        if (!json_is_string(x) || !json_string_length(x) || json_string_length(x) > 255)
            return purser_error_set(err, PURSER_EINVAL,
                                    "Field 'external_ids' item %zu must be a string of 1 to 255 "
                                    "bytes",
                                    i);
    return 0;
}

/* Replaces the organization's external ids (409 naming one another organization holds). */
static int write_external_ids(struct store *store, const char *org, const json_t *ids,
                              struct purser_error *err)
{
    struct store_value p = STORE_STR(org);
    size_t i;
    const json_t *x;
    int rc = store_exec(store,
                        "DELETE x FROM organization_external_ids x JOIN organizations o ON o.id = "
                        "x.org_id WHERE o.name = ?",
                        &p, 1, NULL, NULL, err);
    json_array_foreach (ids, i, x) {
        struct store_value q[] = {STORE_STR(json_string_value(x)), STORE_STR(org)};
        if (rc)
            break;
        rc = store_exec(store,
                        "INSERT INTO organization_external_ids (external_id, org_id) SELECT ?, id "
                        "FROM organizations WHERE name = ?",
                        q, 2, NULL, NULL, err);
        if (rc == PURSER_EEXISTS)
            rc = purser_error_set(err, PURSER_EEXISTS,
                                  "external id '%.80s' belongs to another organization (or is "
                                  "given twice)",
                                  json_string_value(x));
    }
    return rc;
}

static int insert_org(struct store *store, void *ctx, struct purser_error *err)
{
    struct new_org *no = ctx;
    char *guid = crypto_random_hex(16);
    char *revision = crypto_random_hex(8);
    struct store_value p[] = {STORE_STR(no->name),
                              STORE_STR(no->full_name),
                              STORE_STR(guid ? guid : ""),
                              no->labels ? (struct store_value)STORE_STR(no->labels)
                                         : (struct store_value)STORE_NULLV,
                              STORE_STR(revision ? revision : ""),
                              no->sub_kind ? (struct store_value)STORE_STR(no->sub_kind)
                                           : (struct store_value)STORE_NULLV};
    int rc = guid && revision
                 ? store_exec(store,
                              "INSERT INTO organizations (name, full_name, guid, labels, revision,"
                              " sub_kind) VALUES (?, ?, ?, ?, ?, ?)",
                              p, 6, NULL, NULL, err)
                 : purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    free(revision);
    free(guid);
    if (rc == PURSER_EEXISTS)
        return purser_error_set(err, PURSER_EEXISTS, "Organization already exists");
    if (!rc && no->external)
        rc = write_external_ids(store, no->name, no->external, err);
    if (!rc)
        rc = identity_principal_insert(store, &no->validator, err);
    if (!rc)
        rc = event_append_named(store, no->actor, no->name, "organization", no->name, "put", NULL,
                                NULL, err);
    if (!rc)
        rc = event_append_named(store, no->actor, no->name, "client", no->validator.name, "put",
                                NULL, NULL, err);
    return rc;
}

int identity_org_create(struct store *store, const char *actor, const json_t *body,
                        const struct links *links, json_t **out, struct purser_error *err)
{
    struct new_org no;
    char validator_name[300];
    char *private_pem = NULL, *public_pem = NULL;
    int rc, sub_kind_given;

    memset(&no, 0, sizeof(no));
    no.actor = actor;
    rc = identity_require_object(body, err);
    if (!rc)
        rc = identity_field_string(body, "name", &no.name, err);
    if (!rc)
        rc = identity_field_string(body, "full_name", &no.full_name, err);
    if (!rc && !no.name)
        rc = identity_missing(err, "name");
    if (!rc && !identity_name_ok(no.name, 0))
        rc = identity_invalid(err, "name");
    if (!rc) {
        if (!no.full_name)
            no.full_name = no.name;
        if (strlen(no.full_name) > 1023)
            rc = identity_invalid(err, "full_name");
    }
    if (!rc) {
        no.external = json_object_get(body, "external_ids");
        rc = check_external_ids(no.external, err);
        if (!rc)
            rc = org_sub_kind(body, &sub_kind_given, &no.sub_kind, err);
        if (!rc)
            rc = identity_labels(body, &no.labels, err);
    }
    if (!rc) {
        snprintf(validator_name, sizeof(validator_name), "%s-validator", no.name);
        rc = crypto_rsa_generate(&private_pem, &public_pem, 2048, err);
    }
    if (!rc) {
        no.validator = (struct new_principal){.org = no.name,
                                              .name = validator_name,
                                              .validator = 1,
                                              .public_key = public_pem,
                                              .role = "validator"};
        rc = store_txn(store, 0, insert_org, &no, err);
        free(no.labels);
        if (!rc)
            *out = json_pack("{s:o, s:s, s:s}", "uri",
                             link_url(links, LINK_ORGANIZATION, no.name, NULL, NULL), "clientname",
                             validator_name, "private_key", private_pem);
        crypto_free_secret(private_pem);
        free(public_pem);
    }
    return rc;
}

int identity_org_get(struct store *store, struct arena *arena, const char *org, json_t **out,
                     const char **revision, struct purser_error *err)
{
    struct store_rows rows;
    struct store_value p = STORE_STR(org);
    struct store_rows ids;
    int rc = store_query(store, arena, &rows,
                         "SELECT name, full_name, guid, labels, revision, sub_kind FROM"
                         " organizations WHERE name = ?",
                         &p, 1, err);
    if (!rc && rows.count)
        rc = store_query(store, arena, &ids,
                         "SELECT x.external_id FROM organization_external_ids x JOIN organizations"
                         " o ON o.id = x.org_id WHERE o.name = ? ORDER BY x.external_id",
                         &p, 1, err);
    if (!rc && rows.count == 0)
        rc = purser_error_set(err, PURSER_ENOTFOUND, "organization '%s' does not exist", org);
    if (!rc) {
        *out = json_pack("{s:s, s:s, s:s, s:o, s:[]}", "name", store_cell(&rows, 0, 0), "full_name",
                         store_cell(&rows, 0, 1), "guid", store_cell(&rows, 0, 2), "labels",
                         identity_labels_value(store_cell(&rows, 0, 3)), "external_ids");
        for (size_t i = 0; i < ids.count; i++)
            json_array_append_new(json_object_get(*out, "external_ids"),
                                  json_string(store_cell(&ids, i, 0)));
        if (store_cell(&rows, 0, 5)) /* beyond Chef's fields, when set */
            json_object_set_new(*out, "sub_kind", json_string(store_cell(&rows, 0, 5)));
        if (revision)
            *revision = store_cell(&rows, 0, 4);
    }
    return rc;
}

struct org_change {
    const char *actor; /* who writes */
    const char *org, *full_name, *sub_kind;
    int sub_kind_given, changes;
    char *labels;
    const json_t *external;
    struct identity_row row;
};

static int change_org(struct store *store, void *ctx, struct purser_error *err)
{
    struct org_change *c = ctx;
    struct arena *arena = arena_new();
    struct store_rows found;
    struct store_value name = STORE_STR(c->org);
    int rc = arena ? store_query(store, arena, &found,
                                 "SELECT id FROM organizations WHERE name = ?", &name, 1, err)
                   : purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    if (!rc && found.count == 0)
        rc = purser_error_set(err, PURSER_ENOTFOUND, "organization '%s' does not exist", c->org);
    if (!rc) {
        c->row.key[0] = (struct store_value)STORE_INT(atoll(store_cell(&found, 0, 0)));
        rc = identity_revision_check(store, arena, &c->row, err);
    }
    if (!rc && c->labels) {
        struct store_value p[] = {STORE_STR(c->labels), name};
        rc = store_exec(store, "UPDATE organizations SET labels = ? WHERE name = ?", p, 2, NULL,
                        NULL, err);
    }
    if (!rc && c->external)
        rc = write_external_ids(store, c->org, c->external, err);
    if (!rc && c->full_name) {
        struct store_value p[] = {STORE_STR(c->full_name), name};
        rc = store_exec(store, "UPDATE organizations SET full_name = ? WHERE name = ?", p, 2, NULL,
                        NULL, err);
    }
    if (!rc && c->sub_kind_given) {
        struct store_value p[] = {c->sub_kind ? STORE_STR(c->sub_kind) : STORE_NULLV, name};
        rc = store_exec(store, "UPDATE organizations SET sub_kind = ? WHERE name = ?", p, 2, NULL,
                        NULL, err);
    }
    if (!rc && c->changes)
        rc = identity_revision_bump(store, &c->row, err);
    if (!rc && c->changes)
        rc = event_append_named(store, c->actor, c->org, "organization", c->org, "put",
                                c->row.revision, NULL, err);
    arena_free(arena);
    return rc;
}

/* PUT's body (the fields given change) written, conditional on if_match. */
static int org_write(struct store *store, const char *actor, const char *org, const json_t *body,
                     const char *if_match, struct purser_error *err)
{
    const char *full_name, *name;
    struct org_change c = {
        .actor = actor,
        .org = org,
        .external = json_object_get(body, "external_ids"),
        .row = {
            .table = IDENTITY_ROW_ORG, .kind = "Organization", .name = org, .if_match = if_match}};
    int rc;
    rc = identity_require_object(body, err);
    if (!rc)
        rc = identity_field_string(body, "full_name", &full_name, err);
    if (!rc)
        rc = identity_field_string(body, "name", &name, err);
    if (!rc && name && strcmp(name, org) != 0)
        rc = purser_error_set(err, PURSER_EINVAL, "Field 'name' cannot be changed");
    if (!rc) {
        rc = check_external_ids(c.external, err);
        if (!rc)
            rc = org_sub_kind(body, &c.sub_kind_given, &c.sub_kind, err);
    }
    if (!rc && full_name && strlen(full_name) > 1023)
        rc = identity_invalid(err, "full_name");
    if (!rc) {
        c.full_name = full_name;
        rc = identity_labels(body, &c.labels, err);
    }
    if (!rc) {
        c.changes = c.labels || c.external || c.full_name || c.sub_kind_given;
        if (c.changes || if_match) /* a condition alone is checked, and changes nothing */
            rc = store_txn(store, 0, change_org, &c, err);
        free(c.labels);
    }
    return rc;
}

/* A merge patch of what GET shows: what it removes is emptied (full_name, name and guid stay). */
static int org_target(const json_t *current, const json_t *patch, json_t **out,
                      struct purser_error *err)
{
    static const char *const fixed[] = {"name", "guid"};
    json_t *target = merge_patch(current, patch);
    if (!target)
        return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    *out = target;
    for (size_t i = 0; i < 2; i++)
        if (!json_equal(json_object_get(target, fixed[i]), json_object_get(current, fixed[i])))
            return purser_error_set(err, PURSER_EINVAL, "Field '%s' cannot be changed", fixed[i]);
    if (!json_is_string(json_object_get(target, "full_name")))
        return purser_error_set(err, PURSER_EINVAL, "Field 'full_name' cannot be removed");
    if (!json_object_get(target, "labels"))
        json_object_set_new(target, "labels", json_object());
    if (!json_object_get(target, "external_ids"))
        json_object_set_new(target, "external_ids", json_array());
    if (!json_object_get(target, "sub_kind"))
        json_object_set_new(target, "sub_kind", json_null());
    return 0;
}

int identity_org_update(struct store *store, const char *actor, struct arena *arena,
                        const char *org, const json_t *body, struct identity_cond *cond,
                        json_t **out, struct purser_error *err)
{
    const char *if_match = cond ? cond->if_match : NULL;
    int rc = 0;
    *out = NULL;
    if (cond && cond->merge && !json_is_object(body))
        return purser_error_set(err, PURSER_EINVAL, "a merge patch must be a JSON object");
    /* a merge patch is computed from a revision and written on it: when another write came
     * between and the caller named no revision, it is computed again */
    for (int attempt = 0; cond && cond->merge && attempt < 5; attempt++) {
        json_t *current = NULL, *target = NULL;
        const char *revision;
        rc = identity_org_get(store, arena, org, &current, &revision, err);
        if (!rc)
            rc = org_target(current, body, &target, err);
        if (!rc)
            rc = org_write(store, actor, org, target, if_match ? if_match : revision, err);
        json_decref(current);
        json_decref(target);
        if (rc != PURSER_ECOMPARE || if_match)
            break;
    }
    if (!(cond && cond->merge))
        rc = org_write(store, actor, org, body, if_match, err);
    if (!rc)
        rc = identity_org_get(store, arena, org, out, cond ? &cond->revision : NULL, err);
    return rc;
}

/* What an organization holds besides its validator and members, in the order a message
 * lists it: per row the order, the key of the counts, the words for one and for many, and
 * how many. Resources count per kind (clusters now, every kind added later). The one list of
 * what makes an organization non-empty: its delete and an import into it both ask it. */
static const char org_contents_sql[] =
    "SELECT 1, CONCAT(kind, 's'), kind, CONCAT(kind, 's'), COUNT(*) FROM resources"
    " WHERE org_id = ? GROUP BY kind"
    " UNION ALL SELECT 2, 'nodes', 'node', 'nodes', COUNT(*) FROM nodes WHERE org_id = ?"
    " UNION ALL SELECT 3, 'policies', 'policy', 'policies', COUNT(*) FROM policies"
    " WHERE org_id = ?"
    " UNION ALL SELECT 4, 'policy_groups', 'policy group', 'policy groups', COUNT(*)"
    " FROM policy_groups WHERE org_id = ?"
    " UNION ALL SELECT 5, 'cookbook_artifacts', 'cookbook artifact', 'cookbook artifacts',"
    " COUNT(*) FROM cookbook_artifacts WHERE org_id = ?"
    " UNION ALL SELECT 6, 'document_revisions', 'document revision', 'document revisions',"
    " COUNT(*) FROM doc_revisions WHERE org_id = ?"
    " UNION ALL SELECT 7, 'clients', 'client', 'clients', COUNT(*) FROM principals"
    " WHERE kind = 'client' AND org_id = ? AND name <> CONCAT(?, '-validator')"
    " UNION ALL SELECT 8, 'files', 'uploaded file', 'uploaded files', COUNT(*)"
    " FROM file_contents WHERE org_id = ?"
    " UNION ALL SELECT 9, 'sandboxes', 'sandbox', 'sandboxes', COUNT(*) FROM sandboxes"
    " WHERE org_id = ?"
    " ORDER BY 1, 2";

struct org_delete {
    struct arena *arena;
    const char *org, *if_match;
    int force;
    json_t *contents; /* {key: count} of what it holds */
    const char *held; /* the same in words, "2 clusters, 1 node" (arena); NULL for nothing */
};

int identity_org_contents(struct store *store, struct arena *arena, long long oid, const char *org,
                          json_t *contents, const char **held, struct purser_error *err)
{
    struct store_value id = STORE_INT(oid);
    struct store_value p[] = {id, id, id, id, id, id, id, STORE_STR(org), id, id};
    struct store_rows rows;
    int rc = store_query(store, arena, &rows, org_contents_sql, p, 10, err);
    json_object_clear(contents);
    *held = NULL;
    for (size_t i = 0; !rc && i < rows.count; i++) {
        long long n = atoll(store_cell(&rows, i, 4));
        if (n == 0)
            continue;
        json_object_set_new(contents, store_cell(&rows, i, 1), json_integer(n));
        *held = arena_sprintf(arena, "%s%s%lld %s", *held ? *held : "", *held ? ", " : "", n,
                              store_cell(&rows, i, n == 1 ? 2 : 3));
        if (!*held)
            rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    }
    return rc;
}

static int delete_org_txn(struct store *store, void *ctx, struct purser_error *err)
{
    struct org_delete *d = ctx;
    struct store_rows rows;
    struct store_value p = STORE_STR(d->org);
    /* Locked, the organization takes no new row until the delete commits (adding one checks
     * it): what is deleted is what was counted. */
    int rc =
        store_query(store, d->arena, &rows,
                    "SELECT id, revision FROM organizations WHERE name = ? FOR UPDATE", &p, 1, err);
    if (!rc && rows.count == 0)
        rc = purser_error_set(err, PURSER_ENOTFOUND, "organization '%s' does not exist", d->org);
    if (!rc)
        rc = resource_precondition(d->arena, "Organization", d->org, d->if_match,
                                   store_cell(&rows, 0, 1), 0, err);
    if (!rc)
        rc = identity_org_contents(store, d->arena, atoll(store_cell(&rows, 0, 0)), d->org,
                                   d->contents, &d->held, err);
    if (!rc && d->held && !d->force)
        rc = purser_error_set(err, PURSER_EEXISTS, "organization '%.80s' is not empty: %s", d->org,
                              d->held);
    if (!rc)
        rc = store_exec(store, "DELETE FROM organizations WHERE name = ?", &p, 1, NULL, NULL, err);
    return rc;
}

int identity_org_delete(struct store *store, struct arena *arena, const char *org, int force,
                        const char *if_match, json_t **out, json_t **contents,
                        struct purser_error *err)
{
    struct org_delete d = {.arena = arena,
                           .org = org,
                           .if_match = if_match,
                           .force = force,
                           .contents = json_object()};
    int rc = identity_org_get(store, arena, org, out, NULL, err);
    if (!rc)
        rc = store_txn(store, 0, delete_org_txn, &d, err);
    if (rc) {
        json_decref(*out);
        *out = NULL;
    }
    if (contents)
        *contents = d.contents;
    else
        json_decref(d.contents);
    return rc;
}
/* ---- members -------------------------------------------------------------------------------- */

int identity_member_list(struct store *store, struct arena *arena, const char *org,
                         const struct identity_list *narrow, json_t **out, struct purser_error *err)
{
    struct store_rows rows;
    struct identity_list l = {.org = org};
    const char **names;
    size_t count;
    long long oid;
    struct store_value p;
    json_t *last = NULL;
    int rc = identity_org_id(store, arena, org, &oid, err);
    if (narrow)
        l.q = narrow->q;
    if (!rc) {
        identity_expire(store, "user", 0, NULL); /* what has expired goes first, with its events */
        rc = identity_selection(&identity_member_kind, store, arena, &l, &names, &count, err);
    }
    if (!rc) {
        p = (struct store_value)STORE_INT(oid);
        rc = store_query(
            store, arena, &rows,
            "SELECT p.name, m.role, m.policy_groups FROM memberships m JOIN principals p"
            " ON p.id = m.principal_id WHERE m.org_id = ? AND p.kind = 'user' AND"
            " (p.expires_at IS NULL OR p.expires_at > NOW(6)) ORDER BY p.name, m.role",
            &p, 1, err);
    }
    if (!rc) {
        *out = json_array();
        for (size_t i = 0; i < rows.count; i++) {
            const char *user = store_cell(&rows, i, 0), *groups = store_cell(&rows, i, 2);
            if (!identity_keep(names, count, user))
                continue;
            if (!last || strcmp(json_string_value(json_object_get(last, "username")), user) != 0) {
                last = json_pack("{s:s, s:[]}", "username", user, "roles");
                json_array_append_new(*out, json_pack("{s:o}", "user", last));
            }
            json_array_append_new(json_object_get(last, "roles"),
                                  json_string(store_cell(&rows, i, 1)));
            if (groups) { /* only the limited roles: {role: [patterns]} */
                json_t *limited = json_object_get(last, "policy_groups");
                if (!limited)
                    json_object_set_new(last, "policy_groups", limited = json_object());
                json_object_set_new(limited, store_cell(&rows, i, 1),
                                    identity_split_groups(groups));
            }
        }
    }
    return rc;
}

struct member_add {
    const char *actor; /* who writes */
    const char *org, *user;
    const json_t *roles;
    const json_t *groups; /* {role: "patterns,joined" or null} of the roles the request limits
                             (or frees: null); a role not in it keeps the limit it had */
    json_t *held;         /* out: every role the member holds after the add, by name */
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
        const char *name = json_string_value(role);
        const json_t *given = json_object_get(m->groups, name);
        struct store_value p[] = {STORE_INT(oid), STORE_INT(uid), STORE_STR(name),
                                  json_is_string(given) ? STORE_STR(json_string_value(given))
                                                        : STORE_NULLV,
                                  STORE_INT(given != NULL)};
        if (rc)
            break;
        /* a role granted again keeps its limit unless the request gives one (or null: none) */
        rc = store_exec(store,
                        "INSERT INTO memberships (org_id, principal_id, role, policy_groups) VALUES"
                        " (?, ?, ?, ?) ON DUPLICATE KEY UPDATE policy_groups ="
                        " IF(?, VALUES(policy_groups), policy_groups)",
                        p, 5, NULL, NULL, err);
    }
    if (!rc)
        rc = event_append(store, m->actor, oid, "member", m->user, "put", NULL, NULL, err);
    if (!rc) { /* a POST adds roles (Chef's association): the answer says what is held now */
        struct store_value q[] = {STORE_INT(oid), STORE_INT(uid)};
        struct store_rows rows;
        rc = store_query(store, arena, &rows,
                         "SELECT role FROM memberships WHERE org_id = ? AND principal_id = ?"
                         " ORDER BY role",
                         q, 2, err);
        json_decref(m->held);
        m->held = json_array();
        for (i = 0; !rc && i < rows.count; i++)
            json_array_append_new(m->held, json_string(store_cell(&rows, i, 0)));
    }
    arena_free(arena);
    return rc;
}

/* body.policy_groups: absent, or {role: [patterns] or null} for roles the request grants; *out
 * {role: "joined" or null}. */
static int member_groups(const json_t *body, const json_t *roles, json_t **out,
                         struct purser_error *err)
{
    const json_t *given = json_object_get(body, "policy_groups"), *patterns;
    const char *role;
    *out = json_object();
    if (!given || json_is_null(given))
        return 0;
    if (!json_is_object(given))
        return purser_error_set(err, PURSER_EINVAL,
                                "Field 'policy_groups' invalid: a mapping of role to a list of "
                                "policy group names or patterns");
    json_object_foreach ((json_t *)given, role, patterns) {
        size_t i;
        json_t *r, *item;
        int granted = 0;
        char *joined;
        json_array_foreach (roles, i, r)
            granted |= strcmp(json_string_value(r), role) == 0;
        if (!granted)
            return purser_error_set(err, PURSER_EINVAL,
                                    "Field 'policy_groups.%.64s' invalid: the request does not "
                                    "grant role %.64s",
                                    role, role);
        if (json_is_null(patterns)) { /* the role's limit lifted */
            json_object_set_new(*out, role, json_null());
            continue;
        }
        if (!json_is_array(patterns) || json_array_size(patterns) == 0 ||
            json_array_size(patterns) > 64)
            return purser_error_set(err, PURSER_EINVAL,
                                    "Field 'policy_groups.%.64s' invalid: 1 to 64 policy group "
                                    "names or patterns",
                                    role);
        json_array_foreach (patterns, i, item)
            if (!json_is_string(item) || !rbac_group_pattern_ok(json_string_value(item)))
                return purser_error_set(err, PURSER_EINVAL,
                                        "Field 'policy_groups.%.64s[%zu]' invalid: a policy "
                                        "group name or pattern ([A-Za-z0-9._:-], * and ?)",
                                        role, i);
        if (!(joined = identity_join_groups(patterns)))
            return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
        if (strlen(joined) > 4096) {
            free(joined);
            return purser_error_set(err, PURSER_EINVAL,
                                    "Field 'policy_groups.%.64s' invalid: at most 4096 characters "
                                    "in all",
                                    role);
        }
        json_object_set_new(*out, role, json_string(joined));
        free(joined);
    }
    return 0;
}

int identity_member_add(struct store *store, const char *actor, const char *org, const json_t *body,
                        int (*valid_role)(const char *role, void *ctx), void *ctx, json_t **out,
                        struct purser_error *err)
{
    struct member_add m = {.actor = actor, .org = org};
    json_t *roles = NULL, *role, *groups = NULL;
    size_t i;
    int rc;

    rc = identity_require_object(body, err);
    if (!rc)
        rc = identity_field_string(body, "username", &m.user, err);
    if (!rc && !m.user)
        rc = identity_missing(err, "username");
    if (!rc) {
        roles = json_object_get(body, "roles");
        if (!roles)
            roles = json_pack("[s]", "reader");
        else if (!json_is_array(roles) || json_array_size(roles) == 0)
            rc = identity_invalid(err, "roles");
        else
            json_incref(roles);
    }
    if (!rc) {
        json_array_foreach (roles, i, role) {
            if (!json_is_string(role) || !valid_role(json_string_value(role), ctx)) {
                json_decref(roles);
                return purser_error_set(err, PURSER_EINVAL, "Field 'roles': unknown role %s",
                                        json_is_string(role) ? json_string_value(role)
                                                             : "(not a string)");
            }
        }
        rc = member_groups(body, roles, &groups, err);
        m.roles = roles;
        m.groups = groups;
        if (!rc)
            rc = store_txn(store, 0, txn_member_add, &m, err);
        if (!rc) {
            *out = json_pack("{s:{s:s, s:O}}", "user", "username", m.user, "roles",
                             m.held ? m.held : roles);
            if (json_object_size(groups)) {
                json_t *shown = json_object(), *joined;
                const char *name;
                json_object_foreach (groups, name, joined)
                    if (json_is_string(joined))
                        json_object_set_new(shown, name,
                                            identity_split_groups(json_string_value(joined)));
                json_object_set_new(json_object_get(*out, "user"), "policy_groups", shown);
            }
        }
        json_decref(m.held);
        json_decref(roles);
        json_decref(groups);
    }
    return rc;
}

struct client_roles {
    const char *org, *name;
    const json_t *roles;
    const json_t *groups; /* {role: "patterns,joined" or null} */
};

static int txn_client_roles(struct store *store, void *ctx, struct purser_error *err)
{
    struct client_roles *c = ctx;
    struct arena *arena = arena_new();
    long long oid = 0, cid = 0;
    size_t i;
    json_t *role;
    int rc = arena ? 0 : purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    if (!rc)
        rc = identity_org_id(store, arena, c->org, &oid, err);
    if (!rc)
        rc = identity_principal_id(store, arena, c->org, c->name, &cid, err);
    if (!rc)
        rc = store_exec(store, "DELETE FROM memberships WHERE org_id = ? AND principal_id = ?",
                        (struct store_value[]){STORE_INT(oid), STORE_INT(cid)}, 2, NULL, NULL, err);
    json_array_foreach (c->roles, i, role) {
        const json_t *given = json_object_get(c->groups, json_string_value(role));
        struct store_value p[] = {
            STORE_INT(oid), STORE_INT(cid), STORE_STR(json_string_value(role)),
            json_is_string(given) ? STORE_STR(json_string_value(given)) : STORE_NULLV};
        if (!rc)
            rc = store_exec(store,
                            "INSERT INTO memberships (org_id, principal_id, role, policy_groups)"
                            " VALUES (?, ?, ?, ?)",
                            p, 4, NULL, NULL, err);
    }
    arena_free(arena);
    return rc;
}

int identity_client_roles_set(struct store *store, const char *org, const char *name,
                              const json_t *body, int (*valid_role)(const char *role, void *ctx),
                              void *ctx, struct purser_error *err)
{
    struct client_roles c = {.org = org, .name = name, .roles = json_object_get(body, "roles")};
    json_t *groups = NULL, *role;
    size_t i;
    int rc = json_is_array(c.roles) ? 0 : identity_invalid(err, "roles");
    json_array_foreach (c.roles, i, role)
        if (!rc && (!json_is_string(role) || !valid_role(json_string_value(role), ctx)))
            rc =
                purser_error_set(err, PURSER_EINVAL, "Field 'roles[%zu]': unknown role %.64s", i,
                                 json_is_string(role) ? json_string_value(role) : "(not a string)");
    if (!rc)
        rc = member_groups(body, c.roles, &groups, err);
    c.groups = groups;
    if (!rc)
        rc = store_txn(store, 0, txn_client_roles, &c, err);
    json_decref(groups);
    return rc;
}

int identity_member_remove(struct store *store, const char *actor, const char *org,
                           const char *user, struct purser_error *err)
{
    struct identity_batch batch = {
        .actor = actor, .org = org, .kind = "member", .name = user, .op = "delete"};
    int rc;
    identity_batch_add(&batch,
                       "DELETE m FROM memberships m JOIN organizations o ON o.id = m.org_id"
                       " JOIN principals p ON p.id = m.principal_id"
                       " WHERE o.name = ? AND p.kind = 'user' AND p.name = ?",
                       (struct store_value[]){STORE_STR(org), STORE_STR(user)}, 2);
    rc = identity_batch_run(store, &batch, err);
    if (!rc && batch.affected == 0)
        return purser_error_set(err, PURSER_ENOTFOUND, "user '%s' is not a member of '%s'", user,
                                org);
    return rc;
}
