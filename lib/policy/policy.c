/* policy.c: SQL and Chef-shaped JSON for policies, revisions, policy groups and nodes. */
#include "policy/policy.h"

#include "base/buf.h"
#include "base/crypto.h"
#include "auth/identity.h"
#include "policy/policy_diff.h"
#include "policy/policy_lock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ISO_TIME(col) "DATE_FORMAT(" col ", '%Y-%m-%dT%H:%i:%sZ')"

static json_t *parse_stored(const char *text)
{
    return text ? json_loads(text, 0, NULL) : NULL;
}

static int not_found(struct purser_error *err, const char *what, const char *name)
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
    *text = json_dumps(copy, JSON_COMPACT);
    canonical = json_dumps(copy, JSON_COMPACT | JSON_SORT_KEYS);
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

/* Runs a DELETE of what *out was just read as (rc: the read's result), dropping *out when
 * anything failed, so that a delete answers what it removed or nothing. */
static int delete_read(struct store *store, int rc, const char *sql, const struct store_value *p,
                       size_t n, json_t **out, struct purser_error *err)
{
    if (!rc)
        rc = store_exec(store, sql, p, n, NULL, NULL, err);
    if (rc && *out) {
        json_decref(*out);
        *out = NULL;
    }
    return rc;
}

/* ---- policies ------------------------------------------------------------------------------ */

#define REVISIONS_OF_ORG                                                                           \
    "SELECT p.name, r.revision_id, " ISO_TIME(                                                     \
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

int policy_list(struct store *store, struct arena *arena, const char *org, const char *base,
                json_t **out, struct purser_error *err)
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
    if (rc)
        return rc;
    *out = revisions_by_policy(&rows);
    json_object_foreach (*out, name, entry) {
        json_object_set_new(entry, "uri",
                            json_sprintf("%s/organizations/%s/policies/%s", base, org, name));
    }
    return 0;
}

int policy_get(struct store *store, struct arena *arena, const char *org, const char *name,
               json_t **out, struct purser_error *err)
{
    struct store_rows rows;
    struct store_value p[] = {STORE_STR(org), STORE_STR(name)};
    json_t *all;
    int rc = store_query(store, arena, &rows,
                         REVISIONS_OF_ORG " AND p.name = ? ORDER BY r.created_at, r.id", p, 2, err);
    if (rc)
        return rc;
    if (rows.count == 0)
        return not_found(err, "policy", name);
    all = revisions_by_policy(&rows);
    *out = json_incref(json_object_get(all, name));
    json_decref(all);
    return 0;
}

int policy_delete(struct store *store, struct arena *arena, const char *org, const char *name,
                  json_t **out, struct purser_error *err)
{
    struct store_value p[] = {STORE_STR(org), STORE_STR(name)};
    int rc = policy_get(store, arena, org, name, out, err);
    return delete_read(store, rc,
                       "DELETE p FROM policies p JOIN organizations o ON o.id = p.org_id"
                       " WHERE o.name = ? AND p.name = ?",
                       p, 2, out, err);
}

/* The id of the row named name in table (policies or policy_groups) of organization oid,
 * inserting it when missing. */
static int ensure_named(struct store *store, struct arena *arena, const char *insert_sql,
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

struct revision_write {
    const char *org, *group, *name, *revision, *who;
    const char *text, *sha; /* the lock to store; NULL: point at the stored revision */
    int must_be_new;        /* POST: an existing revision_id is a conflict whatever its content */
    int created;            /* out: the group had no pointer for the policy */
};

/* Stores the revision unless it is there with the same content; *revision_pk gets its id.
 * Insert first and look only on a duplicate: a locking read of a row that does not exist
 * takes a gap lock, and racing uploads would deadlock on it. */
static int store_revision(struct store *store, struct arena *arena, struct revision_write *w,
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
            return 0;
        }
        if (rc != PURSER_EEXISTS)
            return rc;
    }
    rc = store_query(store, arena, &rows,
                     "SELECT id, content_sha256 FROM policy_revisions"
                     " WHERE policy_id = ? AND revision_id = ?",
                     key, 2, err);
    if (rc)
        return rc;
    if (rows.count == 0)
        return purser_error_set(err, PURSER_ENOTFOUND, "Cannot load policy %s with revision %s",
                                w->name, w->revision);
    if (w->text && (w->must_be_new || strcmp(store_cell(&rows, 0, 1), w->sha) != 0))
        return purser_error_set(err, PURSER_EEXISTS,
                                "Policy '%s' with revision_id '%s' already exists%s.", w->name,
                                w->revision, w->must_be_new ? "" : " with different content");
    *revision_pk = atoll(store_cell(&rows, 0, 0));
    return 0;
}

static int txn_write_revision(struct store *store, void *ctx, struct purser_error *err)
{
    struct revision_write *w = ctx;
    struct arena *arena = arena_new();
    long long oid = 0, policy_id = 0, group_id = 0, revision_pk = 0;
    int rc = arena ? identity_org_id(store, arena, w->org, &oid, err)
                   : purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    if (!rc && w->text)
        rc =
            ensure_named(store, arena, "INSERT IGNORE INTO policies (org_id, name) VALUES (?, ?)",
                         "SELECT id FROM policies WHERE org_id = ? AND name = ? LOCK IN SHARE MODE",
                         oid, w->name, &policy_id, err);
    if (!rc && !w->text) {
        struct store_value p[] = {STORE_INT(oid), STORE_STR(w->name)};
        struct store_rows rows;
        rc = store_query(store, arena, &rows,
                         "SELECT id FROM policies WHERE org_id = ? AND name = ?", p, 2, err);
        if (!rc && rows.count == 0)
            rc = not_found(err, "policy", w->name);
        if (!rc)
            policy_id = atoll(store_cell(&rows, 0, 0));
    }
    if (!rc)
        rc = store_revision(store, arena, w, policy_id, &revision_pk, err);
    if (!rc && w->group)
        rc = ensure_named(
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
    }
    arena_free(arena);
    return rc;
}

static int write_revision(struct store *store, struct revision_write *w, const json_t *lock,
                          json_t **out, struct purser_error *err)
{
    char sha[65], *text = NULL;
    int rc = policy_lock_validate(lock, w->name, err);
    if (!rc && w->group && !policy_name_ok(w->group))
        rc = purser_error_set(err, PURSER_EINVAL, "Field 'policy_group' invalid");
    if (!rc)
        rc = lock_texts(lock, &text, sha, err);
    if (rc)
        return rc;
    w->revision = json_string_value(json_object_get(lock, "revision_id"));
    w->text = text;
    w->sha = sha;
    rc = store_txn(store, 0, txn_write_revision, w, err);
    if (!rc)
        *out = parse_stored(text);
    free(text);
    return rc;
}

int policy_revision_create(struct store *store, const char *org, const char *name,
                           const json_t *lock, const char *who, json_t **out,
                           struct purser_error *err)
{
    struct revision_write w = {.org = org, .name = name, .who = who, .must_be_new = 1};
    return write_revision(store, &w, lock, out, err);
}

#define REVISION_ROW                                                                               \
    "SELECT r.id, r.body FROM policy_revisions r JOIN policies p ON p.id = r.policy_id"            \
    " JOIN organizations o ON o.id = p.org_id"                                                     \
    " WHERE o.name = ? AND p.name = ? AND r.revision_id = ?"

int policy_revision_get(struct store *store, struct arena *arena, const char *org, const char *name,
                        const char *revision, json_t **out, struct purser_error *err)
{
    struct store_value p[] = {STORE_STR(org), STORE_STR(name), STORE_STR(revision)};
    struct store_rows rows, groups;
    struct store_value pk;
    json_t *list;
    int rc = store_query(store, arena, &rows, REVISION_ROW, p, 3, err);
    if (rc)
        return rc;
    if (rows.count == 0)
        return purser_error_set(err, PURSER_ENOTFOUND, "Cannot load policy %s with revision %s",
                                name, revision);
    pk = (struct store_value)STORE_INT(atoll(store_cell(&rows, 0, 0)));
    rc = store_query(store, arena, &groups,
                     "SELECT g.name FROM policy_group_pointers pp JOIN policy_groups g"
                     " ON g.id = pp.group_id WHERE pp.revision_pk = ? ORDER BY g.name",
                     &pk, 1, err);
    if (rc)
        return rc;
    *out = parse_stored(store_cell(&rows, 0, 1));
    list = json_array();
    for (size_t i = 0; i < groups.count; i++)
        json_array_append_new(list, json_string(store_cell(&groups, i, 0)));
    json_object_set_new(*out, "policy_group_list", list);
    return 0;
}

int policy_revision_delete(struct store *store, struct arena *arena, const char *org,
                           const char *name, const char *revision, json_t **out,
                           struct purser_error *err)
{
    struct store_value p[] = {STORE_STR(org), STORE_STR(name), STORE_STR(revision)};
    struct store_rows rows;
    struct store_value pk;
    int rc = store_query(store, arena, &rows, REVISION_ROW, p, 3, err);
    if (rc)
        return rc;
    if (rows.count == 0)
        return purser_error_set(err, PURSER_ENOTFOUND, "Cannot load policy %s with revision %s",
                                name, revision);
    pk = (struct store_value)STORE_INT(atoll(store_cell(&rows, 0, 0)));
    rc = store_exec(store, "DELETE FROM policy_revisions WHERE id = ?", &pk, 1, NULL, NULL, err);
    if (!rc)
        *out = parse_stored(store_cell(&rows, 0, 1));
    return rc;
}

/* ---- policy groups ------------------------------------------------------------------------- */

#define GROUPS_OF_ORG                                                                              \
    "SELECT g.name, p.name, r.revision_id FROM policy_groups g"                                    \
    " JOIN organizations o ON o.id = g.org_id"                                                     \
    " LEFT JOIN policy_group_pointers pp ON pp.group_id = g.id"                                    \
    " LEFT JOIN policies p ON p.id = pp.policy_id"                                                 \
    " LEFT JOIN policy_revisions r ON r.id = pp.revision_pk WHERE o.name = ?"

static json_t *groups_json(const struct store_rows *rows, const char *base, const char *org)
{
    json_t *groups = json_object();
    for (size_t i = 0; i < rows->count; i++) {
        const char *group = store_cell(rows, i, 0);
        json_t *entry = json_object_get(groups, group);
        if (!entry) {
            entry = json_pack(
                "{s:o, s:{}}", "uri",
                json_sprintf("%s/organizations/%s/policy_groups/%s", base, org, group), "policies");
            json_object_set_new(groups, group, entry);
        }
        if (store_cell(rows, i, 1))
            json_object_set_new(json_object_get(entry, "policies"), store_cell(rows, i, 1),
                                json_pack("{s:s}", "revision_id", store_cell(rows, i, 2)));
    }
    return groups;
}

int policy_group_list(struct store *store, struct arena *arena, const char *org, const char *base,
                      json_t **out, struct purser_error *err)
{
    struct store_rows rows;
    struct store_value p = STORE_STR(org);
    long long oid;
    int rc = identity_org_id(store, arena, org, &oid, err);
    if (!rc)
        rc = store_query(store, arena, &rows, GROUPS_OF_ORG " ORDER BY g.name, p.name", &p, 1, err);
    if (!rc)
        *out = groups_json(&rows, base, org);
    return rc;
}

int policy_group_get(struct store *store, struct arena *arena, const char *org, const char *group,
                     const char *base, json_t **out, struct purser_error *err)
{
    struct store_rows rows;
    struct store_value p[] = {STORE_STR(org), STORE_STR(group)};
    json_t *all;
    int rc = store_query(store, arena, &rows, GROUPS_OF_ORG " AND g.name = ? ORDER BY p.name", p, 2,
                         err);
    if (rc)
        return rc;
    if (rows.count == 0)
        return not_found(err, "policy group", group);
    all = groups_json(&rows, base, org);
    *out = json_incref(json_object_get(all, group));
    json_decref(all);
    return 0;
}

int policy_group_delete(struct store *store, struct arena *arena, const char *org,
                        const char *group, const char *base, json_t **out, struct purser_error *err)
{
    struct store_value p[] = {STORE_STR(org), STORE_STR(group)};
    int rc = policy_group_get(store, arena, org, group, base, out, err);
    return delete_read(store, rc,
                       "DELETE g FROM policy_groups g JOIN organizations o ON o.id = g.org_id"
                       " WHERE o.name = ? AND g.name = ?",
                       p, 2, out, err);
}

/* The pointer of group for policy name, read by names: revision_pk, group id, policy id. */
static int pointer_by_names(struct store *store, struct arena *arena, const char *org,
                            const char *group, const char *name, struct store_rows *rows,
                            struct purser_error *err)
{
    struct store_value p[] = {STORE_STR(org), STORE_STR(group), STORE_STR(name)};
    int rc = store_query(store, arena, rows,
                         "SELECT pp.revision_pk, g.id, p.id FROM policy_group_pointers pp"
                         " JOIN policy_groups g ON g.id = pp.group_id"
                         " JOIN policies p ON p.id = pp.policy_id"
                         " JOIN organizations o ON o.id = g.org_id"
                         " WHERE o.name = ? AND g.name = ? AND p.name = ?",
                         p, 3, err);
    if (!rc && rows->count == 0)
        rc = purser_error_set(err, PURSER_ENOTFOUND, "Cannot load policy %s in policy group %s",
                              name, group);
    return rc;
}

int policy_group_policy_get(struct store *store, struct arena *arena, const char *org,
                            const char *group, const char *name, json_t **out,
                            struct purser_error *err)
{
    const char *text, *etag;
    size_t len;
    int rc =
        policy_group_policy_fetch(store, NULL, arena, org, group, name, &text, &len, &etag, err);
    if (rc)
        return rc;
    *out = json_loadb(text, len, 0, NULL);
    return *out ? 0 : purser_error_set(err, PURSER_EINTERNAL, "stored lock is not JSON");
}

/* The revision a group points at for a policy: by the ids remembered for these names (one
 * primary-key read), else by the names (and the ids are remembered). Ids are never reused, so
 * a remembered id of a deleted group or policy finds no pointer and the names are read again. */
static int pointer_revision(struct store *store, struct lru *cache, struct arena *arena,
                            const char *org, const char *group, const char *name,
                            const char **revision_pk, struct purser_error *err)
{
    struct store_rows rows;
    const char *key = arena_sprintf(arena, "ids\x1f%s\x1f%s\x1f%s", org, group, name);
    const char *ids = cache && key ? lru_get(cache, key, NULL, time(NULL)) : NULL;
    int rc;

    if (ids) {
        struct store_value p[] = {STORE_INT(atoll(ids)), STORE_INT(atoll(strchr(ids, ' ') + 1))};
        rc = store_query(store, arena, &rows,
                         "SELECT revision_pk FROM policy_group_pointers"
                         " WHERE group_id = ? AND policy_id = ?",
                         p, 2, err);
        if (rc || rows.count) {
            *revision_pk = rc ? NULL : store_cell(&rows, 0, 0);
            return rc;
        }
    }
    if ((rc = pointer_by_names(store, arena, org, group, name, &rows, err)))
        return rc;
    if (cache && key) {
        const char *value =
            arena_sprintf(arena, "%s %s", store_cell(&rows, 0, 1), store_cell(&rows, 0, 2));
        if (value)
            lru_put(cache, key, value, strlen(value), time(NULL));
    }
    *revision_pk = store_cell(&rows, 0, 0);
    return 0;
}

int policy_group_policy_fetch(struct store *store, struct lru *cache, struct arena *arena,
                              const char *org, const char *group, const char *name,
                              const char **text, size_t *len, const char **etag,
                              struct purser_error *err)
{
    const char *pk = NULL, *cached;
    char key[40];
    size_t cached_len;
    time_t now = time(NULL);
    int rc = pointer_revision(store, cache, arena, org, group, name, &pk, err);
    if (rc)
        return rc;
    /* The entry is the content's SHA-256 (64 characters) and then the body. */
    snprintf(key, sizeof(key), "revision:%s", pk);
    if (!cache || !(cached = lru_get(cache, key, &cached_len, now)) || cached_len < 64) {
        struct store_value id = STORE_STR(pk);
        struct store_rows body;
        struct buf entry = BUF_INIT;
        if ((rc = store_query(store, arena, &body,
                              "SELECT content_sha256, body FROM policy_revisions WHERE id = ?", &id,
                              1, err)))
            return rc;
        if (body.count == 0) /* deleted between the two reads */
            return purser_error_set(err, PURSER_ENOTFOUND,
                                    "Cannot load policy %s in policy group %s", name, group);
        if (buf_add(&entry, store_cell(&body, 0, 0), 64) ||
            buf_add(&entry, store_cell(&body, 0, 1), body.lengths[1])) {
            buf_release(&entry);
            return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
        }
        if (cache)
            lru_put(cache, key, entry.data, entry.len, now);
        cached = arena_strndup(arena, entry.data, entry.len);
        cached_len = entry.len;
        buf_release(&entry);
        if (!cached)
            return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    }
    /* On a hit the body is the cache's own memory (no copy of kilobytes per request): it
     * stays valid until the next lru_put of this worker, after the response is written. */
    *etag = arena_strndup(arena, cached, 64);
    *text = cached + 64;
    *len = cached_len - 64;
    return *etag ? 0 : purser_error_set(err, PURSER_EINTERNAL, "out of memory");
}

int policy_group_policy_put(struct store *store, const char *org, const char *group,
                            const char *name, const json_t *lock, const char *who, int *created,
                            json_t **out, struct purser_error *err)
{
    struct revision_write w = {.org = org, .group = group, .name = name, .who = who};
    int rc = write_revision(store, &w, lock, out, err);
    *created = w.created;
    return rc;
}

int policy_group_point(struct store *store, struct arena *arena, const char *org, const char *group,
                       const char *name, const char *revision, const char *who, int *created,
                       json_t **out, struct purser_error *err)
{
    struct revision_write w = {
        .org = org, .group = group, .name = name, .revision = revision, .who = who};
    int rc = policy_name_ok(group)
                 ? 0
                 : purser_error_set(err, PURSER_EINVAL, "Field 'policy_group' invalid");
    if (!rc)
        rc = store_txn(store, 0, txn_write_revision, &w, err);
    *created = w.created;
    if (!rc)
        rc = policy_group_policy_get(store, arena, org, group, name, out, err);
    return rc;
}

int policy_group_policy_delete(struct store *store, struct arena *arena, const char *org,
                               const char *group, const char *name, json_t **out,
                               struct purser_error *err)
{
    struct store_rows rows;
    struct store_value key[2];
    int rc = policy_group_policy_get(store, arena, org, group, name, out, err);
    if (!rc)
        rc = pointer_by_names(store, arena, org, group, name, &rows, err);
    if (!rc) {
        key[0] = (struct store_value)STORE_INT(atoll(store_cell(&rows, 0, 1)));
        key[1] = (struct store_value)STORE_INT(atoll(store_cell(&rows, 0, 2)));
    }
    return delete_read(store, rc,
                       "DELETE FROM policy_group_pointers WHERE group_id = ? AND policy_id = ?",
                       key, 2, out, err);
}

/* ---- nodes --------------------------------------------------------------------------------- */

/* Checks a node body and fills Chef's defaults; *node is a new reference. */
static int node_normalize(const json_t *body, const char *url_name, json_t **node,
                          struct purser_error *err)
{
    static const char *const attribute_sets[] = {"normal", "default", "override", "automatic"};
    static const char *const policy_fields[] = {"policy_name", "policy_group"};
    const json_t *name = json_object_get(body, "name");
    *node = NULL;
    if (!json_is_object(body))
        return purser_error_set(err, PURSER_EINVAL, "invalid JSON");
    if (!name)
        return purser_error_set(err, PURSER_EINVAL, "Field 'name' missing");
    if (!json_is_string(name) || !identity_name_ok(json_string_value(name), 1))
        return purser_error_set(err, PURSER_EINVAL, "Field 'name' invalid");
    if (url_name && strcmp(json_string_value(name), url_name) != 0)
        return purser_error_set(err, PURSER_EINVAL, "Node name mismatch.");
    for (size_t i = 0; i < 2; i++) {
        const json_t *v = json_object_get(body, policy_fields[i]);
        if (v && !json_is_null(v) && (!json_is_string(v) || !policy_name_ok(json_string_value(v))))
            return purser_error_set(err, PURSER_EINVAL, "Field '%s' invalid", policy_fields[i]);
    }
    if (json_object_get(body, "run_list") && !json_is_array(json_object_get(body, "run_list")))
        return purser_error_set(err, PURSER_EINVAL, "Field 'run_list' is not a valid run list");
    *node = json_copy((json_t *)body);
    if (!json_object_get(*node, "json_class"))
        json_object_set_new(*node, "json_class", json_string("Chef::Node"));
    if (!json_object_get(*node, "chef_type"))
        json_object_set_new(*node, "chef_type", json_string("node"));
    if (!json_object_get(*node, "chef_environment"))
        json_object_set_new(*node, "chef_environment", json_string("_default"));
    if (!json_object_get(*node, "run_list"))
        json_object_set_new(*node, "run_list", json_array());
    for (size_t i = 0; i < 4; i++) {
        const json_t *v = json_object_get(*node, attribute_sets[i]);
        if (v && !json_is_object(v)) {
            json_decref(*node);
            *node = NULL;
            return purser_error_set(err, PURSER_EINVAL, "Field '%s' is not a hash",
                                    attribute_sets[i]);
        }
        if (!v)
            json_object_set_new(*node, attribute_sets[i], json_object());
    }
    return 0;
}

static struct store_value optional_string_value(const json_t *node, const char *field)
{
    const json_t *v = json_object_get(node, field);
    return json_is_string(v) ? (struct store_value)STORE_STR(json_string_value(v))
                             : (struct store_value)STORE_NULLV;
}

int node_list(struct store *store, struct arena *arena, const char *org, const char *base,
              json_t **out, struct purser_error *err)
{
    struct store_rows rows;
    struct store_value p;
    long long oid;
    int rc = identity_org_id(store, arena, org, &oid, err);
    if (rc)
        return rc;
    p = (struct store_value)STORE_INT(oid);
    rc = store_query(store, arena, &rows, "SELECT name FROM nodes WHERE org_id = ? ORDER BY name",
                     &p, 1, err);
    if (rc)
        return rc;
    *out = json_object();
    for (size_t i = 0; i < rows.count; i++)
        json_object_set_new(
            *out, store_cell(&rows, i, 0),
            json_sprintf("%s/organizations/%s/nodes/%s", base, org, store_cell(&rows, i, 0)));
    return 0;
}

int node_create(struct store *store, const char *org, const json_t *body, const char *base,
                json_t **out, struct purser_error *err)
{
    json_t *node = NULL;
    char *text = NULL;
    struct arena *arena = arena_new();
    long long oid;
    int rc = arena ? node_normalize(body, NULL, &node, err)
                   : purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    if (!rc)
        rc = identity_org_id(store, arena, org, &oid, err);
    if (!rc && !(text = json_dumps(node, JSON_COMPACT)))
        rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    if (!rc) {
        const char *name = json_string_value(json_object_get(node, "name"));
        struct store_value p[] = {STORE_INT(oid), STORE_STR(name),
                                  optional_string_value(node, "policy_name"),
                                  optional_string_value(node, "policy_group"), STORE_STR(text)};
        rc = store_exec(store,
                        "INSERT INTO nodes (org_id, name, policy_name, policy_group, body)"
                        " VALUES (?, ?, ?, ?, ?)",
                        p, 5, NULL, NULL, err);
        if (rc == PURSER_EEXISTS)
            rc = purser_error_set(err, PURSER_EEXISTS, "Node already exists");
        if (!rc)
            *out = json_pack("{s:o}", "uri",
                             json_sprintf("%s/organizations/%s/nodes/%s", base, org, name));
    }
    free(text);
    json_decref(node);
    arena_free(arena);
    return rc;
}

#define NODE_ROW                                                                                   \
    "SELECT n.id, n.body FROM nodes n JOIN organizations o ON o.id = n.org_id"                     \
    " WHERE o.name = ? AND n.name = ?"

int node_get(struct store *store, struct arena *arena, const char *org, const char *name,
             json_t **out, struct purser_error *err)
{
    struct store_value p[] = {STORE_STR(org), STORE_STR(name)};
    struct store_rows rows;
    int rc = store_query(store, arena, &rows, NODE_ROW, p, 2, err);
    if (rc)
        return rc;
    if (rows.count == 0)
        return not_found(err, "node", name);
    *out = parse_stored(store_cell(&rows, 0, 1));
    return *out ? 0 : purser_error_set(err, PURSER_EINTERNAL, "stored node is not JSON");
}

int node_update(struct store *store, struct arena *arena, const char *org, const char *name,
                const json_t *body, json_t **out, struct purser_error *err)
{
    struct store_value key[] = {STORE_STR(org), STORE_STR(name)};
    struct store_rows rows;
    json_t *node = NULL;
    char *text = NULL;
    int rc = node_normalize(body, name, &node, err);
    if (!rc)
        rc = store_query(store, arena, &rows, NODE_ROW, key, 2, err);
    if (!rc && rows.count == 0)
        rc = not_found(err, "node", name);
    if (!rc && !(text = json_dumps(node, JSON_COMPACT)))
        rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    if (!rc) {
        struct store_value p[] = {optional_string_value(node, "policy_name"),
                                  optional_string_value(node, "policy_group"), STORE_STR(text),
                                  STORE_INT(atoll(store_cell(&rows, 0, 0)))};
        rc = store_exec(store,
                        "UPDATE nodes SET policy_name = ?, policy_group = ?, body = ? WHERE id = ?",
                        p, 4, NULL, NULL, err);
    }
    if (!rc)
        *out = json_incref(node);
    free(text);
    json_decref(node);
    return rc;
}

int node_delete(struct store *store, struct arena *arena, const char *org, const char *name,
                json_t **out, struct purser_error *err)
{
    struct store_value key[] = {STORE_STR(org), STORE_STR(name)};
    int rc = node_get(store, arena, org, name, out, err);
    return delete_read(store, rc,
                       "DELETE n FROM nodes n JOIN organizations o ON o.id = n.org_id"
                       " WHERE o.name = ? AND n.name = ?",
                       key, 2, out, err);
}

/* ---- beyond Chef: nodes of a group, promotion, diff, retention -------------------------- */

int policy_group_nodes(struct store *store, struct arena *arena, const char *org, const char *group,
                       const char *name, const char *base, json_t **out, struct purser_error *err)
{
    struct store_value p[] = {STORE_STR(org), STORE_STR(group), STORE_STR(name ? name : "")};
    struct store_rows rows;
    json_t *ignored = NULL;
    int rc = policy_group_get(store, arena, org, group, base, &ignored, err);
    json_decref(ignored);
    if (!rc)
        rc = store_query(store, arena, &rows,
                         name ? "SELECT n.name FROM nodes n JOIN organizations o ON o.id = n.org_id"
                                " WHERE o.name = ? AND n.policy_group = ? AND n.policy_name = ?"
                                " ORDER BY n.name"
                              : "SELECT n.name FROM nodes n JOIN organizations o ON o.id = n.org_id"
                                " WHERE o.name = ? AND n.policy_group = ? ORDER BY n.name",
                         p, name ? 3 : 2, err);
    if (rc)
        return rc;
    *out = json_object();
    for (size_t i = 0; i < rows.count; i++)
        json_object_set_new(
            *out, store_cell(&rows, i, 0),
            json_sprintf("%s/organizations/%s/nodes/%s", base, org, store_cell(&rows, i, 0)));
    return 0;
}

struct promotion {
    const char *org, *group, *from, *who;
    const json_t *names; /* NULL: every policy of the source group */
};

static int txn_promote(struct store *store, void *ctx, struct purser_error *err)
{
    struct promotion *pr = ctx;
    struct arena *arena = arena_new();
    struct store_rows rows;
    long long oid = 0, from_id = 0, to_id = 0;
    int rc = arena ? identity_org_id(store, arena, pr->org, &oid, err)
                   : purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    if (!rc) {
        struct store_value p[] = {STORE_INT(oid), STORE_STR(pr->from)};
        rc = store_query(store, arena, &rows,
                         "SELECT id FROM policy_groups WHERE org_id = ? AND name = ?", p, 2, err);
        if (!rc && rows.count == 0)
            rc = not_found(err, "policy group", pr->from);
        if (!rc)
            from_id = atoll(store_cell(&rows, 0, 0));
    }
    if (!rc)
        rc = ensure_named(
            store, arena, "INSERT IGNORE INTO policy_groups (org_id, name) VALUES (?, ?)",
            "SELECT id FROM policy_groups WHERE org_id = ? AND name = ? LOCK IN SHARE MODE", oid,
            pr->group, &to_id, err);
    if (!rc) {
        struct store_value p = STORE_INT(from_id);
        rc = store_query(store, arena, &rows,
                         "SELECT p.name, pp.policy_id, pp.revision_pk FROM policy_group_pointers pp"
                         " JOIN policies p ON p.id = pp.policy_id WHERE pp.group_id = ?"
                         " ORDER BY p.name FOR UPDATE",
                         &p, 1, err);
    }
    /* Every named policy must be in the source group, or nothing changes. */
    for (size_t i = 0; !rc && pr->names && i < json_array_size(pr->names); i++) {
        const char *want = json_string_value(json_array_get(pr->names, i));
        size_t r = 0;
        while (r < rows.count && strcmp(store_cell(&rows, r, 0), want) != 0)
            r++;
        if (r == rows.count)
            rc = purser_error_set(err, PURSER_ENOTFOUND, "policy '%s' is not in policy group '%s'",
                                  want, pr->from);
    }
    for (size_t r = 0; !rc && r < rows.count; r++) {
        int wanted = !pr->names;
        for (size_t i = 0; !wanted && i < json_array_size(pr->names); i++)
            wanted = strcmp(json_string_value(json_array_get(pr->names, i)),
                            store_cell(&rows, r, 0)) == 0;
        if (wanted) {
            struct store_value p[] = {STORE_INT(to_id), STORE_INT(atoll(store_cell(&rows, r, 1))),
                                      STORE_INT(atoll(store_cell(&rows, r, 2))),
                                      STORE_STR(pr->who)};
            rc = store_exec(store,
                            "INSERT INTO policy_group_pointers (group_id, policy_id, revision_pk,"
                            " updated_by) VALUES (?, ?, ?, ?) ON DUPLICATE KEY UPDATE"
                            " revision_pk = VALUES(revision_pk), updated_by = VALUES(updated_by)",
                            p, 4, NULL, NULL, err);
        }
    }
    arena_free(arena);
    return rc;
}

int policy_group_promote(struct store *store, struct arena *arena, const char *org,
                         const char *group, const json_t *body, const char *who, const char *base,
                         json_t **out, struct purser_error *err)
{
    struct promotion pr = {.org = org, .group = group, .who = who};
    const json_t *from = json_object_get(body, "from"), *names = json_object_get(body, "policies");
    size_t i;
    json_t *item;
    int rc;
    if (!json_is_object(body))
        return purser_error_set(err, PURSER_EINVAL, "invalid JSON");
    if (!from)
        return purser_error_set(err, PURSER_EINVAL, "Field 'from' missing");
    if (!json_is_string(from) || !policy_name_ok(json_string_value(from)))
        return purser_error_set(err, PURSER_EINVAL, "Field 'from' invalid");
    if (!policy_name_ok(group))
        return purser_error_set(err, PURSER_EINVAL, "Field 'policy_group' invalid");
    if (strcmp(json_string_value(from), group) == 0)
        return purser_error_set(err, PURSER_EINVAL, "Field 'from' must name another group");
    if (names && !json_is_null(names)) {
        if (!json_is_array(names))
            return purser_error_set(err, PURSER_EINVAL, "Field 'policies' invalid");
        json_array_foreach (names, i, item) {
            if (!json_is_string(item) || !policy_name_ok(json_string_value(item)))
                return purser_error_set(err, PURSER_EINVAL, "Field 'policies' invalid");
        }
        pr.names = names;
    }
    pr.from = json_string_value(from);
    rc = store_txn(store, 0, txn_promote, &pr, err);
    if (!rc)
        rc = policy_group_get(store, arena, org, group, base, out, err);
    return rc;
}

/* The lock a side of a diff names: a group's pointer or a revision. */
static int diff_side(struct store *store, struct arena *arena, const char *org, const char *name,
                     const char *group, const char *revision, const char *which, json_t **lock,
                     json_t **label, struct purser_error *err)
{
    int rc;
    if ((group && revision) || (!group && !revision))
        return purser_error_set(err, PURSER_EINVAL, "give exactly one of %s_group and %s_revision",
                                which, which);
    if (group)
        rc = policy_group_policy_get(store, arena, org, group, name, lock, err);
    else
        rc = policy_revision_get(store, arena, org, name, revision, lock, err);
    if (rc)
        return rc;
    *label = json_pack("{s:s?, s:O}", "policy_group", group, "revision_id",
                       json_object_get(*lock, "revision_id"));
    return 0;
}

int policy_diff_query(struct store *store, struct arena *arena, const char *org, const char *name,
                      const char *from_group, const char *from_revision, const char *to_group,
                      const char *to_revision, json_t **out, struct purser_error *err)
{
    json_t *from = NULL, *to = NULL, *from_label = NULL, *to_label = NULL;
    int rc = diff_side(store, arena, org, name, from_group, from_revision, "from", &from,
                       &from_label, err);
    if (!rc)
        rc = diff_side(store, arena, org, name, to_group, to_revision, "to", &to, &to_label, err);
    if (!rc) {
        *out = policy_diff(from, to);
        json_object_set(*out, "from", from_label);
        json_object_set(*out, "to", to_label);
    }
    json_decref(from);
    json_decref(to);
    json_decref(from_label);
    json_decref(to_label);
    return rc;
}

int policy_gc(struct store *store, int keep, json_t **removed, struct purser_error *err)
{
    struct arena *arena = arena_new();
    struct store_rows rows;
    struct store_value p = STORE_INT(keep);
    int rc;
    *removed = json_array();
    if (!arena)
        return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    /* Revisions ranked newest first within their policy; unpointed ones past `keep` go. */
    rc = store_query(
        store, arena, &rows,
        "SELECT id, org, policy, revision_id FROM ("
        " SELECT r.id, o.name AS org, p.name AS policy, r.revision_id,"
        "  ROW_NUMBER() OVER (PARTITION BY r.policy_id ORDER BY r.created_at DESC, r.id DESC) AS n,"
        "  EXISTS (SELECT 1 FROM policy_group_pointers pp WHERE pp.revision_pk = r.id) AS pointed"
        " FROM policy_revisions r JOIN policies p ON p.id = r.policy_id"
        " JOIN organizations o ON o.id = p.org_id) ranked"
        " WHERE n > ? AND NOT pointed ORDER BY org, policy, revision_id",
        &p, 1, err);
    for (size_t i = 0; !rc && i < rows.count; i++) {
        struct store_value id = STORE_INT(atoll(store_cell(&rows, i, 0)));
        unsigned long long affected = 0;
        /* Deleted only if still unpointed: a group may have moved onto it meanwhile. */
        rc = store_exec(
            store,
            "DELETE FROM policy_revisions WHERE id = ? AND NOT EXISTS"
            " (SELECT 1 FROM policy_group_pointers pp WHERE pp.revision_pk = policy_revisions.id)",
            &id, 1, &affected, NULL, err);
        if (!rc && affected)
            json_array_append_new(*removed, json_pack("{s:s, s:s, s:s}", "organization",
                                                      store_cell(&rows, i, 1), "policy",
                                                      store_cell(&rows, i, 2), "revision_id",
                                                      store_cell(&rows, i, 3)));
    }
    arena_free(arena);
    return rc;
}
