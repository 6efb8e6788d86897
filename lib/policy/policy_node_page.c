/* policy_node_page.c: the nodes list as pages of summaries (the admin pages' nodes table and
 * purserctl's): each node's policy, group, the revision its group points at for its policy, and
 * what its last run reported (platform, address, ohai_time), read from the stored attributes of
 * the page's rows only, with the total the filter selects. */
#include "policy/policy.h"
#include "policy/policy_private.h"

#include "auth/identity.h"
#include "base/buf.h"

#include <stdlib.h>
#include <string.h>

static const char *const node_fields[] = {"name", "policy_name", "policy_group", NULL};
static const char *const node_keys[] = {"name", "policy_group", "policy_name", "updated_at", NULL};
static const struct page_spec node_spec = {"nodes", "n.", "n.", node_fields, node_keys};

static json_t *row_item(const struct store_rows *rows, size_t i)
{
    static const char *const names[] = {
        "name",      "policy_name", "policy_group", "revision_id", "platform", "platform_version",
        "ipaddress", "fqdn",        "ohai_time",    "updated_at"};
    json_t *item = json_object();
    for (size_t c = 0; c < sizeof(names) / sizeof(names[0]); c++) {
        const char *v = store_cell(rows, i, c);
        if (v && !strcmp(names[c], "ohai_time"))
            json_object_set_new(item, names[c], json_real(strtod(v, NULL)));
        else if (v)
            json_object_set_new(item, names[c], json_string(v));
    }
    return item;
}

int policy_node_page(struct store *store, struct arena *arena, const char *org,
                     const struct page_query *q, json_t **out, struct purser_error *err)
{
    struct page_filter f = {0};
    struct store_rows rows, total;
    struct page_bounds b;
    const char *sql;
    long long oid;
    int rc = identity_org_id(store, arena, org, &oid, err);
    *out = NULL;
    f.params[f.count++] = (struct store_value)STORE_INT(oid);
    if (!rc)
        rc = page_prepare(&f, arena, q, &node_spec, &b, err);
    if (rc) {
        buf_release(&f.where);
        return rc;
    }
    sql = arena_concat(arena, "SELECT COUNT(*) FROM nodes n WHERE n.org_id = ?", buf_cstr(&f.where),
                       (const char *)NULL);
    rc = store_query(store, arena, &total, sql, f.params, f.count, err);
    /* the page's ids first (the index's columns only), then their bodies' attributes */
    sql = arena_concat(
        arena,
        "SELECT n.name, n.policy_name, n.policy_group, r.revision_id,"
        " JSON_VALUE(n.body, '$.automatic.platform'),"
        " JSON_VALUE(n.body, '$.automatic.platform_version'),"
        " JSON_VALUE(n.body, '$.automatic.ipaddress'), JSON_VALUE(n.body, '$.automatic.fqdn'),"
        " JSON_VALUE(n.body, '$.automatic.ohai_time'), " STORE_ISO_TIME(
            "n.updated_at") " FROM (SELECT n.id FROM nodes n WHERE n.org_id = ?",
        buf_cstr(&f.where), " ORDER BY ", b.order,
        " LIMIT ? OFFSET ?) k JOIN nodes n ON n.id = k.id"
        " LEFT JOIN policy_groups g ON g.org_id = n.org_id AND g.name = n.policy_group"
        " LEFT JOIN policies p ON p.org_id = n.org_id AND p.name = n.policy_name"
        " LEFT JOIN policy_group_pointers ptr ON ptr.group_id = g.id AND ptr.policy_id = p.id"
        " LEFT JOIN policy_revisions r ON r.id = ptr.revision_pk ORDER BY ",
        b.order, (const char *)NULL);
    buf_release(&f.where);
    if (!rc) {
        f.params[f.count++] = (struct store_value)STORE_INT(b.size + 1);
        f.params[f.count++] = (struct store_value)STORE_INT(b.offset);
        rc = store_query(store, arena, &rows, sql, f.params, f.count, err);
    }
    if (!rc) {
        *out = page_answer(strtoll(store_cell(&total, 0, 0), NULL, 10), rows.count, &b);
        for (size_t i = 0; i < rows.count && i < (size_t)b.size; i++)
            json_array_append_new(json_object_get(*out, "items"), row_item(&rows, i));
    }
    return rc;
}
