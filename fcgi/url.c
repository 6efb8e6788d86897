/* url.c: percent-decoding of path segments and query strings (url.h). */
#include "url.h"

#include "base/utf8.h"

#include <string.h>

static int hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static char *decode(struct arena *arena, const char *s, size_t n, int plus_is_space)
{
    char *out = arena_alloc(arena, n + 1), *o = out;
    if (!out)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '%') {
            int hi, lo;
            if (i + 2 >= n)
                return NULL;
            hi = hex_value(s[i + 1]);
            lo = hex_value(s[i + 2]);
            if (hi < 0 || lo < 0 || (hi == 0 && lo == 0))
                return NULL;
            *o++ = (char)(hi * 16 + lo);
            i += 2;
        } else {
            *o++ = plus_is_space && s[i] == '+' ? ' ' : s[i];
        }
    }
    *o = '\0';
    return out;
}

char *url_decode(struct arena *arena, const char *s, size_t n)
{
    return decode(arena, s, n, 0);
}

/* The next name=value pair of a query at *p (advanced past it): the raw name and value (the
 * value is NULL for a pair without '='). 0 at the end. */
static int next_pair(const char **p, const char **name, size_t *name_len, const char **value,
                     size_t *value_len)
{
    const char *end, *eq;
    size_t len;
    if (!*p || !**p)
        return 0;
    end = strchr(*p, '&');
    len = end ? (size_t)(end - *p) : strlen(*p);
    eq = memchr(*p, '=', len);
    *name = *p;
    *name_len = eq ? (size_t)(eq - *p) : len;
    *value = eq ? eq + 1 : NULL;
    *value_len = eq ? len - *name_len - 1 : 0;
    *p = end ? end + 1 : NULL;
    return 1;
}

size_t url_query_values(struct arena *arena, const char *query, const char *name, const char ***out)
{
    size_t name_len = strlen(name), count = 0, cap = 0, raw_len, raw_value_len;
    const char **values = NULL, *p = query, *raw, *raw_value;
    while (next_pair(&p, &raw, &raw_len, &raw_value, &raw_value_len)) {
        char *key = decode(arena, raw, raw_len, 1);
        if (key && strlen(key) == name_len && memcmp(key, name, name_len) == 0) {
            char *value = raw_value ? decode(arena, raw_value, raw_value_len, 1) : "";
            if (value && count == cap) {
                const char **grown = arena_alloc(arena, (cap ? cap * 2 : 4) * sizeof(*grown));
                if (!grown)
                    break;
                if (count)
                    memcpy(grown, values, count * sizeof(*grown));
                values = grown;
                cap = cap ? cap * 2 : 4;
            }
            if (value)
                values[count++] = value;
        }
    }
    *out = values;
    return count;
}

int url_query_check(struct arena *arena, const char *query, struct purser_error *err)
{
    const char *p = query, *raw, *raw_value;
    size_t raw_len, raw_value_len;
    while (next_pair(&p, &raw, &raw_len, &raw_value, &raw_value_len)) {
        char *key = decode(arena, raw, raw_len, 1);
        char *value = raw_value ? decode(arena, raw_value, raw_value_len, 1) : "";
        if (!key || !utf8_valid(key, strlen(key)))
            return purser_error_set(err, PURSER_EINVAL,
                                    "a query parameter name is not UTF-8 text or has a "
                                    "malformed %%-escape");
        if (!value)
            return purser_error_set(err, PURSER_EINVAL,
                                    "query parameter '%s' has a malformed %%-escape", key);
        if (!utf8_valid(value, strlen(value)))
            return purser_error_set(err, PURSER_EINVAL, "query parameter '%s' is not UTF-8 text",
                                    key);
    }
    return 0;
}

/* Whether name is one of the space-separated words of list. */
static int word_listed(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; p && *p;) {
        const char *end = strchr(p, ' ');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == n && memcmp(p, name, n) == 0)
            return 1;
        p = end ? end + 1 : NULL;
    }
    return 0;
}

const char *url_query_unknown(struct arena *arena, const char *query, const char *accepted)
{
    const char *p = query, *raw, *raw_value;
    size_t raw_len, raw_value_len;
    while (next_pair(&p, &raw, &raw_len, &raw_value, &raw_value_len)) {
        char *key = decode(arena, raw, raw_len, 1);
        if (key && *key && !word_listed(accepted, key))
            return key;
    }
    return NULL;
}
