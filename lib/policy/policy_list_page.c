/* policy_list_page.c: the policies and policy groups lists as pages (the admin pages' tables and
 * purserctl's): a policy's revision count and newest upload, a group's pointers, each read for
 * the page's rows only, with the total the filter selects. */
#include "policy/policy.h"
#include "policy/policy_private.h"

#include "auth/identity.h"
#include "auth/rbac.h"

#include <stdlib.h>
#include <string.h>

static const char *const name_only[] = {"name", NULL};
static const char *const policy_keys[] = {"name", "revision_count", "latest_at", NULL};
static const char *const group_keys[] = {"name", "policy_count", NULL};
static const struct page_spec policy_spec = {"policies", "p.", "k_", name_only, policy_keys};
static const struct page_spec group_spec = {"policy groups", "g.", "k_", name_only, group_keys};

/* The organization's id as params[0], then q parsed. */
static int prepare(struct store *store, struct arena *arena, const char *org,
                   const struct page_query *q, const struct page_spec *spec, struct page_filter *f,
                   struct page_bounds *b, struct purser_error *err)
{
    long long oid;
    int rc = identity_org_id(store, arena, org, &oid, err);
    f->params[f->count++] = (struct store_value)STORE_INT(oid);
    if (!rc)
        rc = page_prepare(f, arena, q, spec, b, err);
    return rc;
}

static int count_of(struct store *store, struct arena *arena, const char *table, const char *alias,
                    struct page_filter *f, long long *total, struct purser_error *err)
{
    struct store_rows rows;
    const char *sql = arena_sprintf(arena, "SELECT COUNT(*) FROM %s %s WHERE %s.org_id = ?%s",
                                    table, alias, alias, buf_cstr(&f->where));
    int rc = store_query(store, arena, &rows, sql, f->params, f->count, err);
    if (!rc)
        *total = strtoll(store_cell(&rows, 0, 0), NULL, 10);
    return rc;
}

int policy_page(struct store *store, struct arena *arena, const char *org,
                const struct page_query *q, json_t **out, struct purser_error *err)
{
    struct page_filter f = {0};
    struct page_bounds b;
    struct store_rows rows;
    long long total = 0;
    const char *sql;
    int rc = prepare(store, arena, org, q, &policy_spec, &f, &b, err);
    *out = NULL;
    if (!rc)
        rc = count_of(store, arena, "policies", "p", &f, &total, err);
    if (rc) {
        buf_release(&f.where);
        return rc;
    }
    sql = arena_concat(
        arena,
        "SELECT p.name AS k_name,"
        " (SELECT COUNT(*) FROM policy_revisions r WHERE r.policy_id = p.id)"
        " AS k_revision_count,"
        " (SELECT " STORE_ISO_TIME("MAX(r.created_at)") " FROM policy_revisions r"
                                                        " WHERE r.policy_id = p.id) AS k_latest_at"
                                                        " FROM policies p WHERE p.org_id = ?",
        buf_cstr(&f.where), " ORDER BY ", b.order, " LIMIT ? OFFSET ?", (const char *)NULL);
    buf_release(&f.where);
    f.params[f.count++] = (struct store_value)STORE_INT(b.size + 1);
    f.params[f.count++] = (struct store_value)STORE_INT(b.offset);
    rc = store_query(store, arena, &rows, sql, f.params, f.count, err);
    if (!rc) {
        *out = page_answer(total, rows.count, &b);
        for (size_t i = 0; i < rows.count && i < (size_t)b.size; i++) {
            json_t *item =
                json_pack("{s:s, s:I}", "name", store_cell(&rows, i, 0), "revision_count",
                          (json_int_t)strtoll(store_cell(&rows, i, 1), NULL, 10));
            if (store_cell(&rows, i, 2))
                json_object_set_new(item, "latest_at", json_string(store_cell(&rows, i, 2)));
            json_array_append_new(json_object_get(*out, "items"), item);
        }
    }
    return rc;
}

/* The groups of rows (name, policy_count, policy, revision_id; a group's rows together), those
 * reach covers (NULL: all), appended to items. */
static void groups_fold(const struct store_rows *rows, const char *reach, json_t *items)
{
    json_t *item = NULL;
    const char *last = NULL;
    for (size_t i = 0; i < rows->count; i++) {
        const char *name = store_cell(rows, i, 0), *policy = store_cell(rows, i, 2);
        if (!last || strcmp(last, name)) {
            last = name;
            item = NULL;
            if (reach && !rbac_group_matches(reach, name))
                continue;
            item = json_pack("{s:s, s:I, s:{}}", "name", name, "policy_count",
                             (json_int_t)strtoll(store_cell(rows, i, 1), NULL, 10), "policies");
            json_array_append_new(items, item);
        }
        if (item && policy)
            json_object_set_new(json_object_get(item, "policies"), policy,
                                json_pack("{s:s?}", "revision_id", store_cell(rows, i, 3)));
    }
}

int policy_group_page(struct store *store, struct arena *arena, const char *org,
                      const struct page_query *q, const char *reach, json_t **out,
                      struct purser_error *err)
{
    struct page_filter f = {0};
    struct page_bounds b;
    struct store_rows rows;
    long long total = 0;
    const char *sql;
    json_t *all;
    size_t skip, n;
    int rc = prepare(store, arena, org, q, &group_spec, &f, &b, err);
    *out = NULL;
    if (!rc && !reach)
        rc = count_of(store, arena, "policy_groups", "g", &f, &total, err);
    if (rc) {
        buf_release(&f.where);
        return rc;
    }
    /* the page's groups first, then their pointers; a caller held on some groups only reads
     * every group the filter selects (groups are few) and pages what it may see */
    sql = arena_concat(
        arena,
        "SELECT k.k_name, k.k_policy_count, p.name, r.revision_id FROM (SELECT g.id, g.name AS"
        " k_name, (SELECT COUNT(*) FROM policy_group_pointers c WHERE c.group_id = g.id)"
        " AS k_policy_count FROM policy_groups g WHERE g.org_id = ?",
        buf_cstr(&f.where), " ORDER BY ", b.order,
        " LIMIT ? OFFSET ?) k LEFT JOIN policy_group_pointers pp ON pp.group_id = k.id"
        " LEFT JOIN policies p ON p.id = pp.policy_id"
        " LEFT JOIN policy_revisions r ON r.id = pp.revision_pk ORDER BY ",
        b.order, ", p.name", (const char *)NULL);
    buf_release(&f.where);
    f.params[f.count++] = (struct store_value)STORE_INT(reach ? PAGE_ALL : b.size + 1);
    f.params[f.count++] = (struct store_value)STORE_INT(reach ? 0 : b.offset);
    rc = store_query(store, arena, &rows, sql, f.params, f.count, err);
    if (!rc) {
        all = json_array();
        groups_fold(&rows, reach, all);
        n = json_array_size(all);
        skip = reach ? (size_t)b.offset : 0; /* without reach, the query skipped them */
        *out = page_answer(reach ? (long long)n : total, n > skip ? n - skip : 0, &b);
        for (size_t i = skip; i < n && i < skip + (size_t)b.size; i++)
            json_array_append(json_object_get(*out, "items"), json_array_get(all, i));
        json_decref(all);
    }
    return rc;
}
