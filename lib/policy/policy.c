/* policy.c: SQL and Chef-shaped JSON for policies and their revisions. */
#include "policy/policy.h"
#include "policy/policy_private.h"
#include "store/events.h"

#include "auth/identity.h"
#include "base/buf.h"
#include "base/crypto.h"
#include "base/json_text.h"
#include "policy/policy_lock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

json_t *policy_parse_stored(const char *text)
{
    return text ? json_loads(text, 0, NULL) : NULL;
}

int policy_not_found(struct purser_error *err, const char *what, const char *name)
{
    return purser_error_set(err, PURSER_ENOTFOUND, "Cannot load %s %s", what, name);
}

/* The stored text of a lock (compact, key order kept, no policy_group) and the SHA-256 of
 * its canonical form (sorted keys). The caller frees *text. */
static int lock_texts(const json_t *lock, char **text, char sha[65], struct purser_error *err)
{
    json_t *copy = json_copy((json_t *)lock);
    char *canonical;
    *text = NULL;
    if (!copy)
        return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    json_object_del(copy, "policy_group");
    *text = json_text(copy, JSON_COMPACT);
    canonical = json_text(copy, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(copy);
    if (!*text || !canonical) {
        free(*text);
        free(canonical);
        *text = NULL;
        return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    }
    crypto_sha256_hex(sha, canonical, strlen(canonical));
    free(canonical);
    return 0;
}

/* Runs a DELETE of what *out was just read as (rc: the read's result) with its event (kind,
 * name in organization org), dropping *out when anything failed, so that a delete answers
 * what it removed or nothing. */
int policy_delete_read(struct store *store, const char *actor, int rc, const char *sql,
                       const struct store_value *p, size_t n, const char *org, const char *kind,
                       const char *name, json_t **out, struct purser_error *err)
{
    if (!rc)
        rc = event_exec(store, actor, 0, org, sql, p, n, NULL, kind, name, "delete", err);
    if (rc && *out) {
        json_decref(*out);
        *out = NULL;
    }
    return rc;
}

/* ---- policies ------------------------------------------------------------------------------ */

#define REVISIONS_OF_ORG                                                                           \
    "SELECT p.name, r.revision_id, " STORE_ISO_TIME(                                               \
        "r.created_at") ", r.created_by FROM policies p"                                           \
                        " JOIN organizations o ON o.id = p.org_id"                                 \
                        " LEFT JOIN policy_revisions r ON r.policy_id = p.id WHERE o.name = ?"

/* {revisions: {rev: {created_at, created_by}}} objects per policy, from REVISIONS_OF_ORG rows. */
static json_t *revisions_by_policy(const struct store_rows *rows)
{
    json_t *by_policy = json_object();
    for (size_t i = 0; i < rows->count; i++) {
        const char *policy = store_cell(rows, i, 0);
        json_t *entry = json_object_get(by_policy, policy);
        if (!entry) {
            entry = json_pack("{s:{}}", "revisions");
            json_object_set_new(by_policy, policy, entry);
        }
        if (store_cell(rows, i, 1))
            json_object_set_new(json_object_get(entry, "revisions"), store_cell(rows, i, 1),
                                json_pack("{s:s, s:s}", "created_at", store_cell(rows, i, 2),
                                          "created_by", store_cell(rows, i, 3)));
    }
    return by_policy;
}

int policy_list(struct store *store, struct arena *arena, const char *org,
                const struct links *links, json_t **out, struct purser_error *err)
{
    struct store_rows rows;
    struct store_value p = STORE_STR(org);
    const char *name;
    json_t *entry;
    long long oid;
    int rc = identity_org_id(store, arena, org, &oid, err);
    if (!rc)
        rc = store_query(store, arena, &rows,
                         REVISIONS_OF_ORG " ORDER BY p.name, r.created_at, r.id", &p, 1, err);
    if (!rc) {
        *out = revisions_by_policy(&rows);
        json_object_foreach (*out, name, entry) {
            json_object_set_new(entry, "uri", link_url(links, LINK_POLICY, org, name, NULL));
        }
    }
    return rc;
}

int policy_get(struct store *store, struct arena *arena, const char *org, const char *name,
               json_t **out, struct purser_error *err)
{
    struct store_rows rows;
    struct store_value p[] = {STORE_STR(org), STORE_STR(name)};
    json_t *all;
    int rc = store_query(store, arena, &rows,
                         REVISIONS_OF_ORG " AND p.name = ? ORDER BY r.created_at, r.id", p, 2, err);
    if (!rc && rows.count == 0)
        rc = policy_not_found(err, "policy", name);
    if (!rc) {
        all = revisions_by_policy(&rows);
        *out = json_incref(json_object_get(all, name));
        json_decref(all);
    }
    return rc;
}

/* A pointer of a group outside the checked ones appeared between the check and the delete. */
static int moved_meanwhile(struct purser_error *err, const char *what, const char *name)
{
    return purser_error_set(err, PURSER_EEXISTS,
                            "a policy group was pointed at %s '%s' since it was checked: try again",
                            what, name);
}

int policy_delete(struct store *store, const char *actor, struct arena *arena, const char *org,
                  const char *name, const char *groups, json_t **out, struct purser_error *err)
{
    struct store_value p[] = {STORE_STR(org), STORE_STR(name),
                              groups ? STORE_STR(groups) : STORE_NULLV,
                              groups ? STORE_STR(groups) : STORE_NULLV};
    unsigned long long affected = 0;
    int rc = policy_get(store, arena, org, name, out, err);
    if (!rc) /* one statement: the pointers it may take are read as it deletes */
        rc = event_exec(store, actor, 0, org,
                        "DELETE p FROM policies p JOIN organizations o ON o.id = p.org_id"
                        " WHERE o.name = ? AND p.name = ? AND (? IS NULL OR NOT EXISTS (SELECT 1"
                        " FROM policy_revisions r JOIN policy_group_pointers pp ON"
                        " pp.revision_pk = r.id JOIN policy_groups g ON g.id = pp.group_id"
                        " WHERE r.policy_id = p.id AND NOT FIND_IN_SET(g.name, ?)))",
                        p, 4, &affected, "policy", name, "delete", err);
    if (!rc && !affected)
        rc = moved_meanwhile(err, "a revision of policy", name);
    if (rc && *out) {
        json_decref(*out);
        *out = NULL;
    }
    return rc;
}

/* The id of the row named name in table (policies or policy_groups) of organization oid,
 * inserting it when missing. */
int policy_ensure_named(struct store *store, struct arena *arena, const char *insert_sql,
                        const char *select_sql, long long oid, const char *name, long long *id,
                        struct purser_error *err)
{
    struct store_value p[] = {STORE_INT(oid), STORE_STR(name)};
    struct store_rows rows;
    int rc = store_exec(store, insert_sql, p, 2, NULL, NULL, err);
    if (!rc)
        rc = store_query(store, arena, &rows, select_sql, p, 2, err);
    if (!rc && rows.count == 0)
        rc = purser_error_set(err, PURSER_EINTERNAL, "row '%s' vanished while being written", name);
    if (!rc)
        *id = atoll(store_cell(&rows, 0, 0));
    return rc;
}

/* Stores the revision unless it is there with the same content; *revision_pk gets its id.
 * Insert first and look only on a duplicate: a locking read of a row that does not exist
 * takes a gap lock, and racing uploads would deadlock on it. */
static int revision_insert(struct store *store, struct arena *arena, struct revision_write *w,
                           long long policy_id, long long *revision_pk, struct purser_error *err)
{
    struct store_value key[] = {STORE_INT(policy_id), STORE_STR(w->revision)};
    struct store_rows rows;
    unsigned long long id = 0;
    int rc = 0;

    if (w->text) {
        struct store_value p[] = {STORE_INT(policy_id), STORE_STR(w->revision), STORE_STR(w->sha),
                                  STORE_STR(w->text), STORE_STR(w->who)};
        rc = store_exec(store,
                        "INSERT INTO policy_revisions (policy_id, revision_id, content_sha256,"
                        " body, created_by) VALUES (?, ?, ?, ?, ?)",
                        p, 5, NULL, &id, err);
        if (!rc) {
            *revision_pk = (long long)id;
            w->inserted = 1;
            return 0;
        }
        if (rc != PURSER_EEXISTS)
            return rc;
    }
    /* After a duplicate, the row is another writer's that committed while this insert waited:
     * a locking read sees it (a plain read would look at this transaction's older snapshot
     * and find nothing). */
    rc = store_query(store, arena, &rows,
                     w->text ? "SELECT id, content_sha256 FROM policy_revisions"
                               " WHERE policy_id = ? AND revision_id = ? LOCK IN SHARE MODE"
                             : "SELECT id, content_sha256 FROM policy_revisions"
                               " WHERE policy_id = ? AND revision_id = ?",
                     key, 2, err);
    if (!rc && rows.count == 0 && w->text) /* the other writer rolled back after all */
        rc = purser_error_set(err, PURSER_EEXISTS,
                              "Policy '%s' with revision_id '%s' was being written by another "
                              "request; try again",
                              w->name, w->revision);
    else if (!rc && rows.count == 0)
        rc = purser_error_set(err, PURSER_ENOTFOUND, "Cannot load policy %s with revision %s",
                              w->name, w->revision);
    if (!rc && w->text && (w->must_be_new || strcmp(store_cell(&rows, 0, 1), w->sha) != 0))
        rc = purser_error_set(err, PURSER_EEXISTS,
                              "Policy '%s' with revision_id '%s' already exists%s.", w->name,
                              w->revision, w->must_be_new ? "" : " with different content");
    if (!rc)
        *revision_pk = atoll(store_cell(&rows, 0, 0));
    return rc;
}

int policy_revision_write_txn(struct store *store, void *ctx, struct purser_error *err)
{
    struct revision_write *w = ctx;
    w->inserted = 0; /* (a transaction run again starts over) */
    struct arena *arena = arena_new();
    long long oid = 0, policy_id = 0, group_id = 0, revision_pk = 0;
    int rc = arena ? identity_org_id(store, arena, w->org, &oid, err)
                   : purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    if (!rc && w->text)
        rc = policy_ensure_named(
            store, arena, "INSERT IGNORE INTO policies (org_id, name) VALUES (?, ?)",
            "SELECT id FROM policies WHERE org_id = ? AND name = ? LOCK IN SHARE MODE", oid,
            w->name, &policy_id, err);
    if (!rc && !w->text) {
        struct store_value p[] = {STORE_INT(oid), STORE_STR(w->name)};
        struct store_rows rows;
        rc = store_query(store, arena, &rows,
                         "SELECT id FROM policies WHERE org_id = ? AND name = ?", p, 2, err);
        if (!rc && rows.count == 0)
            rc = policy_not_found(err, "policy", w->name);
        if (!rc)
            policy_id = atoll(store_cell(&rows, 0, 0));
    }
    if (!rc)
        rc = revision_insert(store, arena, w, policy_id, &revision_pk, err);
    if (!rc && w->group)
        rc = policy_ensure_named(
            store, arena, "INSERT IGNORE INTO policy_groups (org_id, name) VALUES (?, ?)",
            "SELECT id FROM policy_groups WHERE org_id = ? AND name = ? LOCK IN SHARE MODE", oid,
            w->group, &group_id, err);
    if (!rc && w->group) {
        /* MariaDB counts 1 affected row for an insert, 2 for an update, 0 for no change. */
        struct store_value p[] = {STORE_INT(group_id), STORE_INT(policy_id), STORE_INT(revision_pk),
                                  STORE_STR(w->who)};
        unsigned long long affected = 0;
        rc = store_exec(store,
                        "INSERT INTO policy_group_pointers (group_id, policy_id, revision_pk,"
                        " updated_by) VALUES (?, ?, ?, ?) ON DUPLICATE KEY UPDATE"
                        " revision_pk = VALUES(revision_pk), updated_by = VALUES(updated_by)",
                        p, 4, &affected, NULL, err);
        w->created = !rc && affected == 1;
        if (!rc && affected) /* a new or moved pointer */
            rc = event_append(store, w->who, oid, "policy_group_pointer",
                              arena_sprintf(arena, "%s/%s", w->group, w->name), "put", w->revision,
                              NULL, err);
    }
    if (!rc && w->inserted)
        rc = event_append(store, w->who, oid, "policy_revision",
                          arena_sprintf(arena, "%s/%s", w->name, w->revision), "put", w->revision,
                          NULL, err);
    arena_free(arena);
    return rc;
}

int policy_revision_write(struct store *store, struct revision_write *w, const json_t *lock,
                          json_t **out, struct purser_error *err)
{
    char sha[65], *text = NULL;
    int rc = policy_lock_validate(lock, w->name, err);
    if (!rc && w->group && !policy_name_ok(w->group))
        rc = purser_error_set(err, PURSER_EINVAL, "Field 'policy_group' invalid");
    if (!rc)
        rc = lock_texts(lock, &text, sha, err);
    if (!rc) {
        w->revision = json_string_value(json_object_get(lock, "revision_id"));
        w->text = text;
        w->sha = sha;
        rc = store_txn(store, 0, policy_revision_write_txn, w, err);
        if (!rc)
            *out = policy_parse_stored(text);
        free(text);
    }
    return rc;
}

int policy_revision_create(struct store *store, const char *org, const char *name,
                           const json_t *lock, const char *who, json_t **out,
                           struct purser_error *err)
{
    struct revision_write w = {.org = org, .name = name, .who = who, .must_be_new = 1};
    return policy_revision_write(store, &w, lock, out, err);
}

/* Rows of a policy's revisions with the groups pointing at each: one per (revision, group),
 * a revision without groups once, a policy without revisions as one row of NULLs. */
#define REVISIONS_WITH_GROUPS                                                                      \
    "SELECT r.revision_id, " STORE_ISO_TIME(                                                       \
        "r.created_at") ", r.created_by, g.name"                                                   \
                        " FROM policies p JOIN organizations o ON o.id = p.org_id"                 \
                        " LEFT JOIN policy_revisions r ON r.policy_id = p.id"                      \
                        " LEFT JOIN policy_group_pointers pp ON pp.revision_pk = r.id"             \
                        " LEFT JOIN policy_groups g ON g.id = pp.group_id"                         \
                        " WHERE o.name = ? AND p.name = ? ORDER BY r.created_at, r.id, g.name"

int policy_revision_list(struct store *store, struct arena *arena, const char *org,
                         const char *name, const struct links *links, json_t **out,
                         struct purser_error *err)
{
    struct store_value p[] = {STORE_STR(org), STORE_STR(name)};
    struct store_rows rows;
    int rc = store_query(store, arena, &rows, REVISIONS_WITH_GROUPS, p, 2, err);
    if (!rc && rows.count == 0)
        rc = policy_not_found(err, "policy", name);
    if (!rc) {
        *out = json_object();
        for (size_t i = 0; i < rows.count; i++) {
            const char *revision = store_cell(&rows, i, 0), *group = store_cell(&rows, i, 3);
            json_t *entry = revision ? json_object_get(*out, revision) : NULL;
            if (revision && !entry) {
                entry = json_pack("{s:o, s:s, s:s, s:[]}", "uri",
                                  link_url(links, LINK_POLICY_REVISION, org, name, revision),
                                  "created_at", store_cell(&rows, i, 1), "created_by",
                                  store_cell(&rows, i, 2), "policy_group_list");
                json_object_set_new(*out, revision, entry);
            }
            if (entry && group)
                json_array_append_new(json_object_get(entry, "policy_group_list"),
                                      json_string(group));
        }
    }
    return rc;
}

#define REVISION_ROW                                                                               \
    "SELECT r.id, r.body FROM policy_revisions r JOIN policies p ON p.id = r.policy_id"            \
    " JOIN organizations o ON o.id = p.org_id"                                                     \
    " WHERE o.name = ? AND p.name = ? AND r.revision_id = ?"

/* The revision's row (id, body) into rows and its id into *pk; Chef's 404 when there is none. */
static int revision_row(struct store *store, struct arena *arena, const char *org, const char *name,
                        const char *revision, struct store_rows *rows, struct store_value *pk,
                        struct purser_error *err)
{
    struct store_value p[] = {STORE_STR(org), STORE_STR(name), STORE_STR(revision)};
    int rc = store_query(store, arena, rows, REVISION_ROW, p, 3, err);
    if (!rc && rows->count == 0)
        rc = purser_error_set(err, PURSER_ENOTFOUND, "Cannot load policy %s with revision %s", name,
                              revision);
    if (!rc)
        *pk = (struct store_value)STORE_INT(atoll(store_cell(rows, 0, 0)));
    return rc;
}

int policy_revision_get(struct store *store, struct arena *arena, const char *org, const char *name,
                        const char *revision, json_t **out, struct purser_error *err)
{
    struct store_rows rows, groups;
    struct store_value pk;
    json_t *list;
    int rc = revision_row(store, arena, org, name, revision, &rows, &pk, err);
    if (!rc)
        rc = store_query(store, arena, &groups,
                         "SELECT g.name FROM policy_group_pointers pp JOIN policy_groups g"
                         " ON g.id = pp.group_id WHERE pp.revision_pk = ? ORDER BY g.name",
                         &pk, 1, err);
    if (!rc) {
        *out = policy_parse_stored(store_cell(&rows, 0, 1));
        list = json_array();
        for (size_t i = 0; i < groups.count; i++)
            json_array_append_new(list, json_string(store_cell(&groups, i, 0)));
        json_object_set_new(*out, "policy_group_list", list);
    }
    return rc;
}

int policy_revision_delete(struct store *store, const char *actor, struct arena *arena,
                           const char *org, const char *name, const char *revision,
                           const char *groups, json_t **out, struct purser_error *err)
{
    struct store_rows rows;
    struct store_value p[3];
    unsigned long long affected = 0;
    int rc = revision_row(store, arena, org, name, revision, &rows, &p[0], err);
    if (!rc) {
        p[1] = groups ? (struct store_value)STORE_STR(groups) : (struct store_value)STORE_NULLV;
        p[2] = p[1];
        rc = event_exec(store, actor, 0, org,
                        "DELETE FROM policy_revisions WHERE id = ? AND (? IS NULL OR NOT EXISTS"
                        " (SELECT 1 FROM policy_group_pointers pp JOIN policy_groups g ON"
                        " g.id = pp.group_id WHERE pp.revision_pk = policy_revisions.id AND NOT"
                        " FIND_IN_SET(g.name, ?)))",
                        p, 3, &affected, "policy_revision",
                        arena_sprintf(arena, "%s/%s", name, revision), "delete", err);
        if (!rc && !affected)
            rc = moved_meanwhile(err, "revision", revision);
        if (!rc)
            *out = policy_parse_stored(store_cell(&rows, 0, 1));
    }
    return rc;
}
