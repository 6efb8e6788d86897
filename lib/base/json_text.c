/* json_text.c: jansson values as JSON text, written straight into a buffer. */
#include "base/json_text.h"

#include "base/utf8.h"

#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 2048 /* jansson's parser refuses deeper input; this also stops a cycle */

/* The flags written here; any other goes to jansson. */
#define OWN_FLAGS (JSON_COMPACT | JSON_SORT_KEYS | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY | 0xF800)

/* Bytes onto the end, with the buffer's NUL written once at the end (json_text_append). */
static inline int put(struct buf *out, const char *s, size_t n)
{
    if ((out->limit || out->cap - out->len <= n) && buf_grow(out, n))
        return -1;
    memcpy(out->data + out->len, s, n);
    out->len += n;
    return 0;
}

/* "\uXXXX" as jansson writes it: upper-case hex. */
static int put_u(struct buf *out, unsigned code)
{
    static const char hex[] = "0123456789ABCDEF";
    char seq[6] = {
        '\\',          'u', hex[(code >> 12) & 15], hex[(code >> 8) & 15], hex[(code >> 4) & 15],
        hex[code & 15]};
    return put(out, seq, sizeof(seq));
}

static int put_string(struct buf *out, const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s, *end = p + n, *run;
    if (put(out, "\"", 1))
        return -1;
    while (p < end) {
        run = p;
        while (p < end && *p >= 0x20 && *p != '"' && *p != '\\' && *p < 0x80)
            p++;
        while (p < end && *p >= 0x80) { /* jansson refuses text that is not UTF-8 */
            int len = utf8_sequence(p, (size_t)(end - p));
            if (!len)
                return -1;
            p += len;
            while (p < end && *p >= 0x20 && *p != '"' && *p != '\\' && *p < 0x80)
                p++;
        }
        if (p > run && put(out, (const char *)run, (size_t)(p - run)))
            return -1;
        if (p < end && (*p < 0x20 || *p == '"' || *p == '\\')) {
            const char *esc = NULL;
            switch (*p) {
            case '"': esc = "\\\""; break;
            case '\\': esc = "\\\\"; break;
            case '\b': esc = "\\b"; break;
            case '\f': esc = "\\f"; break;
            case '\n': esc = "\\n"; break;
            case '\r': esc = "\\r"; break;
            case '\t': esc = "\\t"; break;
            default: break;
            }
            if (esc ? put(out, esc, 2) : put_u(out, *p))
                return -1;
            p++;
        }
    }
    return put(out, "\"", 1);
}

struct key {
    const char *text;
    size_t len;
    json_t *value;
};

/* jansson's order of sorted keys: bytes, then length. */
static int key_order(const void *a, const void *b)
{
    const struct key *x = a, *y = b;
    int c = memcmp(x->text, y->text, x->len < y->len ? x->len : y->len);
    return c ? c : (x->len > y->len) - (x->len < y->len);
}

static int put_value(struct buf *out, const json_t *v, size_t flags, int depth);

static int put_member(struct buf *out, const char *key, size_t len, const json_t *value,
                      size_t flags, int depth, int first)
{
    return (!first && put(out, ",", 1)) || put_string(out, key, len) || put(out, ":", 1) ||
                   put_value(out, value, flags, depth + 1)
               ? -1
               : 0;
}

static int put_object(struct buf *out, const json_t *v, size_t flags, int depth)
{
    size_t n = json_object_size(v), i = 0;
    void *it = json_object_iter((json_t *)v);
    int rc = 0;
    if (put(out, "{", 1))
        return -1;
    if (!(flags & JSON_SORT_KEYS) || n < 2) {
        for (; it && !rc; it = json_object_iter_next((json_t *)v, it), i++)
            rc = put_member(out, json_object_iter_key(it), json_object_iter_key_len(it),
                            json_object_iter_value(it), flags, depth, i == 0);
    } else {
        struct key small[16], *keys = n <= 16 ? small : malloc(n * sizeof(*keys));
        if (!keys)
            return -1;
        for (; it && i < n; it = json_object_iter_next((json_t *)v, it), i++)
            keys[i] = (struct key){json_object_iter_key(it), json_object_iter_key_len(it),
                                   json_object_iter_value(it)};
        qsort(keys, i, sizeof(*keys), key_order);
        for (size_t k = 0; k < i && !rc; k++)
            rc = put_member(out, keys[k].text, keys[k].len, keys[k].value, flags, depth, k == 0);
        if (keys != small)
            free(keys);
    }
    if (!rc)
        rc = put(out, "}", 1);
    return rc ? -1 : 0;
}

static int put_value(struct buf *out, const json_t *v, size_t flags, int depth)
{
    char text[64];
    if (!v || depth > MAX_DEPTH)
        return -1;
    switch (json_typeof(v)) {
    case JSON_NULL: return put(out, "null", 4);
    case JSON_TRUE: return put(out, "true", 4);
    case JSON_FALSE: return put(out, "false", 5);
    case JSON_INTEGER: { /* not formatted: this runs for every number of every answer */
        json_int_t n = json_integer_value(v);
        const char *digits =
            decimal_text(text, n < 0 ? 0ULL - (unsigned long long)n : (unsigned long long)n);
        return (n < 0 && put(out, "-", 1)) || put(out, digits, strlen(digits)) ? -1 : 0;
    }
    case JSON_REAL: { /* rare: jansson's own digits, whichever way its build makes them */
        size_t n = json_dumpb(v, text, sizeof(text), JSON_ENCODE_ANY | (flags & 0xF800));
        return n && n < sizeof(text) ? put(out, text, n) : -1;
    }
    case JSON_STRING: return put_string(out, json_string_value(v), json_string_length(v));
    case JSON_ARRAY: {
        size_t n = json_array_size(v);
        if (put(out, "[", 1))
            return -1;
        for (size_t i = 0; i < n; i++)
            if ((i && put(out, ",", 1)) || put_value(out, json_array_get(v, i), flags, depth + 1))
                return -1;
        return put(out, "]", 1);
    }
    case JSON_OBJECT: return put_object(out, v, flags, depth);
    }
    return -1;
}

static int through_jansson(const char *data, size_t n, void *out)
{
    return buf_add(out, data, n) ? -1 : 0;
}

int json_text_append(struct buf *out, const json_t *value, size_t flags)
{
    if (!value || (!(flags & JSON_ENCODE_ANY) && !json_is_object(value) && !json_is_array(value)))
        return -1;
    if ((flags & ~(size_t)OWN_FLAGS) || !(flags & JSON_COMPACT))
        return json_dump_callback(value, through_jansson, out, flags) ? -1 : 0;
    if (buf_grow(out, 0) || put_value(out, value, flags, 0)) {
        if (out->data)
            out->data[out->len] = '\0';
        return -1;
    }
    out->data[out->len] = '\0';
    return 0;
}

char *json_text(const json_t *value, size_t flags)
{
    struct buf out = BUF_INIT;
    if (buf_grow(&out, 4096) || json_text_append(&out, value, flags)) {
        buf_release(&out);
        return NULL;
    }
    return buf_detach(&out, NULL);
}
