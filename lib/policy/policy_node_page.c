/* policy_node_page.c: the nodes list as pages of summaries (the admin pages' nodes table and
 * purserctl's): each node's policy, group, the revision its group points at for its policy, and
 * what its last run reported (platform, address, ohai_time), read from the stored attributes of
 * the page's rows only, with the total the filter selects. */
#include "policy/policy.h"
#include "policy/policy_private.h"

#include "auth/identity.h"
#include "base/buf.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define NODE_PAGE_DEFAULT 100
#define NODE_PAGE_MAX 1000
#define NODE_FILTER_MAX 10

struct node_filter {
    struct buf where;
    struct store_value params[2 + NODE_FILTER_MAX];
    size_t count;
};

/* A value with '*' in it as a LIKE pattern (its % _ and \ taken literally). */
static const char *like_pattern(struct arena *arena, const char *value)
{
    size_t n = strlen(value);
    char *out = arena_alloc(arena, 2 * n + 1), *o = out;
    if (!out)
        return NULL;
    for (const char *c = value; *c; c++) {
        if (*c == '%' || *c == '_' || *c == '\\')
            *o++ = '\\';
        *o++ = *c == '*' ? '%' : *c;
    }
    *o = '\0';
    return out;
}

/* One condition field==value or field!=value of filter=, on name, policy_name, policy_group. */
static int filter_add(struct node_filter *f, struct arena *arena, char *cond,
                      struct purser_error *err)
{
    static const char *const fields[] = {"name", "policy_name", "policy_group"};
    char *op = strstr(cond, "==");
    int negative = 0;
    const char *value, *column = NULL;
    if (!op && (op = strstr(cond, "!=")))
        negative = 1;
    if (!op)
        return purser_error_set(err, PURSER_EINVAL,
                                "filter: '%.60s' is not field==value or field!=value", cond);
    *op = '\0';
    value = op + 2;
    for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
        if (!strcmp(cond, fields[i]))
            column = fields[i];
    if (!column)
        return purser_error_set(err, PURSER_EINVAL,
                                "filter: nodes filter on name, policy_name or policy_group, not "
                                "'%.40s'",
                                cond);
    if (f->count >= NODE_FILTER_MAX)
        return purser_error_set(err, PURSER_EINVAL, "filter: at most %d conditions",
                                NODE_FILTER_MAX);
    if (strchr(value, '*')) {
        if (!(value = like_pattern(arena, value)))
            return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
        buf_printf(&f->where, " AND %sCOALESCE(n.%s LIKE ?, 0)", negative ? "NOT " : "", column);
    } else {
        buf_printf(&f->where, negative ? " AND NOT (n.%s <=> ?)" : " AND n.%s = ?", column);
    }
    f->params[f->count++] = (struct store_value)STORE_STR(value);
    return 0;
}

static int filter_parse(struct node_filter *f, struct arena *arena, const char *filter,
                        struct purser_error *err)
{
    char *text, *save = NULL;
    if (!filter || !*filter)
        return 0;
    if (!(text = arena_strdup(arena, filter)))
        return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    for (char *cond = strtok_r(text, ";", &save); cond; cond = strtok_r(NULL, ";", &save)) {
        int rc = filter_add(f, arena, cond, err);
        if (rc)
            return rc;
    }
    return 0;
}

/* The ORDER BY of sort= (name, policy_group, policy_name, updated_at; '-' before: descending),
 * then the name in the same direction, so that the order is total and a descending one is
 * the ascending one reversed (and an index in that order serves both). */
static const char *sort_order(struct arena *arena, const char *sort, struct purser_error *err)
{
    static const char *const keys[] = {"name", "policy_group", "policy_name", "updated_at"};
    const char *key = sort && *sort ? sort : "name";
    const char *dir = "";
    if (*key == '-') {
        key++;
        dir = " DESC";
    }
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        if (!strcmp(key, keys[i]))
            return strcmp(key, "name") ? arena_sprintf(arena, "n.%s%s, n.name%s", key, dir, dir)
                                       : arena_sprintf(arena, "n.name%s", dir);
    purser_error_set(err, PURSER_EINVAL,
                     "sort must be name, policy_group, policy_name or updated_at (with '-' before "
                     "for descending), not '%.40s'",
                     sort);
    return NULL;
}

static int count_param(const char *text, long fallback, long max, const char *what, long *out,
                       struct purser_error *err)
{
    char *end;
    long n;
    if (!text || !*text) {
        *out = fallback;
        return 0;
    }
    errno = 0;
    n = strtol(text, &end, 10);
    if (*end || n < 0)
        return purser_error_set(err, PURSER_EINVAL, "%s must be %s, not '%.40s'", what,
                                max ? "an integer" : "one a previous page gave", text);
    if (errno == ERANGE || (max && n > max))
        n = max ? max : n;
    *out = max && n < 1 ? 1 : n;
    return 0;
}

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
                     const struct node_page_query *q, json_t **out, struct purser_error *err)
{
    struct node_filter f = {0};
    struct store_rows rows, total;
    const char *order, *sql;
    long size, offset;
    long long oid;
    int rc = identity_org_id(store, arena, org, &oid, err);
    *out = NULL;
    f.params[f.count++] = (struct store_value)STORE_INT(oid);
    if (!rc && q->all)
        size = LONG_MAX - 1;
    else if (!rc)
        rc = count_param(q->page_size, NODE_PAGE_DEFAULT, NODE_PAGE_MAX, "page_size", &size, err);
    if (!rc)
        rc = count_param(q->page_token, 0, 0, "page_token", &offset, err);
    if (!rc && !(order = sort_order(arena, q->sort, err)))
        rc = err->code;
    if (!rc)
        rc = filter_parse(&f, arena, q->filter, err);
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
        buf_cstr(&f.where), " ORDER BY ", order,
        " LIMIT ? OFFSET ?) k JOIN nodes n ON n.id = k.id"
        " LEFT JOIN policy_groups g ON g.org_id = n.org_id AND g.name = n.policy_group"
        " LEFT JOIN policies p ON p.org_id = n.org_id AND p.name = n.policy_name"
        " LEFT JOIN policy_group_pointers ptr ON ptr.group_id = g.id AND ptr.policy_id = p.id"
        " LEFT JOIN policy_revisions r ON r.id = ptr.revision_pk ORDER BY ",
        order, (const char *)NULL);
    buf_release(&f.where);
    if (rc)
        return rc;
    f.params[f.count++] = (struct store_value)STORE_INT(size + 1);
    f.params[f.count++] = (struct store_value)STORE_INT(offset);
    if ((rc = store_query(store, arena, &rows, sql, f.params, f.count, err)))
        return rc;
    *out = json_pack("{s:o, s:s, s:I}", "items", json_array(), "next_page_token", "", "total",
                     (json_int_t)strtoll(store_cell(&total, 0, 0), NULL, 10));
    for (size_t i = 0; i < rows.count && i < (size_t)size; i++)
        json_array_append_new(json_object_get(*out, "items"), row_item(&rows, i));
    if (rows.count > (size_t)size)
        json_object_set_new(*out, "next_page_token", json_sprintf("%ld", offset + size));
    return 0;
}
