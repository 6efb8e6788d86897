/* resource_values.c: a kind's indexed values, their version keys and the filters over them
 * (resource_values.h). */
#include "resource/resource_values.h"

#include "base/buf.h"
#include "base/json_text.h"
#include "base/utf8.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DIGITS "0123456789"
#define IDENTIFIER DIGITS "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz.-"

/* ---- version keys ---- */

int resource_version_key(const char *text, char key[RESOURCE_VERSION_KEY_SIZE])
{
    unsigned long long parts[4] = {0};
    const char *p = text + (text[0] == 'v' || text[0] == 'V'), *pre = NULL;
    size_t count = 0, pre_len = 0;
    int n;
    for (;;) {
        size_t digits = strspn(p, DIGITS);
        if (digits == 0 || digits > 10 || count == 4)
            return -1;
        parts[count++] = strtoull(p, NULL, 10);
        p += digits;
        if (*p != '.')
            break;
        p++;
    }
    if (*p == '-') {
        pre = ++p;
        if (!(pre_len = strspn(p, IDENTIFIER)))
            return -1;
        p += pre_len;
    }
    if (*p == '+') {
        size_t build = strspn(p + 1, IDENTIFIER);
        if (!build)
            return -1;
        p += 1 + build;
    }
    if (*p)
        return -1;
    /* a release sorts after its pre-releases: '~' is above every character a pre-release has */
    n = snprintf(key, RESOURCE_VERSION_KEY_SIZE, "%010llu.%010llu.%010llu.%010llu%s%.*s", parts[0],
                 parts[1], parts[2], parts[3], pre ? "-" : "~", (int)pre_len, pre ? pre : "");
    return n > 0 && n < RESOURCE_VERSION_KEY_SIZE ? 0 : -1;
}

/* ---- writing ---- */

struct flatten {
    json_t *rows; /* [[path, value, version key or null], ...] */
    struct buf path;
    size_t count;
    int oom;
};

static size_t chars(const char *s, size_t n)
{
    return utf8_count(s, n);
}

/* The text a scalar is indexed as (malloc'd), or NULL when it is not indexed (null). */
static char *leaf_text(const json_t *v)
{
    if (json_is_string(v))
        return strlen(json_string_value(v)) == json_string_length(v)
                   ? strdup(json_string_value(v))
                   : NULL; /* a NUL inside: not text a filter can name */
    if (json_is_number(v))
        return json_text(v, JSON_ENCODE_ANY | JSON_COMPACT);
    if (json_is_boolean(v))
        return strdup(json_is_true(v) ? "true" : "false");
    return NULL;
}

static void leaf_add(struct flatten *f, const json_t *v)
{
    char key[RESOURCE_VERSION_KEY_SIZE];
    char *text = f->path.len ? leaf_text(v) : NULL;
    json_t *row;
    if (!text || chars(text, strlen(text)) > RESOURCE_VALUES_TEXT_MAX) {
        free(text);
        return;
    }
    row = json_pack("[s, s, s?]", buf_cstr(&f->path), text,
                    resource_version_key(text, key) == 0 ? key : NULL);
    free(text);
    if (!row || json_array_append_new(f->rows, row))
        f->oom = 1;
    f->count++;
}

static void walk(struct flatten *f, const json_t *v, int depth)
{
    const char *key;
    const json_t *item;
    size_t i;
    if (f->oom || f->count >= RESOURCE_VALUES_MAX)
        return;
    if (!json_is_object(v) && !json_is_array(v)) {
        leaf_add(f, v);
        return;
    }
    if (depth >= RESOURCE_VALUES_DEPTH_MAX)
        return;
    if (json_is_array(v)) { /* items are found under the list's own path */
        json_array_foreach ((json_t *)v, i, item)
            walk(f, item, depth + 1);
        return;
    }
    json_object_foreach ((json_t *)v, key, item) {
        size_t mark = f->path.len;
        if ((mark && buf_addc(&f->path, '.')) || buf_adds(&f->path, key)) {
            f->oom = 1;
            return;
        }
        if (chars(f->path.data, f->path.len) <= RESOURCE_VALUES_TEXT_MAX)
            walk(f, item, depth + 1);
        f->path.len = mark;
        if (f->path.data) /* an empty key may have added nothing */
            f->path.data[mark] = '\0';
    }
}

int resource_values_write(struct store *store, long long id, long long org_id, const char *kind,
                          const char *name, const json_t *value, struct purser_error *err)
{
    struct flatten f = {.rows = json_array(), .path = BUF_INIT};
    struct store_value del = STORE_INT(id);
    char *rows = NULL;
    int rc;
    if (json_is_object(value))
        walk(&f, value, 0);
    if (!f.oom && json_array_size(f.rows))
        rows = json_text(f.rows, JSON_COMPACT);
    if (!f.rows || f.oom || (json_array_size(f.rows) && !rows))
        rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    else
        rc = store_exec(store, "DELETE FROM resource_values WHERE resource_id = ?", &del, 1, NULL,
                        NULL, err);
    if (!rc && rows) { /* one statement whatever their number: the rows as one JSON parameter */
        struct store_value p[] = {STORE_INT(id), STORE_INT(org_id), STORE_STR(kind),
                                  STORE_STR(name), STORE_STR(rows)};
        rc = store_exec(store,
                        "INSERT INTO resource_values (resource_id, org_id, kind, name, path, "
                        "value, version) SELECT ?, ?, ?, ?, j.path, j.value, j.version FROM "
                        "JSON_TABLE(?, '$[*]' COLUMNS (path VARCHAR(191) PATH '$[0]', value "
                        "VARCHAR(191) PATH '$[1]', version VARCHAR(128) PATH '$[2]')) j ON "
                        "DUPLICATE KEY UPDATE version = VALUES(version)",
                        p, 5, NULL, NULL, err);
    }
    free(rows);
    json_decref(f.rows);
    buf_release(&f.path);
    return rc;
}

/* ---- filters ---- */

/* Scalar subqueries, not EXISTS: MariaDB turns an EXISTS into a semi-join and may read every
 * value of the kind to answer one page (a materialization), where one lookup per resource of
 * the page, in PRIMARY (resource_id, path), is what a page should cost. */
static const char *const conditions[] = {
    [RESOURCE_VALUE_EQ] = " AND (SELECT 1 FROM resource_values v WHERE v.resource_id = r.id AND "
                          "v.path = ? AND v.value = ? LIMIT 1) IS NOT NULL",
    [RESOURCE_VALUE_NE] = " AND (SELECT 1 FROM resource_values v WHERE v.resource_id = r.id AND "
                          "v.path = ? AND v.value = ? LIMIT 1) IS NULL",
    [RESOURCE_VALUE_LT] = " AND (SELECT 1 FROM resource_values v WHERE v.resource_id = r.id AND "
                          "v.path = ? AND v.version < ? LIMIT 1) IS NOT NULL",
    [RESOURCE_VALUE_LE] = " AND (SELECT 1 FROM resource_values v WHERE v.resource_id = r.id AND "
                          "v.path = ? AND v.version <= ? LIMIT 1) IS NOT NULL",
    [RESOURCE_VALUE_GT] = " AND (SELECT 1 FROM resource_values v WHERE v.resource_id = r.id AND "
                          "v.path = ? AND v.version > ? LIMIT 1) IS NOT NULL",
    [RESOURCE_VALUE_GE] = " AND (SELECT 1 FROM resource_values v WHERE v.resource_id = r.id AND "
                          "v.path = ? AND v.version >= ? LIMIT 1) IS NOT NULL",
};

/* 1 when path is keys joined by '.', none empty, at most RESOURCE_VALUES_TEXT_MAX characters. */
static int path_valid(const char *path)
{
    size_t n = strlen(path);
    return n && path[0] != '.' && path[n - 1] != '.' && !strstr(path, "..") &&
           chars(path, n) <= RESOURCE_VALUES_TEXT_MAX;
}

int resource_values_condition(const char *filter, const char *path, enum resource_value_op op,
                              const char *value, char key[RESOURCE_VERSION_KEY_SIZE],
                              const char **sql, struct store_value params[2],
                              struct purser_error *err)
{
    if (!path_valid(path))
        return purser_error_set(err, PURSER_EINVAL,
                                "filter: '%.60s' names no path of values (keys joined by '.', "
                                "none empty, at most %d characters)",
                                filter, RESOURCE_VALUES_TEXT_MAX);
    if (chars(value, strlen(value)) > RESOURCE_VALUES_TEXT_MAX)
        return purser_error_set(err, PURSER_EINVAL,
                                "filter: '%.60s...': values over %d characters are not indexed",
                                filter, RESOURCE_VALUES_TEXT_MAX);
    if (op != RESOURCE_VALUE_EQ && op != RESOURCE_VALUE_NE && resource_version_key(value, key) != 0)
        return purser_error_set(err, PURSER_EINVAL,
                                "filter: '%.60s' is not a version: <, <=, > and >= compare "
                                "versions ([v]N[.N[.N[.N]]][-pre][+build], as 1.29 or v1.29.3)",
                                value);
    *sql = conditions[op];
    params[0] = (struct store_value)STORE_STR(path);
    params[1] = (struct store_value)STORE_STR(
        op == RESOURCE_VALUE_EQ || op == RESOURCE_VALUE_NE ? value : key);
    return 0;
}
