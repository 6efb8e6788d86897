/* resource_list.c: keyset pages of a kind's resources, narrowed by label selectors and
 * filters, in a stable order (resource.h). */
#include "resource/resource_private.h"

#include "base/buf.h"
#include "base/crypto.h"
#include "base/json_text.h"
#include "base/paging.h"
#include "resource/resource_values.h"
#include "resource/selector.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define PAGE_DEFAULT 100
#define PAGE_MAX 1000
#define FILTERS_MAX 20
#define ORGANIZATIONS_MAX 100

/* Where a page stands: the sort, and the last row's sort value and name. */
struct position {
    const char *sort; /* as asked: "name", "-created_at", ... */
    const char *value, *name;
    const char *org; /* every organization's list: the last row's organization id */
};

struct list {
    const struct resource_kind *k;
    const struct resource_scope *s;
    struct buf sql;
    struct store_value *params;
    size_t count, cap;
    int oom;   /* building the statement ran out of memory (said once, at the end) */
    int every; /* every organization's resources (resource_query.all_organizations) */
    struct purser_error *err;
};

/* Appends to the statement being built: rc is what the buf call returned. */
static void add(struct list *l, int rc)
{
    if (rc)
        l->oom = 1;
}

static void param(struct list *l, struct store_value v)
{
    if (l->count == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 32;
        struct store_value *more = arena_alloc(l->s->arena, cap * sizeof(*more));
        if (!more) {
            l->oom = 1;
            return;
        }
        if (l->count)
            memcpy(more, l->params, l->count * sizeof(*more));
        l->params = more;
        l->cap = cap;
    }
    l->params[l->count++] = v;
}

static void param_str(struct list *l, const char *text)
{
    param(l, (struct store_value)STORE_STR(text));
}

/* ---- page tokens: base64url of {"s": sort, "v": value, "n": name, "o": organization id (every
 * organization's list only)} ---- */

static char *token_make(struct arena *arena, const char *sort, const char *value, const char *name,
                        const char *org)
{
    json_t *t = json_pack("{s:s, s:s, s:s, s:s*}", "s", sort, "v", value, "n", name, "o", org);
    char *text = t ? json_text(t, JSON_COMPACT) : NULL;
    char *b64 = text ? crypto_base64url(text, strlen(text)) : NULL;
    char *out = b64 ? arena_strdup(arena, b64) : NULL;
    json_decref(t);
    free(text);
    free(b64);
    return out;
}

static int token_read(struct list *l, const char *token, const char *sort, struct position *pos)
{
    size_t len = 0;
    unsigned char *raw = crypto_base64url_decode(token, &len);
    json_t *t = raw ? json_loadb((const char *)raw, len, 0, NULL) : NULL;
    free(raw);
    pos->sort = json_string_value(json_object_get(t, "s"));
    pos->value = json_string_value(json_object_get(t, "v"));
    pos->name = json_string_value(json_object_get(t, "n"));
    pos->org = json_string_value(json_object_get(t, "o"));
    if (!pos->sort || !pos->value || !pos->name || !pos->org != !l->every) {
        json_decref(t);
        return purser_error_set(l->err, PURSER_EINVAL,
                                "page_token is not one this server made: use next_page_token "
                                "from the previous page as it is");
    }
    if (strcmp(pos->sort, sort) != 0) {
        int rc = purser_error_set(l->err, PURSER_EINVAL,
                                  "page_token was made for sort=%.40s, not sort=%.40s: keep the "
                                  "other parameters of the first page",
                                  pos->sort, sort);
        json_decref(t);
        return rc;
    }
    pos->sort = arena_strdup(l->s->arena, pos->sort);
    pos->value = arena_strdup(l->s->arena, pos->value);
    pos->name = arena_strdup(l->s->arena, pos->name);
    pos->org = pos->org ? arena_strdup(l->s->arena, pos->org) : NULL;
    json_decref(t);
    return pos->sort && pos->value && pos->name
               ? 0
               : purser_error_set(l->err, PURSER_EINTERNAL, "out of memory");
}

/* ---- the query ---- */

/* The expression of the row's name. */
static const char *name_column(const struct resource_kind *k)
{
    return k->table ? k->table->name : "r.name";
}

/* The column a sort names (NULL: not one of this kind's), and its direction. */
static const char *sort_column(const struct resource_kind *k, const char *sort, int *desc)
{
    *desc = sort[0] == '-';
    sort += *desc;
    if (strcmp(sort, "name") == 0)
        return name_column(k);
    if (strcmp(sort, "created_at") == 0)
        return "r.created_at";
    if (k->title && strcmp(sort, k->title) == 0)
        return k->table ? k->table->title : "r.title";
    return NULL;
}

/* A label requirement on a kind with a table: its labels column (JSON) read by key. */
static void label_clause_json(struct list *l, const struct selector_requirement *r)
{
    const char *labels = arena_sprintf(l->s->arena, "COALESCE(%s, '{}')", l->k->table->labels);
    const char *path = arena_sprintf(l->s->arena, "$.\"%s\"", r->key); /* keys hold no '"' */
    if (!labels || !path) {
        l->oom = 1;
        return;
    }
    if (r->op == SELECTOR_EXISTS || r->op == SELECTOR_NOT_EXISTS) {
        add(l, buf_printf(&l->sql, " AND %sJSON_EXISTS(%s, ?)",
                          r->op == SELECTOR_NOT_EXISTS ? "NOT " : "", labels));
        param_str(l, path);
        return;
    }
    add(l, buf_printf(&l->sql, " AND %sCOALESCE(JSON_VALUE(%s, ?) IN (",
                      r->op == SELECTOR_NE || r->op == SELECTOR_NOTIN ? "NOT " : "", labels));
    param_str(l, path);
    for (size_t i = 0; i < r->count; i++) {
        add(l, buf_adds(&l->sql, i ? ", ?" : "?"));
        param_str(l, r->values[i]);
    }
    add(l, buf_adds(&l->sql, "), 0)"));
}

static void label_clause(struct list *l, const struct selector_requirement *r)
{
    int negative;
    if (l->k->table) {
        label_clause_json(l, r);
        return;
    }
    negative = r->op == SELECTOR_NE || r->op == SELECTOR_NOTIN || r->op == SELECTOR_NOT_EXISTS;
    add(l, buf_printf(&l->sql,
                      " AND %sEXISTS (SELECT 1 FROM resource_labels l WHERE "
                      "l.resource_id = r.id AND l.lkey = ?",
                      negative ? "NOT " : ""));
    param_str(l, r->key);
    if (r->count) {
        add(l, buf_adds(&l->sql, " AND l.lvalue IN ("));
        for (size_t i = 0; i < r->count; i++) {
            add(l, buf_adds(&l->sql, i ? ", ?" : "?"));
            param_str(l, r->values[i]);
        }
        add(l, buf_adds(&l->sql, ")"));
    }
    add(l, buf_adds(&l->sql, ")"));
}

/* The JSON path a filter field reads, or NULL (400 set). */
static const char *filter_path(struct list *l, const char *field)
{
    const struct resource_kind *k = l->k;
    size_t prefix = k->map_filter ? strlen(k->map_filter) : 0;
    for (size_t i = 0; i < k->filter_count; i++)
        if (strcmp(k->filters[i].name, field) == 0)
            return k->filters[i].path;
    if (prefix && strncmp(field, k->map_filter, prefix) == 0 && field[prefix] &&
        !strpbrk(field + prefix, "\"\\"))
        return arena_sprintf(l->s->arena, "%s.\"%s\"", k->map_path, field + prefix);
    {
        struct buf names = BUF_INIT;
        for (size_t i = 0; i < k->filter_count; i++)
            buf_printf(&names, "%s, ", k->filters[i].name);
        purser_error_set(l->err, PURSER_EINVAL,
                         "filter: '%.60s' is not a field of %s that can be filtered on (name, "
                         "sub_kind, %s%s%s)",
                         field, k->kind, buf_cstr(&names), k->map_filter ? k->map_filter : "",
                         k->map_filter ? "<key>" : "");
        buf_release(&names);
        return NULL;
    }
}

/* One condition of filter=: field == value, or != when negative. */
static int filter_clause(struct list *l, const char *field, int negative, const char *value)
{
    const struct resource_kind *k = l->k;
    const char *column = NULL, *path;
    if (strcmp(field, "name") == 0)
        column = name_column(k);
    else if (strcmp(field, "sub_kind") == 0 && (!k->table || k->table->sub_kind))
        column = k->table ? k->table->sub_kind : "r.sub_kind";
    if (column && strchr(value, '*')) { /* a pattern, as the other lists take one: web-* */
        const char *like = paging_like(l->s->arena, value);
        if (!like)
            l->oom = 1;
        add(l, buf_printf(&l->sql, negative ? " AND NOT COALESCE(%s LIKE ?, 0)" : " AND %s LIKE ?",
                          column));
        param_str(l, like ? like : "");
        return 0;
    }
    if (column) {
        add(l, buf_printf(&l->sql, negative ? " AND NOT (%s <=> ?)" : " AND %s = ?", column));
        param_str(l, value);
        return 0;
    }
    for (size_t i = 0; k->table && i < k->filter_count; i++)
        if (strcmp(k->filters[i].name, field) == 0) {
            add(l, buf_printf(&l->sql, negative ? " AND NOT COALESCE((%s), 0)" : " AND (%s)",
                              k->filters[i].path));
            param_str(l, value);
            return 0;
        }
    if (!(path = filter_path(l, field)))
        return l->err->code;
    add(l, buf_adds(&l->sql, negative ? " AND NOT (JSON_VALUE(r.spec, ?) <=> ?)"
                                      : " AND JSON_VALUE(r.spec, ?) = ?"));
    param_str(l, path);
    param_str(l, value);
    return 0;
}

/* The first operator in a condition (==, !=, <=, >=, <, >), its kind and length; NULL: none. */
static char *filter_operator(char *item, enum resource_value_op *op, size_t *len)
{
    static const struct {
        const char *text;
        enum resource_value_op op;
    } ops[] = {{"==", RESOURCE_VALUE_EQ}, {"!=", RESOURCE_VALUE_NE}, {"<=", RESOURCE_VALUE_LE},
               {">=", RESOURCE_VALUE_GE}, {"<", RESOURCE_VALUE_LT},  {">", RESOURCE_VALUE_GT}};
    for (char *at = item; *at; at++)
        for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
            if (!strncmp(at, ops[i].text, strlen(ops[i].text))) {
                *op = ops[i].op;
                *len = strlen(ops[i].text);
                return at;
            }
    return NULL;
}

/* One condition on the kind's indexed values (values_filter<path> op value); whole: the
 * condition as written, for messages. */
static int values_clause(struct list *l, const char *whole, const char *path,
                         enum resource_value_op op, const char *value)
{
    char *key = arena_alloc(l->s->arena, RESOURCE_VERSION_KEY_SIZE);
    struct store_value params[2];
    const char *sql;
    int rc = key ? resource_values_condition(whole, path, op, value, key, &sql, params, l->err)
                 : purser_error_set(l->err, PURSER_EINTERNAL, "out of memory");
    if (!rc) {
        add(l, buf_adds(&l->sql, sql));
        param(l, params[0]);
        param(l, params[1]);
    }
    return rc;
}

/* One condition of filter=: field==value, field!=value, and on indexed values comparisons. */
static int filter_condition(struct list *l, char *item)
{
    const char *values = l->k->values_filter;
    const char *whole = arena_strdup(l->s->arena, item);
    enum resource_value_op op;
    size_t len;
    char *at = filter_operator(item, &op, &len);
    if (!whole)
        return purser_error_set(l->err, PURSER_EINTERNAL, "out of memory");
    if (!at || at == item)
        return purser_error_set(l->err, PURSER_EINVAL,
                                "filter: '%.60s' is not field==value or field!=value%s%s%s", item,
                                values ? " (or on " : "", values ? values : "",
                                values ? "<path> <, <=, > or >= a version)" : "");
    *at = '\0';
    if (values && !strncmp(item, values, strlen(values)))
        return values_clause(l, whole, item + strlen(values), op, at + len);
    if (op != RESOURCE_VALUE_EQ && op != RESOURCE_VALUE_NE)
        return purser_error_set(l->err, PURSER_EINVAL,
                                "filter: '%.60s': <, <=, > and >= compare versions, of %s%s only",
                                whole, values ? values : "no field of ",
                                values ? "<path>" : l->k->kind);
    return filter_clause(l, item, op == RESOURCE_VALUE_NE, at + len);
}

/* filter=field==value;field!=value;dynamic_facts.a.b>=1.29... */
static int filter_clauses(struct list *l, const char *text)
{
    char *copy = arena_strdup(l->s->arena, text), *save = NULL, *item;
    size_t n = 0;
    int rc = 0;
    if (!copy)
        return purser_error_set(l->err, PURSER_EINTERNAL, "out of memory");
    for (item = strtok_r(copy, ";", &save); item && !rc; item = strtok_r(NULL, ";", &save)) {
        if (++n > FILTERS_MAX)
            rc = purser_error_set(l->err, PURSER_EINVAL, "filter: more than %d conditions",
                                  FILTERS_MAX);
        else
            rc = filter_condition(l, item);
    }
    return rc;
}

long resource_page_size(const char *text, struct purser_error *err)
{
    char *end;
    long n;
    if (!text)
        return PAGE_DEFAULT;
    errno = 0;
    n = strtol(text, &end, 10);
    if (!*text || *end)
        return purser_error_set(err, PURSER_EINVAL, "page_size must be an integer, not '%.40s'",
                                text);
    if (errno == ERANGE || n > PAGE_MAX)
        return PAGE_MAX;
    return n < 1 ? 1 : n;
}

/* What a list's statement is built from. */
struct plan {
    const char *sort, *col; /* as asked, and its column */
    int desc;
    long size; /* rows a page holds; 0: every row (resource_list_names) */
    struct selector sel;
    struct position pos;
    const struct selector_requirement *drive; /* walks labels_select, or NULL */
    const char *value_path, *value;           /* an equality on indexed values that walks
                                                 values_select instead, or NULL */
};

/* organization=a,b of every organization's list: only theirs. */
static void organizations_clause(struct list *l, const char *names)
{
    char *copy = names && *names ? arena_strdup(l->s->arena, names) : NULL, *save = NULL;
    int first = 1;
    if (!copy) {
        l->oom = names && *names;
        return;
    }
    add(l, buf_adds(&l->sql, " AND o.name IN ("));
    for (char *name = strtok_r(copy, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
        add(l, buf_adds(&l->sql, first ? "?" : ", ?"));
        param_str(l, name);
        first = 0;
    }
    add(l, buf_adds(&l->sql, first ? "NULL)" : ")"));
}

/* Every organization's rows, each with its organization's name and id (C_ORGANIZATION...). */
static void select_every(struct list *l, const struct resource_query *q, const struct plan *p)
{
    int one = q->organizations && *q->organizations && !strchr(q->organizations, ',');
    /* in name order resources_all is walked from the page's start (MariaDB would read it from
     * the kind's first row, or sort the organizations' rows), each row's organization checked;
     * one organization's rows are its own by resources_name, as the optimizer finds */
    add(l, buf_adds(&l->sql, one ? "SELECT " : "SELECT STRAIGHT_JOIN "));
    add(l, buf_adds(&l->sql, RESOURCE_COLUMNS ", o.name, r.org_id FROM resources r"));
    add(l,
        buf_adds(&l->sql, !one && !strcmp(p->col, "r.name") ? " FORCE INDEX (resources_all)" : ""));
    add(l, buf_adds(&l->sql, " JOIN organizations o ON o.id = r.org_id WHERE r.kind = ?"));
    param_str(l, l->k->stored);
    organizations_clause(l, q->organizations);
    add(l, buf_adds(&l->sql, RESOURCE_LIVE));
}

/* The statement's start: the kind's rows in its scope, by the driving label when there is one. */
static void select_from(struct list *l, const struct resource_query *q, const struct plan *p)
{
    if (l->k->table) {
        add(l, buf_adds(&l->sql, l->k->table->select));
        for (size_t i = 0; i < q->scope_count; i++)
            param(l, q->scope[i]);
        if (l->k->table->expires)
            add(l, buf_printf(&l->sql, " AND (%s IS NULL OR %s > NOW(6))", l->k->table->expires,
                              l->k->table->expires));
        return;
    }
    if (l->every) {
        select_every(l, q, p);
        return;
    }
    add(l, buf_adds(&l->sql, p->drive ? "SELECT " RESOURCE_COLUMNS " FROM resource_labels d JOIN "
                                        "resources r ON r.id = d.resource_id WHERE d.org_id = ? "
                                        "AND d.kind = ? AND d.lkey = ? AND d.lvalue = ?"
                             : p->value_path
                                 ? "SELECT " RESOURCE_COLUMNS " FROM resource_values d JOIN "
                                   "resources r ON r.id = d.resource_id WHERE d.org_id = ? AND "
                                   "d.kind = ? AND d.path = ? AND d.value = ?"
                                 : "SELECT " RESOURCE_COLUMNS " FROM resources r WHERE "
                                   "r.org_id = ? AND r.kind = ?"));
    param(l, (struct store_value)STORE_INT(l->s->org_id));
    param_str(l, l->k->stored);
    if (p->drive || p->value_path) {
        param_str(l, p->drive ? p->drive->key : p->value_path);
        param_str(l, p->drive ? p->drive->values[0] : p->value);
    }
    add(l, buf_adds(&l->sql, RESOURCE_LIVE));
}

/* Every organization's list: after the token's position in the order of the sort, the name,
 * then the organization (its id: the older first), which resources_all walks by name. */
static void position_every(struct list *l, const struct plan *p)
{
    const char *cmp = p->desc ? "<" : ">", *dir = p->desc ? "DESC" : "ASC";
    int by_name = strcmp(p->col, "r.name") == 0;
    if (p->pos.name) {
        if (by_name)
            add(l, buf_printf(&l->sql, " AND r.name %s= ? AND (r.name %s ? OR r.org_id %s ?)", cmp,
                              cmp, cmp));
        else
            add(l, buf_printf(&l->sql,
                              " AND %s %s= ? AND (%s %s ? OR r.name %s ? OR (r.name = ? AND "
                              "r.org_id %s ?))",
                              p->col, cmp, p->col, cmp, cmp, cmp));
        param_str(l, by_name ? p->pos.name : p->pos.value);
        if (!by_name) {
            param_str(l, p->pos.value);
            param_str(l, p->pos.name);
        }
        param_str(l, p->pos.name);
        param(l, (struct store_value)STORE_INT(strtoll(p->pos.org, NULL, 10)));
    }
    if (by_name)
        add(l, buf_printf(&l->sql, " ORDER BY r.name %s, r.org_id %s", dir, dir));
    else
        add(l,
            buf_printf(&l->sql, " ORDER BY %s %s, r.name %s, r.org_id %s", p->col, dir, dir, dir));
    if (p->size)
        add(l, buf_printf(&l->sql, " LIMIT %ld", p->size + 1));
}

/* Where the page starts (after the token's position) and its order. */
static void position_and_order(struct list *l, const struct plan *p)
{
    const char *name = p->drive || p->value_path ? "d.name" : name_column(l->k);
    const char *cmp = p->desc ? "<" : ">", *dir = p->desc ? "DESC" : "ASC";
    int by_name = strcmp(p->col, name_column(l->k)) == 0;
    if (l->every) {
        position_every(l, p);
        return;
    }
    if (p->pos.name && by_name) {
        add(l, buf_printf(&l->sql, " AND %s %s ?", name, cmp));
        param_str(l, p->pos.name);
    } else if (p->pos.name) {
        add(l, buf_printf(&l->sql, " AND (%s %s ? OR (%s = ? AND %s %s ?))", p->col, cmp, p->col,
                          name, cmp));
        param_str(l, p->pos.value);
        param_str(l, p->pos.value);
        param_str(l, p->pos.name);
    }
    if (by_name)
        add(l, buf_printf(&l->sql, " ORDER BY %s %s", name, dir));
    else
        add(l, buf_printf(&l->sql, " ORDER BY %s %s, %s %s", p->col, dir, name, dir));
    if (p->size)
        add(l, buf_printf(&l->sql, " LIMIT %ld", p->size + 1));
}

/* The names organization= gives (commas between). */
static size_t organizations_count(const char *names)
{
    size_t n = names && *names;
    for (const char *c = names; c && *c; c++)
        n += *c == ',';
    return n;
}

/* The first equality on the kind's indexed values in filter, into p (checked with the other
 * conditions later). */
static void value_drive(struct list *l, const char *filter, struct plan *p)
{
    const char *prefix = l->k->values_filter;
    char *copy = arena_strdup(l->s->arena, filter), *save = NULL;
    for (char *item = copy ? strtok_r(copy, ";", &save) : NULL; item;
         item = strtok_r(NULL, ";", &save)) {
        enum resource_value_op op;
        size_t len;
        char *at = filter_operator(item, &op, &len);
        if (at && op == RESOURCE_VALUE_EQ && !strncmp(item, prefix, strlen(prefix))) {
            *at = '\0';
            p->value_path = item + strlen(prefix);
            p->value = at + len;
            return;
        }
    }
}

/* The parameters read and checked: 0, or the 400 naming the one at fault. */
static int plan_of(struct list *l, const struct resource_query *q, int paged, struct plan *p)
{
    const struct resource_kind *k = l->k;
    int rc;
    memset(p, 0, sizeof(*p));
    p->sort = paged && q->sort && *q->sort ? q->sort : "name";
    p->size = paged ? resource_page_size(q->page_size, l->err) : 0;
    if (p->size < 0)
        return (int)p->size;
    if (!(p->col = sort_column(k, p->sort, &p->desc)))
        return purser_error_set(l->err, PURSER_EINVAL,
                                "sort must be name, created_at%s%s (with '-' "
                                "before for descending), not '%.40s'",
                                k->title ? " or " : "", k->title ? k->title : "", p->sort);
    rc = selector_parse(l->s->arena, q->labels ? q->labels : "", &p->sel, l->err);
    if (!rc && paged && q->page_token && *q->page_token)
        rc = token_read(l, q->page_token, p->sort, &p->pos);
    if (!rc && l->every && organizations_count(q->organizations) > ORGANIZATIONS_MAX)
        rc = purser_error_set(l->err, PURSER_EINVAL, "organization: more than %d names",
                              ORGANIZATIONS_MAX);
    if (!rc) {
        /* an equality requirement walks labels_select in name order: a page costs its size */
        for (size_t i = 0; !k->table && !l->every && i < p->sel.count && !strcmp(p->col, "r.name");
             i++)
            if (p->sel.items[i].op == SELECTOR_EQ) {
                p->drive = &p->sel.items[i];
                break;
            }
        /* else an equality on indexed values walks values_select the same way */
        if (!p->drive && !k->table && !l->every && k->values_filter && q->filter &&
            !strcmp(p->col, "r.name"))
            value_drive(l, q->filter, p);
    }
    return rc;
}

/* The rows of the list q asks for (paged: one page and one more row). */
static int list_rows(const struct resource_kind *k, const struct resource_scope *s,
                     const struct resource_query *q, int paged, struct plan *p,
                     struct store_rows *rows, struct purser_error *err)
{
    struct list l = {.k = k, .s = s, .sql = BUF_INIT, .err = err, .every = q->all_organizations};
    int rc = plan_of(&l, q, paged, p);
    if (!rc && !l.every) /* what has expired goes first, with its events */
        resource_expire_sweep(k, s);
    if (!rc) {
        select_from(&l, q, p);
        for (size_t i = 0; i < p->sel.count; i++)
            if (&p->sel.items[i] != p->drive)
                label_clause(&l, &p->sel.items[i]);
    }
    if (!rc && q->filter && *q->filter)
        rc = filter_clauses(&l, q->filter);
    if (!rc && q->owner) {
        add(&l, buf_adds(&l.sql, " AND JSON_VALUE(r.status, '$.client_id') = ?"));
        param(&l, (struct store_value)STORE_INT(q->owner));
    }
    if (!rc)
        position_and_order(&l, p);
    if (!rc && l.oom)
        rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    if (!rc)
        rc = store_query(s->store, s->arena, rows, buf_cstr(&l.sql), l.params, l.count, err);
    buf_release(&l.sql);
    return rc;
}

/* The sort value of row i, which a page token keeps. */
static const char *sort_value(const struct resource_kind *k, const struct plan *p,
                              const struct store_rows *rows, size_t i)
{
    if (strcmp(p->col, "r.created_at") == 0)
        return store_cell(rows, i, C_CREATED);
    return store_cell(rows, i, strcmp(p->col, name_column(k)) ? C_TITLE : C_NAME);
}

/* A page of rows as the list's JSON (items, next_page_token) into out. */
static int write_page(const struct resource_kind *k, const struct resource_scope *s,
                      const struct plan *p, const struct store_rows *rows, struct buf *out,
                      struct purser_error *err)
{
    const char *next = "";
    size_t n, written = 0;
    int rc;
    /* written out from the stored JSON as it is: a page is not parsed and written again */
    n = rows->count > (size_t)p->size ? (size_t)p->size : rows->count;
    rc = buf_adds(out, "{\"items\":[");
    for (size_t i = 0; !rc && i < n; i++) {
        size_t mark = out->len;
        if (written && (rc = buf_addc(out, ',')))
            break;
        rc = resource_write_text(k, rows, i, out); /* 1: logged and skipped */
        if (rc == 1) {
            out->len = mark;
            rc = 0;
        } else if (!rc) {
            written++;
        }
    }
    if (rows->count > (size_t)p->size) {
        size_t last = (size_t)p->size - 1;
        next =
            token_make(s->arena, p->sort, sort_value(k, p, rows, last),
                       store_cell(rows, last, C_NAME), store_cell(rows, last, C_ORGANIZATION_ID));
    }
    if (!rc)
        rc = buf_printf(out, "],\"next_page_token\":\"%s\"}", next ? next : "");
    return rc ? purser_error_set(err, PURSER_EINTERNAL, "out of memory") : 0;
}

int resource_list(const struct resource_kind *k, const struct resource_scope *s,
                  const struct resource_query *q, struct buf *out, struct purser_error *err)
{
    struct plan p;
    struct store_rows rows;
    int rc = list_rows(k, s, q, 1, &p, &rows, err);
    if (!rc)
        rc = write_page(k, s, &p, &rows, out, err);
    return rc;
}

int resource_list_names(const struct resource_kind *k, const struct resource_scope *s,
                        const struct resource_query *q, const char ***names, size_t *count,
                        struct purser_error *err)
{
    struct plan p;
    struct store_rows rows;
    int rc = list_rows(k, s, q, 0, &p, &rows, err);
    *names = NULL;
    *count = 0;
    if (!rc && !(*names = arena_calloc(s->arena, rows.count + 1, sizeof(**names))))
        rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    if (!rc) {
        for (size_t i = 0; i < rows.count; i++)
            (*names)[i] = store_cell(&rows, i, C_NAME);
        *count = rows.count;
    }
    return rc;
}
