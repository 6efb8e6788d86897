/* json_intern.c: hash consing of jansson values (json_intern.h). */
#include "base/json_intern.h"

#include "base/hash.h"

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

/* The hash of a value whose children are shared already: containers hash their children's
 * addresses, so equal children must be the same value. */
static uint64_t hash_of(const json_t *v)
{
    uint64_t h = (uint64_t)json_typeof(v) + 1;
    const char *key;
    json_t *child;
    size_t i;
    switch (json_typeof(v)) {
    case JSON_STRING:
        return mix(h, hash_fnv1a(json_string_value(v), json_string_length(v)));
    case JSON_INTEGER:
        return mix(h, (uint64_t)json_integer_value(v));
    case JSON_REAL: {
        double d = json_real_value(v);
        uint64_t bits;
        memcpy(&bits, &d, sizeof(bits));
        return mix(h, bits);
    }
    case JSON_OBJECT:
        json_object_foreach ((json_t *)v, key, child)
            h = mix(mix(h, hash_fnv1a(key, strlen(key))), (uint64_t)(uintptr_t)child);
        return h;
    case JSON_ARRAY:
        json_array_foreach (v, i, child)
            h = mix(h, (uint64_t)(uintptr_t)child);
        return h;
    default:
        return h;
    }
}

static int same(const json_t *a, const json_t *b)
{
    if (json_typeof(a) != json_typeof(b))
        return 0;
    switch (json_typeof(a)) {
    case JSON_STRING:
        return json_string_length(a) == json_string_length(b) &&
               memcmp(json_string_value(a), json_string_value(b), json_string_length(a)) == 0;
    case JSON_INTEGER:
        return json_integer_value(a) == json_integer_value(b);
    case JSON_REAL: {
        double x = json_real_value(a), y = json_real_value(b);
        return memcmp(&x, &y, sizeof(x)) == 0;
    }
    case JSON_OBJECT: {
        void *i = json_object_iter((json_t *)a), *j = json_object_iter((json_t *)b);
        if (json_object_size(a) != json_object_size(b))
            return 0;
        for (; i && j; i = json_object_iter_next((json_t *)a, i),
                       j = json_object_iter_next((json_t *)b, j))
            if (json_object_iter_value(i) != json_object_iter_value(j) ||
                strcmp(json_object_iter_key(i), json_object_iter_key(j)) != 0)
                return 0;
        return !i && !j;
    }
    case JSON_ARRAY:
        if (json_array_size(a) != json_array_size(b))
            return 0;
        for (size_t k = 0; k < json_array_size(a); k++)
            if (json_array_get(a, k) != json_array_get(b, k))
                return 0;
        return 1;
    default:
        return a == b;
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

json_t *json_intern(struct json_intern *t, json_t *value)
{
    uint64_t h;
    size_t k;
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
    for (k = h & (t->cap - 1); t->slots[k].value; k = (k + 1) & (t->cap - 1)) {
        if (t->slots[k].hash == h && same(t->slots[k].value, value)) {
            json_t *shared = json_incref(t->slots[k].value);
            json_decref(value);
            return shared;
        }
    }
    if (2 * (t->count + 1) > t->cap && grow(t))
        return value; /* no room: correct, only not shared */
    for (k = h & (t->cap - 1); t->slots[k].value; k = (k + 1) & (t->cap - 1))
        ;
    t->slots[k].hash = h;
    t->slots[k].value = json_incref(value);
    t->count++;
    return value;
}

size_t json_intern_count(const struct json_intern *t)
{
    return t ? t->count : 0;
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
