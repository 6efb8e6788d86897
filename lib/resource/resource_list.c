/* resource_list.c: keyset pages of a kind's resources, narrowed by label selectors and
 * filters, in a stable order (resource.h). */
#include "resource/resource_private.h"

#include "base/buf.h"
#include "base/crypto.h"
#include "base/json_text.h"
#include "resource/selector.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define PAGE_DEFAULT 100
#define PAGE_MAX 1000
#define FILTERS_MAX 20

/* Where a page stands: the sort, and the last row's sort value and name. */
struct position {
    const char *sort; /* as asked: "name", "-created_at", ... */
    const char *value, *name;
};

struct list {
    const struct resource_kind *k;
    const struct resource_scope *s;
    struct buf sql;
    struct store_value *params;
    size_t count, cap;
    int oom; /* building the statement ran out of memory (said once, at the end) */
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

/* ---- page tokens: base64url of {"s": sort, "v": value, "n": name} ---- */

static char *token_make(struct arena *arena, const char *sort, const char *value, const char *name)
{
    json_t *t = json_pack("{s:s, s:s, s:s}", "s", sort, "v", value, "n", name);
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
    if (!pos->sort || !pos->value || !pos->name) {
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
    json_decref(t);
    return pos->sort && pos->value && pos->name
               ? 0
               : purser_error_set(l->err, PURSER_EINTERNAL, "out of memory");
}

/* ---- the query ---- */

/* The column a sort names (NULL: not one of this kind's), and its direction. */
static const char *sort_column(const struct resource_kind *k, const char *sort, int *desc)
{
    *desc = sort[0] == '-';
    sort += *desc;
    if (strcmp(sort, "name") == 0)
        return "r.name";
    if (strcmp(sort, "created_at") == 0)
        return "r.created_at";
    if (k->title && strcmp(sort, k->title) == 0)
        return "r.title";
    return NULL;
}

static void label_clause(struct list *l, const struct selector_requirement *r)
{
    int negative = r->op == SELECTOR_NE || r->op == SELECTOR_NOTIN || r->op == SELECTOR_NOT_EXISTS;
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
                         "%s%s<key>)",
                         field, k->kind, buf_cstr(&names), k->map_filter ? k->map_filter : "");
        buf_release(&names);
        return NULL;
    }
}

/* filter=field==value;field!=value */
static int filter_clauses(struct list *l, const char *text)
{
    char *copy = arena_strdup(l->s->arena, text), *save = NULL, *item;
    size_t n = 0;
    if (!copy)
        return purser_error_set(l->err, PURSER_EINTERNAL, "out of memory");
    for (item = strtok_r(copy, ";", &save); item; item = strtok_r(NULL, ";", &save)) {
        char *op = strstr(item, "==");
        char *ne = strstr(item, "!=");
        const char *path;
        int negative = ne && (!op || ne < op);
        if (negative)
            op = ne;
        if (!op || op == item)
            return purser_error_set(l->err, PURSER_EINVAL,
                                    "filter: '%.60s' is not field==value or field!=value", item);
        if (++n > FILTERS_MAX)
            return purser_error_set(l->err, PURSER_EINVAL, "filter: more than %d conditions",
                                    FILTERS_MAX);
        *op = '\0';
        if (strcmp(item, "name") == 0) {
            add(l, buf_printf(&l->sql, " AND r.name %s ?", negative ? "<>" : "="));
        } else {
            if (!(path = filter_path(l, item)))
                return l->err->code;
            add(l, buf_adds(&l->sql, negative ? " AND NOT (JSON_VALUE(r.spec, ?) <=> ?)"
                                              : " AND JSON_VALUE(r.spec, ?) = ?"));
            param_str(l, path);
        }
        param_str(l, op + 2);
    }
    return 0;
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

int resource_list(const struct resource_kind *k, const struct resource_scope *s,
                  const struct resource_query *q, struct buf *out, struct purser_error *err)
{
    struct list l = {.k = k, .s = s, .sql = BUF_INIT, .err = err};
    const char *sort = q->sort && *q->sort ? q->sort : "name";
    struct selector sel;
    struct position pos = {0};
    struct store_rows rows;
    const struct selector_requirement *drive = NULL;
    const char *col, *cmp;
    int desc, rc;
    long size = resource_page_size(q->page_size, err);
    size_t n, written = 0;

    if (size < 0)
        return (int)size;
    if (!(col = sort_column(k, sort, &desc)))
        return purser_error_set(err, PURSER_EINVAL,
                                "sort must be name, created_at%s%s (with '-' "
                                "before for descending), not '%.40s'",
                                k->title ? " or " : "", k->title ? k->title : "", sort);
    if ((rc = selector_parse(s->arena, q->labels ? q->labels : "", &sel, err)))
        return rc;
    if (q->page_token && *q->page_token && (rc = token_read(&l, q->page_token, sort, &pos)))
        return rc;
    cmp = desc ? "<" : ">";
    /* an equality requirement walks labels_select in name order: a page costs its size */
    for (size_t i = 0; i < sel.count && strcmp(col, "r.name") == 0; i++)
        if (sel.items[i].op == SELECTOR_EQ) {
            drive = &sel.items[i];
            break;
        }
    add(&l, buf_adds(&l.sql, drive ? "SELECT " RESOURCE_COLUMNS " FROM resource_labels d JOIN "
                                     "resources r ON r.id = d.resource_id WHERE d.org_id = ? AND "
                                     "d.kind = ? AND d.lkey = ? AND d.lvalue = ?"
                                   : "SELECT " RESOURCE_COLUMNS " FROM resources r WHERE "
                                     "r.org_id = ? AND r.kind = ?"));
    param(&l, (struct store_value)STORE_INT(s->org_id));
    param_str(&l, k->stored);
    if (drive) {
        param_str(&l, drive->key);
        param_str(&l, drive->values[0]);
    }
    if (pos.name && strcmp(col, "r.name") == 0) {
        add(&l, buf_printf(&l.sql, " AND %s %s ?", drive ? "d.name" : "r.name", cmp));
        param_str(&l, pos.name);
    } else if (pos.name) {
        add(&l,
            buf_printf(&l.sql, " AND (%s %s ? OR (%s = ? AND r.name %s ?))", col, cmp, col, cmp));
        param_str(&l, pos.value);
        param_str(&l, pos.value);
        param_str(&l, pos.name);
    }
    for (size_t i = 0; i < sel.count; i++)
        if (&sel.items[i] != drive)
            label_clause(&l, &sel.items[i]);
    if (q->filter && *q->filter && (rc = filter_clauses(&l, q->filter))) {
        buf_release(&l.sql);
        return rc;
    }
    if (q->owner) {
        add(&l, buf_adds(&l.sql, " AND JSON_VALUE(r.status, '$.client_id') = ?"));
        param(&l, (struct store_value)STORE_INT(q->owner));
    }
    if (strcmp(col, "r.name") == 0)
        add(&l, buf_printf(&l.sql, " ORDER BY %s %s LIMIT %ld", drive ? "d.name" : "r.name",
                           desc ? "DESC" : "ASC", size + 1));
    else
        add(&l, buf_printf(&l.sql, " ORDER BY %s %s, r.name %s LIMIT %ld", col,
                           desc ? "DESC" : "ASC", desc ? "DESC" : "ASC", size + 1));
    if (l.oom) {
        buf_release(&l.sql);
        return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    }
    rc = store_query(s->store, s->arena, &rows, buf_cstr(&l.sql), l.params, l.count, err);
    buf_release(&l.sql);
    if (rc)
        return rc;
    /* written out from the stored JSON as it is: a page is not parsed and written again */
    n = rows.count > (size_t)size ? (size_t)size : rows.count;
    rc = buf_adds(out, "{\"items\":[");
    for (size_t i = 0; !rc && i < n; i++) {
        size_t mark = out->len;
        if (written && (rc = buf_addc(out, ',')))
            break;
        rc = resource_write_text(k, &rows, i, out); /* 1: logged and skipped */
        if (rc == 1) {
            out->len = mark;
            rc = 0;
        } else if (!rc) {
            written++;
        }
    }
    {
        const char *next = "";
        if (rows.count > (size_t)size) {
            size_t last = (size_t)size - 1;
            const char *value = strcmp(col, "r.created_at") == 0
                                    ? store_cell(&rows, last, C_CREATED_RAW)
                                : strcmp(col, "r.title") == 0 ? store_cell(&rows, last, C_TITLE)
                                                              : store_cell(&rows, last, C_NAME);
            next = token_make(s->arena, sort, value, store_cell(&rows, last, C_NAME));
        }
        rc = rc ? rc : buf_printf(out, "],\"next_page_token\":\"%s\"}", next ? next : "");
    }
    return rc ? purser_error_set(err, PURSER_EINTERNAL, "out of memory") : 0;
}
