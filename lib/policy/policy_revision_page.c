/* policy_revision_page.c: a policy's revisions as pages (the admin pages' table of a policy and
 * purserctl's): each revision's upload and uploader and the groups pointing at it, those read for
 * the page's rows only, with the total the filter selects. */
#include "policy/policy.h"
#include "policy/policy_private.h"

#include <stdlib.h>

static const char *const revision_fields[] = {"revision_id", "created_by", NULL};
static const char *const revision_keys[] = {"revision_id", "created_at", "created_by", NULL};
static const struct page_spec revision_spec = {"policy revisions", "r.", "k_", revision_fields,
                                               revision_keys};

/* The policy's id, or Chef's 404 when the organization has no such policy. */
static int policy_id_of(struct store *store, struct arena *arena, const char *org, const char *name,
                        long long *id, struct purser_error *err)
{
    struct store_value p[] = {STORE_STR(org), STORE_STR(name)};
    struct store_rows rows;
    int rc = store_query(store, arena, &rows,
                         "SELECT p.id FROM policies p JOIN organizations o ON o.id = p.org_id"
                         " WHERE o.name = ? AND p.name = ?",
                         p, 2, err);
    if (!rc && rows.count == 0)
        rc = policy_not_found(err, "policy", name);
    if (!rc)
        *id = strtoll(store_cell(&rows, 0, 0), NULL, 10);
    return rc;
}

/* Each item's policy_group_list: the groups pointing at rows' revisions (their ids in column 3),
 * by name. */
static int groups_of(struct store *store, struct arena *arena, const struct store_rows *rows,
                     size_t n, json_t *items, struct purser_error *err)
{
    struct store_value *ids = n ? arena_alloc(arena, n * sizeof(*ids)) : NULL;
    json_t *by_id = json_object(); /* a revision's id: its item's policy_group_list (borrowed) */
    struct store_rows groups;
    struct buf sql = BUF_INIT;
    int rc;
    if (!n || !ids || !by_id) {
        json_decref(by_id);
        return n ? purser_error_set(err, PURSER_EINTERNAL, "out of memory") : 0;
    }
    rc = buf_adds(&sql, "SELECT pp.revision_pk, g.name FROM policy_group_pointers pp"
                        " JOIN policy_groups g ON g.id = pp.group_id WHERE pp.revision_pk IN (");
    for (size_t i = 0; i < n && !rc; i++) {
        ids[i] = (struct store_value)STORE_INT(strtoll(store_cell(rows, i, 3), NULL, 10));
        json_object_set(by_id, store_cell(rows, i, 3),
                        json_object_get(json_array_get(items, i), "policy_group_list"));
        rc = buf_adds(&sql, i ? ",?" : "?");
    }
    if (!rc)
        rc = buf_adds(&sql, ") ORDER BY g.name");
    rc = rc ? purser_error_set(err, PURSER_EINTERNAL, "out of memory")
            : store_query(store, arena, &groups, buf_cstr(&sql), ids, n, err);
    buf_release(&sql);
    for (size_t g = 0; !rc && g < groups.count; g++)
        json_array_append_new(json_object_get(by_id, store_cell(&groups, g, 0)),
                              json_string(store_cell(&groups, g, 1)));
    json_decref(by_id);
    return rc;
}

int policy_revision_page(struct store *store, struct arena *arena, const char *org,
                         const char *name, const struct page_query *q, json_t **out,
                         struct purser_error *err)
{
    struct page_filter f = {0};
    struct page_bounds b;
    struct store_rows rows;
    long long policy_id = 0, total = 0;
    const char *sql;
    size_t n;
    int rc = policy_id_of(store, arena, org, name, &policy_id, err);
    *out = NULL;
    f.params[f.count++] = (struct store_value)STORE_INT(policy_id);
    if (!rc)
        rc = page_prepare(&f, arena, q, &revision_spec, &b, err);
    if (!rc) {
        sql = arena_concat(arena, "SELECT COUNT(*) FROM policy_revisions r WHERE r.policy_id = ?",
                           buf_cstr(&f.where), (const char *)NULL);
        rc = store_query(store, arena, &rows, sql, f.params, f.count, err);
        total = rc ? 0 : strtoll(store_cell(&rows, 0, 0), NULL, 10);
    }
    if (rc) {
        buf_release(&f.where);
        return rc;
    }
    sql = arena_concat(arena,
                       "SELECT r.revision_id AS k_revision_id,"
                       " " STORE_ISO_TIME("r.created_at") " AS k_created_at,"
                                                          " r.created_by AS k_created_by, r.id"
                                                          " FROM policy_revisions r"
                                                          " WHERE r.policy_id = ?",
                       buf_cstr(&f.where), " ORDER BY ", b.order, " LIMIT ? OFFSET ?",
                       (const char *)NULL);
    buf_release(&f.where);
    f.params[f.count++] = (struct store_value)STORE_INT(b.size + 1);
    f.params[f.count++] = (struct store_value)STORE_INT(b.offset);
    rc = store_query(store, arena, &rows, sql, f.params, f.count, err);
    if (!rc) {
        *out = page_answer(total, rows.count, &b);
        n = rows.count < (size_t)b.size ? rows.count : (size_t)b.size;
        for (size_t i = 0; i < n; i++)
            json_array_append_new(json_object_get(*out, "items"),
                                  json_pack("{s:s, s:s, s:s, s:[]}", "revision_id",
                                            store_cell(&rows, i, 0), "created_at",
                                            store_cell(&rows, i, 1), "created_by",
                                            store_cell(&rows, i, 2), "policy_group_list"));
        rc = groups_of(store, arena, &rows, n, json_object_get(*out, "items"), err);
        if (rc) {
            json_decref(*out);
            *out = NULL;
        }
    }
    return rc;
}
