/* json_intern.c: hash consing of jansson values (json_intern.h). */
#include "base/json_intern.h"

#include "base/hash.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct entry {
    uint64_t hash;
    json_t *value; /* NULL: empty */
};

struct json_intern {
    struct entry *slots;
    size_t cap; /* a power of two */
    size_t count;
    size_t handed_over; /* texts json_intern_loadb left to jansson */
};

struct json_intern *json_intern_new(void)
{
    struct json_intern *t = calloc(1, sizeof(*t));
    if (t && !(t->slots = calloc(t->cap = 1024, sizeof(*t->slots)))) {
        free(t);
        return NULL;
    }
    return t;
}

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdULL;
}

/* The hashes of each kind, for a value (hash_of) and for what the decoder has read before it
 * makes a value (which must agree): scalars by their content, containers by their keys and
 * their children's addresses, so equal children must be the same value already. */
static uint64_t hash_string(const char *s, size_t n)
{
    return mix((uint64_t)JSON_STRING + 1, hash_fnv1a(s, n));
}

static uint64_t hash_integer(json_int_t i)
{
    return mix((uint64_t)JSON_INTEGER + 1, (uint64_t)i);
}

static uint64_t hash_real(double x)
{
    uint64_t bits;
    memcpy(&bits, &x, sizeof(bits));
    return mix((uint64_t)JSON_REAL + 1, bits);
}

static uint64_t hash_container_start(int object)
{
    return (uint64_t)(object ? JSON_OBJECT : JSON_ARRAY) + 1;
}

/* h with one child more (key NULL in an array). */
static uint64_t hash_child(uint64_t h, const char *key, size_t key_len, const json_t *child)
{
    if (key)
        h = mix(h, hash_fnv1a(key, key_len));
    return mix(h, (uint64_t)(uintptr_t)child);
}

static uint64_t hash_of(const json_t *v)
{
    uint64_t h;
    json_t *child;
    size_t i;
    switch (json_typeof(v)) {
    case JSON_STRING: return hash_string(json_string_value(v), json_string_length(v));
    case JSON_INTEGER: return hash_integer(json_integer_value(v));
    case JSON_REAL: return hash_real(json_real_value(v));
    case JSON_OBJECT:
        h = hash_container_start(1);
        for (void *it = json_object_iter((json_t *)v); it;
             it = json_object_iter_next((json_t *)v, it))
            h = hash_child(h, json_object_iter_key(it), json_object_iter_key_len(it),
                           json_object_iter_value(it));
        return h;
    case JSON_ARRAY:
        h = hash_container_start(0);
        json_array_foreach (v, i, child)
            h = hash_child(h, NULL, 0, child);
        return h;
    default: return (uint64_t)json_typeof(v) + 1;
    }
}

struct span { /* a string's bytes: in the text, or decoded into copy */
    const char *s;
    size_t n;
    char *copy;
};

static int eq_string(const json_t *have, const void *cand)
{
    const struct span *s = cand;
    return json_is_string(have) && json_string_length(have) == s->n &&
           memcmp(json_string_value(have), s->s, s->n) == 0;
}

static int eq_integer(const json_t *have, const void *cand)
{
    return json_is_integer(have) && json_integer_value(have) == *(const json_int_t *)cand;
}

static int eq_real(const json_t *have, const void *cand)
{
    double x = json_is_real(have) ? json_real_value(have) : 0;
    return json_is_real(have) && memcmp(&x, cand, sizeof(x)) == 0;
}

/* Two values equal as the table compares them (containers: the same children). */
static int same(const json_t *a, const json_t *b)
{
    switch (json_typeof(b)) {
    case JSON_STRING:
        return eq_string(a, &(struct span){json_string_value(b), json_string_length(b), NULL});
    case JSON_INTEGER: return eq_integer(a, &(json_int_t){json_integer_value(b)});
    case JSON_REAL: return eq_real(a, &(double){json_real_value(b)});
    case JSON_OBJECT: {
        void *i = json_object_iter((json_t *)a), *j = json_object_iter((json_t *)b);
        if (!json_is_object(a) || json_object_size(a) != json_object_size(b))
            return 0;
        for (; i && j;
             i = json_object_iter_next((json_t *)a, i), j = json_object_iter_next((json_t *)b, j))
            if (json_object_iter_value(i) != json_object_iter_value(j) ||
                json_object_iter_key_len(i) != json_object_iter_key_len(j) ||
                memcmp(json_object_iter_key(i), json_object_iter_key(j),
                       json_object_iter_key_len(i)) != 0)
                return 0;
        return !i && !j;
    }
    case JSON_ARRAY:
        if (!json_is_array(a) || json_array_size(a) != json_array_size(b))
            return 0;
        for (size_t k = 0; k < json_array_size(a); k++)
            if (json_array_get(a, k) != json_array_get(b, k))
                return 0;
        return 1;
    default: return a == b;
    }
}

static int grow(struct json_intern *t)
{
    size_t cap = t->cap * 2;
    struct entry *slots = calloc(cap, sizeof(*slots));
    if (!slots)
        return -1;
    for (size_t i = 0; i < t->cap; i++) {
        size_t k;
        if (!t->slots[i].value)
            continue;
        for (k = t->slots[i].hash & (cap - 1); slots[k].value; k = (k + 1) & (cap - 1))
            ;
        slots[k] = t->slots[i];
    }
    free(t->slots);
    t->slots = slots;
    t->cap = cap;
    return 0;
}

/* The shared value of hash h that eq finds equal to cand: a new reference, or NULL. */
static json_t *find(const struct json_intern *t, uint64_t h,
                    int (*eq)(const json_t *have, const void *cand), const void *cand)
{
    for (size_t k = h & (t->cap - 1); t->slots[k].value; k = (k + 1) & (t->cap - 1))
        if (t->slots[k].hash == h && eq(t->slots[k].value, cand))
            return json_incref(t->slots[k].value);
    return NULL;
}

/* Holds value (a reference of the table's own) under hash h; when the table cannot grow it
 * is left out, which costs only sharing. */
static void add(struct json_intern *t, uint64_t h, json_t *value)
{
    size_t k;
    if (2 * (t->count + 1) > t->cap && grow(t))
        return;
    for (k = h & (t->cap - 1); t->slots[k].value; k = (k + 1) & (t->cap - 1))
        ;
    t->slots[k].hash = h;
    t->slots[k].value = json_incref(value);
    t->count++;
}

static int eq_value(const json_t *have, const void *cand)
{
    return same(have, cand);
}

json_t *json_intern(struct json_intern *t, json_t *value)
{
    uint64_t h;
    json_t *shared;
    if (!value || json_is_true(value) || json_is_false(value) || json_is_null(value))
        return value; /* jansson's own singletons */
    if (json_is_object(value)) {
        void *it;
        for (it = json_object_iter(value); it; it = json_object_iter_next(value, it))
            json_object_iter_set_new(value, it,
                                     json_intern(t, json_incref(json_object_iter_value(it))));
    } else if (json_is_array(value)) {
        for (size_t i = 0; i < json_array_size(value); i++)
            json_array_set_new(value, i, json_intern(t, json_incref(json_array_get(value, i))));
    }
    h = hash_of(value);
    if ((shared = find(t, h, eq_value, value))) {
        json_decref(value);
        return shared;
    }
    add(t, h, value);
    return value;
}

/* ---- decoding JSON text straight into shared values ---- */

/* A child of a container being read: its key (objects), and a reference to its value. */
struct item {
    const char *key;
    size_t key_len;
    char *key_copy; /* the decoded key when it had escapes (key points into it) */
    json_t *value;
};

struct decoder {
    struct json_intern *t;
    const char *p, *end;
    int depth;
    struct item *items; /* the children of every container open, innermost last */
    size_t count, cap;
};

#define MAX_DEPTH 2048 /* jansson's */

static void skip_space(struct decoder *d)
{
    while (d->p < d->end && (*d->p == ' ' || *d->p == '\t' || *d->p == '\n' || *d->p == '\r'))
        d->p++;
}

static int hex4(const char *p, unsigned *out)
{
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= (unsigned)(c - 'A' + 10);
        else
            return -1;
    }
    *out = v;
    return 0;
}

static size_t put_utf8(char *o, unsigned c)
{
    if (c < 0x80) {
        o[0] = (char)c;
        return 1;
    }
    if (c < 0x800) {
        o[0] = (char)(0xC0 | (c >> 6));
        o[1] = (char)(0x80 | (c & 0x3F));
        return 2;
    }
    if (c < 0x10000) {
        o[0] = (char)(0xE0 | (c >> 12));
        o[1] = (char)(0x80 | ((c >> 6) & 0x3F));
        o[2] = (char)(0x80 | (c & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | (c >> 18));
    o[1] = (char)(0x80 | ((c >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((c >> 6) & 0x3F));
    o[3] = (char)(0x80 | (c & 0x3F));
    return 4;
}

/* Decodes the escapes of the n bytes at s into a new copy; -1 for any escape jansson refuses
 * (unknown, \u0000, a lone surrogate). */
static int unescape(const char *s, size_t n, struct span *out)
{
    char *o = malloc(n + 1), *start = o;
    const char *end = s + n;
    if (!o)
        return -1;
    while (s < end) {
        unsigned c, low;
        if (*s != '\\') {
            *o++ = *s++;
            continue;
        }
        if (++s == end)
            goto bad;
        switch (*s++) {
        case '"': *o++ = '"'; break;
        case '\\': *o++ = '\\'; break;
        case '/': *o++ = '/'; break;
        case 'b': *o++ = '\b'; break;
        case 'f': *o++ = '\f'; break;
        case 'n': *o++ = '\n'; break;
        case 'r': *o++ = '\r'; break;
        case 't': *o++ = '\t'; break;
        case 'u':
            if (end - s < 4 || hex4(s, &c) || c == 0)
                goto bad;
            s += 4;
            if (c >= 0xDC00 && c <= 0xDFFF)
                goto bad;
            if (c >= 0xD800 && c <= 0xDBFF) {
                if (end - s < 6 || s[0] != '\\' || s[1] != 'u' || hex4(s + 2, &low) ||
                    low < 0xDC00 || low > 0xDFFF)
                    goto bad;
                s += 6;
                c = 0x10000 + ((c - 0xD800) << 10) + (low - 0xDC00);
            }
            o += put_utf8(o, c);
            break;
        default: goto bad;
        }
    }
    out->s = out->copy = start;
    out->n = (size_t)(o - start);
    return 0;
bad:
    free(start);
    return -1;
}

/* The string at d->p (its opening quote): its bytes, unchecked as UTF-8 (jansson's
 * constructors check that). */
static int read_string(struct decoder *d, struct span *out)
{
    const char *start = ++d->p;
    int escaped = 0;
    out->copy = NULL;
    while (d->p < d->end && *d->p != '"') {
        unsigned char c = (unsigned char)*d->p;
        if (c < 0x20)
            return -1;
        if (c == '\\') {
            escaped = 1;
            if (++d->p == d->end)
                return -1;
        }
        d->p++;
    }
    if (d->p == d->end)
        return -1;
    d->p++;
    if (!escaped) {
        out->s = start;
        out->n = (size_t)(d->p - 1 - start);
        return 0;
    }
    return unescape(start, (size_t)(d->p - 1 - start), out);
}

static json_t *shared_string(struct json_intern *t, const struct span *s)
{
    uint64_t h = hash_string(s->s, s->n);
    json_t *v = find(t, h, eq_string, s);
    if (v || !(v = json_stringn(s->s, s->n))) /* (not UTF-8: NULL) */
        return v;
    add(t, h, v);
    return v;
}

static json_t *read_number(struct decoder *d)
{
    const char *start = d->p;
    char text[64];
    int real = 0;
    uint64_t h;
    json_t *v;
    if (d->p < d->end && *d->p == '-')
        d->p++;
    if (d->p < d->end && *d->p == '0')
        d->p++;
    else if (d->p < d->end && *d->p >= '1' && *d->p <= '9')
        while (d->p < d->end && *d->p >= '0' && *d->p <= '9')
            d->p++;
    else
        return NULL;
    if (d->p < d->end && *d->p == '.') {
        real = 1;
        if (++d->p == d->end || *d->p < '0' || *d->p > '9')
            return NULL;
        while (d->p < d->end && *d->p >= '0' && *d->p <= '9')
            d->p++;
    }
    if (d->p < d->end && (*d->p == 'e' || *d->p == 'E')) {
        real = 1;
        if (++d->p < d->end && (*d->p == '+' || *d->p == '-'))
            d->p++;
        if (d->p == d->end || *d->p < '0' || *d->p > '9')
            return NULL;
        while (d->p < d->end && *d->p >= '0' && *d->p <= '9')
            d->p++;
    }
    if ((size_t)(d->p - start) >= sizeof(text))
        return NULL; /* (jansson's then) */
    memcpy(text, start, (size_t)(d->p - start));
    text[d->p - start] = '\0';
    errno = 0;
    if (!real) {
        json_int_t i = strtoll(text, NULL, 10);
        if (errno == ERANGE)
            return NULL; /* too big: jansson refuses it */
        h = hash_integer(i);
        if (!(v = find(d->t, h, eq_integer, &i)) && (v = json_integer(i)))
            add(d->t, h, v);
    } else {
        double x = strtod(text, NULL);
        if (errno == ERANGE && (x == HUGE_VAL || x == -HUGE_VAL))
            return NULL; /* overflow: jansson refuses it */
        h = hash_real(x);
        if (!(v = find(d->t, h, eq_real, &x)) && (v = json_real(x)))
            add(d->t, h, v);
    }
    return v;
}

struct slice {
    const struct item *items;
    size_t n;
};

static int eq_object(const json_t *have, const void *cand)
{
    const struct slice *c = cand;
    size_t k = 0;
    void *it;
    if (!json_is_object(have) || json_object_size(have) != c->n)
        return 0;
    for (it = json_object_iter((json_t *)have); it;
         it = json_object_iter_next((json_t *)have, it), k++)
        if (json_object_iter_value(it) != c->items[k].value ||
            json_object_iter_key_len(it) != c->items[k].key_len ||
            memcmp(json_object_iter_key(it), c->items[k].key, c->items[k].key_len) != 0)
            return 0;
    return 1;
}

static int eq_array(const json_t *have, const void *cand)
{
    const struct slice *c = cand;
    if (!json_is_array(have) || json_array_size(have) != c->n)
        return 0;
    for (size_t k = 0; k < c->n; k++)
        if (json_array_get(have, k) != c->items[k].value)
            return 0;
    return 1;
}

static int push(struct decoder *d, struct item item)
{
    if (d->count == d->cap) {
        size_t cap = d->cap ? 2 * d->cap : 64;
        struct item *items = realloc(d->items, cap * sizeof(*items));
        if (!items)
            return -1;
        d->items = items;
        d->cap = cap;
    }
    d->items[d->count++] = item;
    return 0;
}

/* Drops the children from base on. */
static void pop_to(struct decoder *d, size_t base)
{
    while (d->count > base) {
        struct item *i = &d->items[--d->count];
        json_decref(i->value);
        free(i->key_copy);
    }
}

static json_t *read_value(struct decoder *d);

/* The object or array whose children are d->items[base..]: the shared one, or made now. */
static json_t *close_container(struct decoder *d, size_t base, int object)
{
    struct slice c = {d->items ? d->items + base : NULL, d->count - base}; /* (none yet: NULL) */
    uint64_t h = hash_container_start(object);
    json_t *v;
    for (size_t k = 0; k < c.n; k++) /* (an array's items have no key) */
        h = hash_child(h, c.items[k].key, c.items[k].key_len, c.items[k].value);
    if ((v = find(d->t, h, object ? eq_object : eq_array, &c))) {
        pop_to(d, base);
        return v;
    }
    if (!(v = object ? json_object() : json_array()))
        return NULL;
    for (size_t k = 0; k < c.n; k++) {
        json_t *child = json_incref(c.items[k].value);
        if (object ? json_object_setn_new(v, c.items[k].key, c.items[k].key_len, child)
                   : json_array_append_new(v, child)) {
            json_decref(v); /* (a key that is not UTF-8) */
            return NULL;
        }
    }
    /* a key twice keeps its first place and its last value, as jansson does: such an object
     * is not what its children's hash says, and is left unshared */
    if (!object || json_object_size(v) == c.n)
        add(d->t, h, v);
    pop_to(d, base);
    return v;
}

static json_t *read_container(struct decoder *d, int object)
{
    size_t base = d->count;
    char close = object ? '}' : ']';
    if (++d->depth > MAX_DEPTH)
        return NULL;
    d->p++;
    skip_space(d);
    if (d->p < d->end && *d->p == close) {
        d->p++;
    } else {
        for (;;) {
            struct item item = {NULL, 0, NULL, NULL};
            if (object) {
                struct span key;
                if (d->p == d->end || *d->p != '"' || read_string(d, &key))
                    return NULL;
                item.key = key.s;
                item.key_len = key.n;
                item.key_copy = key.copy;
                skip_space(d);
                if (d->p == d->end || *d->p != ':') {
                    free(key.copy);
                    return NULL;
                }
                d->p++;
            }
            if (!(item.value = read_value(d)) || push(d, item)) {
                json_decref(item.value);
                free(item.key_copy);
                return NULL;
            }
            skip_space(d);
            if (d->p < d->end && *d->p == ',') {
                d->p++;
                skip_space(d);
                continue;
            }
            if (d->p < d->end && *d->p == close) {
                d->p++;
                break;
            }
            return NULL;
        }
    }
    d->depth--;
    return close_container(d, base, object);
}

static json_t *literal(struct decoder *d, const char *word, json_t *value)
{
    size_t n = strlen(word);
    if ((size_t)(d->end - d->p) < n || memcmp(d->p, word, n) != 0)
        return NULL;
    d->p += n;
    return value;
}

static json_t *read_value(struct decoder *d)
{
    skip_space(d);
    if (d->p == d->end)
        return NULL;
    switch (*d->p) {
    case '{': return read_container(d, 1);
    case '[': return read_container(d, 0);
    case '"': {
        struct span s;
        json_t *v;
        if (read_string(d, &s))
            return NULL;
        v = shared_string(d->t, &s);
        free(s.copy);
        return v;
    }
    case 't': return literal(d, "true", json_true());
    case 'f': return literal(d, "false", json_false());
    case 'n': return literal(d, "null", json_null());
    default: return read_number(d);
    }
}

json_t *json_intern_loadb(struct json_intern *t, const char *text, size_t len)
{
    struct decoder d = {t, text, text + len, 0, NULL, 0, 0};
    json_t *v = read_value(&d);
    json_error_t jerr;
    skip_space(&d);
    if (v && d.p != d.end) {
        json_decref(v);
        v = NULL;
    }
    pop_to(&d, 0); /* (what a failure left open) */
    free(d.items);
    if (v)
        return v;
    /* what this reader does not take, jansson decides: its value, or its refusal */
    t->handed_over++;
    return json_intern(t, json_loadb(text, len, JSON_DECODE_ANY, &jerr));
}

json_t *json_intern_stringn(struct json_intern *t, const char *s, size_t len)
{
    struct span span = {s, len, NULL};
    return shared_string(t, &span);
}

size_t json_intern_count(const struct json_intern *t)
{
    return t ? t->count : 0;
}

size_t json_intern_handed_over(const struct json_intern *t)
{
    return t ? t->handed_over : 0;
}

void json_intern_free(struct json_intern *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->cap; i++)
        json_decref(t->slots[i].value);
    free(t->slots);
    free(t);
}
