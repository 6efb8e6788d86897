/* policy_group.c: policy groups and their pointers, the hot fetch, and beyond Chef: a group's
 * nodes, promotion and diff. */
#include "policy/policy.h"
#include "policy/policy_private.h"
#include "store/events.h"

#include "auth/identity.h"
#include "base/buf.h"
#include "policy/policy_diff.h"
#include "policy/policy_lock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* ---- policy groups ------------------------------------------------------------------------- */

#define GROUPS_OF_ORG                                                                              \
    "SELECT g.name, p.name, r.revision_id FROM policy_groups g"                                    \
    " JOIN organizations o ON o.id = g.org_id"                                                     \
    " LEFT JOIN policy_group_pointers pp ON pp.group_id = g.id"                                    \
    " LEFT JOIN policies p ON p.id = pp.policy_id"                                                 \
    " LEFT JOIN policy_revisions r ON r.id = pp.revision_pk WHERE o.name = ?"

static json_t *groups_json(const struct store_rows *rows, const struct links *links,
                           const char *org)
{
    json_t *groups = json_object();
    for (size_t i = 0; i < rows->count; i++) {
        const char *group = store_cell(rows, i, 0);
        json_t *entry = json_object_get(groups, group);
        json_t *policies;
        if (!entry) {
            entry = json_pack("{s:o}", "uri", link_url(links, LINK_POLICY_GROUP, org, group, NULL));
            json_object_set_new(groups, group, entry);
        }
        if (!entry || !store_cell(rows, i, 1))
            continue; /* Chef leaves "policies" out of a group that points at nothing */
        if (!(policies = json_object_get(entry, "policies")))
            json_object_set_new(entry, "policies", policies = json_object());
        json_object_set_new(policies, store_cell(rows, i, 1),
                            json_pack("{s:s}", "revision_id", store_cell(rows, i, 2)));
    }
    return groups;
}

int policy_group_list(struct store *store, struct arena *arena, const char *org,
                      const struct links *links, json_t **out, struct purser_error *err)
{
    struct store_rows rows;
    struct store_value p = STORE_STR(org);
    long long oid;
    int rc = identity_org_id(store, arena, org, &oid, err);
    if (!rc)
        rc = store_query(store, arena, &rows, GROUPS_OF_ORG " ORDER BY g.name, p.name", &p, 1, err);
    if (!rc)
        *out = groups_json(&rows, links, org);
    return rc;
}

int policy_group_get(struct store *store, struct arena *arena, const char *org, const char *group,
                     const struct links *links, json_t **out, struct purser_error *err)
{
    struct store_rows rows;
    struct store_value p[] = {STORE_STR(org), STORE_STR(group)};
    json_t *all;
    int rc = store_query(store, arena, &rows, GROUPS_OF_ORG " AND g.name = ? ORDER BY p.name", p, 2,
                         err);
    if (!rc && rows.count == 0)
        rc = policy_not_found(err, "policy group", group);
    if (!rc) {
        all = groups_json(&rows, links, org);
        *out = json_incref(json_object_get(all, group));
        json_decref(all);
        if (*out && !json_object_get(*out, "policies")) /* Chef's answer: {} when it has none */
            json_object_set_new(*out, "policies", json_object());
    }
    return rc;
}

int policy_group_delete(struct store *store, const char *actor, struct arena *arena,
                        const char *org, const char *group, const struct links *links, json_t **out,
                        struct purser_error *err)
{
    struct store_value p[] = {STORE_STR(org), STORE_STR(group)};
    int rc = policy_group_get(store, arena, org, group, links, out, err);
    return policy_delete_read(
        store, actor, rc,
        "DELETE g FROM policy_groups g JOIN organizations o ON o.id = g.org_id"
        " WHERE o.name = ? AND g.name = ?",
        p, 2, org, "policy_group", group, out, err);
}

/* The pointer of group for policy name, read by names: revision_pk, group id, policy id. */
int policy_pointer_by_names(struct store *store, struct arena *arena, const char *org,
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
    if (!rc) {
        *out = json_loadb(text, len, 0, NULL);
        rc = *out ? 0 : purser_error_set(err, PURSER_EINTERNAL, "stored lock is not JSON");
    }
    return rc;
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
    rc = policy_pointer_by_names(store, arena, org, group, name, &rows, err);
    if (!rc) {
        if (cache && key) {
            const char *value =
                arena_sprintf(arena, "%s %s", store_cell(&rows, 0, 1), store_cell(&rows, 0, 2));
            if (value)
                lru_put(cache, key, value, strlen(value), time(NULL));
        }
        *revision_pk = store_cell(&rows, 0, 0);
    }
    return rc;
}

/* A revision not in the cache: its entry (the content's SHA-256, then the body) read, put in
 * the cache, and *entry_out a copy in arena. */
static int revision_entry(struct store *store, struct lru *cache, struct arena *arena,
                          const char *pk, const char *key, time_t now, const char *name,
                          const char *group, const char **entry_out, size_t *len_out,
                          struct purser_error *err)
{
    struct store_value id = STORE_STR(pk);
    struct store_rows body;
    struct buf entry = BUF_INIT;
    int rc =
        store_query(store, arena, &body,
                    "SELECT content_sha256, body FROM policy_revisions WHERE id = ?", &id, 1, err);
    if (!rc && body.count == 0) /* deleted between the two reads */
        rc = purser_error_set(err, PURSER_ENOTFOUND, "Cannot load policy %s in policy group %s",
                              name, group);
    if (!rc && (buf_add(&entry, store_cell(&body, 0, 0), 64) ||
                buf_add(&entry, store_cell(&body, 0, 1), body.lengths[1])))
        rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    if (!rc) {
        if (cache)
            lru_put(cache, key, entry.data, entry.len, now);
        *entry_out = arena_strndup(arena, entry.data, entry.len);
        *len_out = entry.len;
        if (!*entry_out)
            rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    }
    buf_release(&entry);
    return rc;
}

int policy_group_policy_fetch(struct store *store, struct lru *cache, struct arena *arena,
                              const char *org, const char *group, const char *name,
                              const char **text, size_t *len, const char **etag,
                              struct purser_error *err)
{
    const char *pk = NULL, *cached = NULL;
    char key[40];
    size_t cached_len = 0;
    time_t now = time(NULL);
    int rc = pointer_revision(store, cache, arena, org, group, name, &pk, err);
    if (!rc) {
        /* The entry is the content's SHA-256 (64 characters) and then the body. */
        snprintf(key, sizeof(key), "revision:%s", pk);
        if (!cache || !(cached = lru_get(cache, key, &cached_len, now)) || cached_len < 64)
            rc = revision_entry(store, cache, arena, pk, key, now, name, group, &cached,
                                &cached_len, err);
    }
    if (!rc) {
        /* On a hit the body is the cache's own memory (no copy of kilobytes per request): it
         * stays valid until the next lru_put of this worker, after the response is written. */
        *etag = arena_strndup(arena, cached, 64);
        *text = cached + 64;
        *len = cached_len - 64;
        if (!*etag)
            rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    }
    return rc;
}

int policy_group_policy_put(struct store *store, const char *org, const char *group,
                            const char *name, const json_t *lock, const char *who, int *created,
                            json_t **out, struct purser_error *err)
{
    struct revision_write w = {.org = org, .group = group, .name = name, .who = who};
    int rc = policy_revision_write(store, &w, lock, out, err);
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
        rc = store_txn(store, 0, policy_revision_write_txn, &w, err);
    *created = w.created;
    if (!rc)
        rc = policy_group_policy_get(store, arena, org, group, name, out, err);
    return rc;
}

int policy_group_policy_delete(struct store *store, const char *actor, struct arena *arena,
                               const char *org, const char *group, const char *name, json_t **out,
                               struct purser_error *err)
{
    struct store_rows rows;
    struct store_value key[2];
    int rc = policy_group_policy_get(store, arena, org, group, name, out, err);
    if (!rc)
        rc = policy_pointer_by_names(store, arena, org, group, name, &rows, err);
    if (!rc) {
        key[0] = (struct store_value)STORE_INT(atoll(store_cell(&rows, 0, 1)));
        key[1] = (struct store_value)STORE_INT(atoll(store_cell(&rows, 0, 2)));
    }
    return policy_delete_read(
        store, actor, rc, "DELETE FROM policy_group_pointers WHERE group_id = ? AND policy_id = ?",
        key, 2, org, "policy_group_pointer", arena_sprintf(arena, "%s/%s", group, name), out, err);
}

/* ---- beyond Chef: nodes of a group, promotion, diff, retention -------------------------- */

int policy_group_nodes(struct store *store, struct arena *arena, const char *org, const char *group,
                       const char *name, const struct links *links, json_t **out,
                       struct purser_error *err)
{
    struct store_value p[] = {STORE_STR(org), STORE_STR(group), STORE_STR(name ? name : "")};
    struct store_rows rows;
    json_t *ignored = NULL;
    int rc = policy_group_get(store, arena, org, group, links, &ignored, err);
    json_decref(ignored);
    if (!rc)
        rc = store_query(store, arena, &rows,
                         name ? "SELECT n.name FROM nodes n JOIN organizations o ON o.id = n.org_id"
                                " WHERE o.name = ? AND n.policy_group = ? AND n.policy_name = ?"
                                " ORDER BY n.name"
                              : "SELECT n.name FROM nodes n JOIN organizations o ON o.id = n.org_id"
                                " WHERE o.name = ? AND n.policy_group = ? ORDER BY n.name",
                         p, name ? 3 : 2, err);
    if (!rc)
        *out = policy_node_uris(&rows, links, org);
    return rc;
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
            rc = policy_not_found(err, "policy group", pr->from);
        if (!rc)
            from_id = atoll(store_cell(&rows, 0, 0));
    }
    if (!rc)
        rc = policy_ensure_named(
            store, arena, "INSERT IGNORE INTO policy_groups (org_id, name) VALUES (?, ?)",
            "SELECT id FROM policy_groups WHERE org_id = ? AND name = ? LOCK IN SHARE MODE", oid,
            pr->group, &to_id, err);
    if (!rc) {
        struct store_value p = STORE_INT(from_id);
        rc = store_query(store, arena, &rows,
                         "SELECT p.name, pp.policy_id, pp.revision_pk, r.revision_id FROM"
                         " policy_group_pointers pp JOIN policies p ON p.id = pp.policy_id"
                         " JOIN policy_revisions r ON r.id = pp.revision_pk WHERE pp.group_id = ?"
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
            unsigned long long affected = 0;
            rc = store_exec(store,
                            "INSERT INTO policy_group_pointers (group_id, policy_id, revision_pk,"
                            " updated_by) VALUES (?, ?, ?, ?) ON DUPLICATE KEY UPDATE"
                            " revision_pk = VALUES(revision_pk), updated_by = VALUES(updated_by)",
                            p, 4, &affected, NULL, err);
            if (!rc && affected) /* one event per pointer that changed, in this transaction */
                rc = event_append(store, pr->who, oid, "policy_group_pointer",
                                  arena_sprintf(arena, "%s/%s", pr->group, store_cell(&rows, r, 0)),
                                  "put", store_cell(&rows, r, 3), NULL, err);
        }
    }
    arena_free(arena);
    return rc;
}

int policy_group_promote(struct store *store, struct arena *arena, const char *org,
                         const char *group, const json_t *body, const char *who,
                         const struct links *links, json_t **out, struct purser_error *err)
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
        rc = policy_group_get(store, arena, org, group, links, out, err);
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
    if (!rc)
        *label = json_pack("{s:s?, s:O}", "policy_group", group, "revision_id",
                           json_object_get(*lock, "revision_id"));
    return rc;
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
