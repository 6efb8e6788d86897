/* policy_page.c: what the lists as pages share (nodes, policies, policy groups): the filter=
 * conditions (field==value, field!=value, '*' any text, joined by ';'), sort= (a key, '-' before
 * for descending), page_size= and page_token= (a position). */
#include "policy/policy_private.h"

#include "base/paging.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* One condition field==value or field!=value. */
static int filter_add(struct page_filter *f, struct arena *arena, char *cond,
                      const struct page_spec *spec, struct purser_error *err)
{
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
    for (size_t i = 0; spec->fields[i]; i++)
        if (!strcmp(cond, spec->fields[i]))
            column = spec->fields[i];
    if (!column)
        return purser_error_set(err, PURSER_EINVAL, "filter: %s filter on %s, not '%.40s'",
                                spec->noun, paging_one_of(arena, spec->fields), cond);
    if (f->count >= PAGE_FILTER_MAX)
        return purser_error_set(err, PURSER_EINVAL, "filter: at most %d conditions",
                                PAGE_FILTER_MAX);
    if (strchr(value, '*')) {
        if (!(value = paging_like(arena, value)))
            return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
        buf_printf(&f->where, " AND %sCOALESCE(%s%s LIKE ?, 0)", negative ? "NOT " : "",
                   spec->alias, column);
    } else {
        buf_printf(&f->where, negative ? " AND NOT (%s%s <=> ?)" : " AND %s%s = ?", spec->alias,
                   column);
    }
    f->params[f->count++] = (struct store_value)STORE_STR(value);
    return 0;
}

int page_filter_parse(struct page_filter *f, struct arena *arena, const char *filter,
                      const struct page_spec *spec, struct purser_error *err)
{
    char *text, *save = NULL;
    int rc = 0;
    if (!filter || !*filter)
        return 0;
    if (!(text = arena_strdup(arena, filter)))
        return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    for (char *cond = strtok_r(text, ";", &save); cond && !rc; cond = strtok_r(NULL, ";", &save))
        rc = filter_add(f, arena, cond, spec, err);
    return rc;
}

const char *page_sort_order(struct arena *arena, const char *sort, const struct page_spec *spec,
                            struct purser_error *err)
{
    const char *key = sort && *sort ? sort : spec->keys[0];
    const char *dir = "";
    if (*key == '-') {
        key++;
        dir = " DESC";
    }
    for (size_t i = 0; spec->keys[i]; i++)
        if (!strcmp(key, spec->keys[i]))
            return i ? arena_sprintf(arena, "%s%s%s, %s%s%s", spec->sort_alias, key, dir,
                                     spec->sort_alias, spec->keys[0], dir)
                     : arena_sprintf(arena, "%s%s%s", spec->sort_alias, key, dir);
    purser_error_set(err, PURSER_EINVAL,
                     "sort must be %s (with '-' before for descending), not '%.40s'",
                     paging_one_of(arena, spec->keys), sort);
    return NULL;
}

int page_count_param(const char *text, long fallback, long max, const char *what, long *out,
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

int page_prepare(struct page_filter *f, struct arena *arena, const struct page_query *q,
                 const struct page_spec *spec, struct page_bounds *b, struct purser_error *err)
{
    int rc = 0;
    if (q->all)
        b->size = PAGE_ALL;
    else
        rc = page_count_param(q->page_size, PAGE_DEFAULT, PAGE_MAX, "page_size", &b->size, err);
    if (!rc)
        rc = page_count_param(q->page_token, 0, 0, "page_token", &b->offset, err);
    if (!rc && !(b->order = page_sort_order(arena, q->sort, spec, err)))
        rc = err->code;
    if (!rc)
        rc = page_filter_parse(f, arena, q->filter, spec, err);
    return rc;
}

json_t *page_answer(long long total, size_t rows, const struct page_bounds *b)
{
    json_t *next =
        rows > (size_t)b->size ? json_sprintf("%ld", b->offset + b->size) : json_string("");
    return json_pack("{s:[], s:o, s:I}", "items", "next_page_token", next, "total",
                     (json_int_t)total);
}
