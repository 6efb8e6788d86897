/* docstore_page.c: the document lists as pages (a revision's documents, as posted and
 * rendered, and the revisions): page_size, page_token (a position) and filter= conditions,
 * as SQL conditions or matched against documents already in memory. */
#include "docs/docstore_private.h"

#include "base/paging.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

const char *const docstore_document_fields[] = {"name", "schema", "layer", "bucket", "text", NULL};
const char *const docstore_revision_fields[] = {"tag", "bucket", "text", NULL};

static int cond_add(struct arena *arena, char *text, const char *const *fields,
                    struct docstore_page *out, struct purser_error *err)
{
    char *op = strstr(text, "==");
    int negative = 0;
    struct docstore_cond *c;
    if (!op && (op = strstr(text, "!=")))
        negative = 1;
    if (!op)
        return purser_error_set(err, PURSER_EINVAL,
                                "filter: '%.60s' is not field==value or field!=value", text);
    *op = '\0';
    for (size_t i = 0;; i++) {
        if (!fields[i])
            return purser_error_set(err, PURSER_EINVAL, "filter: on %s, not '%.40s'",
                                    paging_one_of(arena, fields), text);
        if (!strcmp(text, fields[i]))
            break;
    }
    if (out->cond_count >= DOCSTORE_PAGE_CONDS)
        return purser_error_set(err, PURSER_EINVAL, "filter: at most %d conditions",
                                DOCSTORE_PAGE_CONDS);
    c = &out->conds[out->cond_count++];
    c->field = text;
    c->value = op + 2;
    c->negative = negative;
    if (!(c->pattern = paging_like(arena, c->value)))
        return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    return 0;
}

/* A count parameter: fallback when absent; max 0: any n >= 0, else clamped to 1..max. */
static int count_param(const char *text, long fallback, long max, const char *what, long *out,
                       struct purser_error *err)
{
    char *end;
    long n;
    if (!text) {
        *out = fallback;
        return 0;
    }
    errno = 0;
    n = strtol(text, &end, 10);
    if (!*text || *end || n < 0)
        return purser_error_set(err, PURSER_EINVAL, "%s must be %s, not '%.40s'", what,
                                max ? "an integer" : "one a previous page gave", text);
    if (max && (errno == ERANGE || n > max))
        n = max;
    *out = max && n < 1 ? 1 : n;
    return 0;
}

int docstore_page_parse(struct arena *arena, const char *page_size, const char *page_token,
                        const char *filter, const char *const *fields, struct docstore_page *out,
                        struct purser_error *err)
{
    char *text = NULL, *save = NULL;
    int rc;
    memset(out, 0, sizeof(*out));
    out->next = -1;
    rc = count_param(page_size, DOCSTORE_PAGE_DEFAULT, DOCSTORE_PAGE_MAX, "page_size", &out->size,
                     err);
    if (!rc)
        rc = count_param(page_token, 0, 0, "page_token", &out->offset, err);
    if (!rc && filter && *filter && !(text = arena_strdup(arena, filter)))
        rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    for (char *c = !rc && text ? strtok_r(text, ";", &save) : NULL; c && !rc;
         c = strtok_r(NULL, ";", &save))
        rc = cond_add(arena, c, fields, out, err);
    return rc;
}

int docstore_page_where(const struct docstore_page *pg, const char *const *fields,
                        const char *const *templates, struct buf *sql, struct docstore_params *p)
{
    int rc = 0;
    for (size_t i = 0; !rc && pg && i < pg->cond_count; i++) {
        const struct docstore_cond *c = &pg->conds[i];
        const char *t = NULL;
        for (size_t f = 0; fields[f]; f++)
            if (!strcmp(fields[f], c->field))
                t = templates[f];
        if (!t)
            return PURSER_EINVAL;
        rc = buf_adds(sql, c->negative ? " AND NOT COALESCE(" : " AND COALESCE(");
        if (!rc)
            rc = buf_adds(sql, t);
        if (!rc)
            rc = buf_adds(sql, ", 0)");
        for (const char *q = strchr(t, '?'); !rc && q; q = strchr(q + 1, '?'))
            rc = docstore_param(p, STORE_STR(c->pattern));
    }
    return rc;
}

/* 1 when text matches value, '*' in it any text (byte for byte otherwise, as the columns'
 * binary collation compares). */
static int glob(const char *value, const char *text)
{
    if (!text)
        return 0;
    while (*value && *value != '*') {
        if (*value++ != *text++)
            return 0;
    }
    if (!*value)
        return !*text;
    while (*value == '*')
        value++;
    if (!*value)
        return 1;
    for (; *text; text++)
        if (glob(value, text))
            return 1;
    return 0;
}

static const char *field_of(const json_t *doc, const char *path)
{
    while (doc && *path) {
        char part[64];
        size_t n = strcspn(path, ".");
        snprintf(part, sizeof(part), "%.*s", (int)n, path);
        doc = json_object_get(doc, part);
        path += n + (path[n] == '.');
    }
    return json_string_value(doc);
}

int docstore_page_matches(const struct docstore_page *pg, const json_t *doc)
{
    const char *name = field_of(doc, "metadata.name"), *schema = field_of(doc, "schema");
    for (size_t i = 0; pg && i < pg->cond_count; i++) {
        const struct docstore_cond *c = &pg->conds[i];
        int hit = !strcmp(c->field, "name")     ? glob(c->value, name)
                  : !strcmp(c->field, "schema") ? glob(c->value, schema)
                  : !strcmp(c->field, "layer")
                      ? glob(c->value, field_of(doc, "metadata.layeringDefinition.layer"))
                  : !strcmp(c->field, "bucket") ? glob(c->value, field_of(doc, "status.bucket"))
                                                : glob(c->value, name) || glob(c->value, schema);
        if (hit == c->negative)
            return 0;
    }
    return 1;
}

int docstore_page_slice(json_t *docs, struct docstore_page *pg)
{
    size_t n = json_array_size(docs), from = (size_t)pg->offset;
    json_t *page = json_array();
    int rc = !page;
    pg->total = (long long)n;
    pg->next = from < n && n - from > (size_t)pg->size ? pg->offset + pg->size : -1;
    for (size_t i = from; !rc && i < n && i < from + (size_t)pg->size; i++)
        rc = json_array_append(page, json_array_get(docs, i));
    if (!rc)
        rc = json_array_clear(docs);
    if (!rc)
        rc = json_array_extend(docs, page);
    json_decref(page);
    return rc ? -1 : 0;
}
