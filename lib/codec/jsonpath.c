/* jsonpath.c: compiling Deckhand's JSONPath subset, and get, set and delete with it. */
#include "codec/jsonpath.h"
#include "base/hash.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct step {
    char *key; /* NULL for an index step */
    size_t index;
};

struct jsonpath {
    char *text;
    size_t count;
    struct step steps[];
};

void jsonpath_free(struct jsonpath *path)
{
    if (!path)
        return;
    for (size_t i = 0; i < path->count; i++)
        free(path->steps[i].key);
    free(path->text);
    free(path);
}

static int syntax(struct purser_error *err, const char *text, const char *at, const char *what)
{
    return purser_error_set(err, PURSER_EINVAL, "path '%s': %s at character %d", text, what,
                            (int)(at - text) + 1);
}

/* A quoted key starting at *p (the quote): the key, *p past the closing quote. */
static char *quoted_key(const char **p)
{
    char quote = **p;
    const char *start = *p + 1, *end = strchr(start, quote);
    char *key;
    if (!end || end == start)
        return NULL;
    key = strndup(start, (size_t)(end - start));
    *p = end + 1;
    return key;
}

/* Parses one step at *p into s; returns NULL on success, else what is wrong. */
static const char *parse_step(const char **p, struct step *s)
{
    const char *c = *p;
    memset(s, 0, sizeof(*s));
    if (*c == '.') {
        c++;
        if (*c == '\'' || *c == '"') {
            if (!(s->key = quoted_key(&c)))
                return "an unterminated or empty quoted key";
        } else {
            size_t n = strcspn(c, ".[");
            if (n == 0)
                return "an empty key";
            s->key = strndup(c, n);
            c += n;
        }
    } else if (*c == '[') {
        c++;
        if (*c == '\'' || *c == '"') {
            if (!(s->key = quoted_key(&c)))
                return "an unterminated or empty quoted key";
        } else {
            char *end;
            unsigned long long n;
            if (*c < '0' || *c > '9')
                return "a list index that is not a number";
            n = strtoull(c, &end, 10);
            if (n > 1000000)
                return "a list index over 1000000";
            s->index = (size_t)n;
            c = end;
        }
        if (*c++ != ']')
            return "a missing ']'";
    } else {
        return "a step that starts with neither '.' nor '['";
    }
    *p = c;
    return NULL;
}

int jsonpath_compile(struct jsonpath **out, const char *text, struct purser_error *err)
{
    const char *p = text;
    size_t cap = 1;
    struct jsonpath *path;

    *out = NULL;
    for (const char *c = text; *c; c++)
        cap += *c == '.' || *c == '[';
    if (!(path = calloc(1, sizeof(*path) + cap * sizeof(struct step))) ||
        !(path->text = strdup(text))) {
        free(path);
        return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    }
    if (*p == '$')
        p++;
    if (strncmp(p, ".data", 5) == 0 && (p[5] == '\0' || p[5] == '.' || p[5] == '['))
        p += 5;
    if (strcmp(p, ".") == 0)
        p++;
    while (*p) {
        const char *at = p, *what = path->count < cap ? parse_step(&p, &path->steps[path->count])
                                                      : "too many steps";
        if (what) {
            int rc = syntax(err, text, at, what);
            if (path->count <
                cap) /* a step that failed after its key was read ("['k'" without ']') */
                free(path->steps[path->count].key);
            jsonpath_free(path);
            return rc;
        }
        path->count++;
    }
    *out = path;
    return 0;
}

int jsonpath_is_root(const struct jsonpath *path)
{
    return path->count == 0;
}

const char *jsonpath_text(const struct jsonpath *path)
{
    return path->text;
}

size_t jsonpath_length(const struct jsonpath *path)
{
    return path->count;
}

const char *jsonpath_step(const struct jsonpath *path, size_t i, size_t *index)
{
    *index = path->steps[i].index;
    return path->steps[i].key;
}

static json_t *child(json_t *container, const struct step *s)
{
    if (s->key)
        return json_is_object(container) ? json_object_get(container, s->key) : NULL;
    return json_is_array(container) ? json_array_get(container, s->index) : NULL;
}

json_t *jsonpath_get(const struct jsonpath *path, json_t *root)
{
    json_t *cur = root;
    for (size_t i = 0; cur && i < path->count; i++)
        cur = child(cur, &path->steps[i]);
    return cur;
}

/* Puts value (consumed) into container at step s, padding a list with {} up to the index. */
static int put(json_t *container, const struct step *s, json_t *value)
{
    if (s->key)
        return json_object_set_new(container, s->key, value);
    while (json_array_size(container) < s->index)
        if (json_array_append_new(container, json_object()))
            break;
    if (json_array_size(container) == s->index)
        return json_array_append_new(container, value);
    return json_array_set_new(container, s->index, value);
}

static int fits(const json_t *container, const struct step *s)
{
    return s->key ? json_is_object(container) : json_is_array(container);
}

int jsonpath_set(const struct jsonpath *path, json_t **root, json_t *value,
                 struct purser_error *err)
{
    json_t *cur;
    if (!value)
        return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    if (path->count == 0) {
        json_decref(*root);
        *root = value;
        return 0;
    }
    if (!fits(*root, &path->steps[0])) {
        json_decref(*root);
        *root = path->steps[0].key ? json_object() : json_array();
    }
    cur = *root;
    for (size_t i = 0; i + 1 < path->count; i++) {
        json_t *next = child(cur, &path->steps[i]);
        if (!next || !fits(next, &path->steps[i + 1])) {
            next = path->steps[i + 1].key ? json_object() : json_array();
            if (put(cur, &path->steps[i], next)) {
                json_decref(value);
                return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
            }
        }
        cur = next;
    }
    if (put(cur, &path->steps[path->count - 1], value))
        return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    return 0;
}

static int is_container(const json_t *v)
{
    return json_is_object(v) || json_is_array(v);
}

int jsonpath_unshare(const struct jsonpath *path, json_t **root, int whole)
{
    size_t depth = whole ? path->count : path->count ? path->count - 1 : 0;
    json_t *cur;
    if ((!path->count && !whole) || !is_container(*root))
        return 0;
    if ((*root)->refcount > 1) {
        json_t *own = json_copy(*root);
        if (!own)
            return -1;
        json_decref(*root);
        *root = own;
    }
    cur = *root;
    for (size_t i = 0; i < depth; i++) {
        json_t *next = child(cur, &path->steps[i]);
        if (!is_container(next))
            return 0;
        if (next->refcount > 1) {
            json_t *own = json_copy(next);
            if (!own || put(cur, &path->steps[i], own))
                return -1;
            next = own;
        }
        cur = next;
    }
    return 0;
}

int jsonpath_delete(const struct jsonpath *path, json_t **root, struct purser_error *err)
{
    json_t *parent = *root;
    const struct step *last;
    if (path->count == 0) {
        json_decref(*root);
        *root = json_object();
        return 0;
    }
    for (size_t i = 0; parent && i + 1 < path->count; i++)
        parent = child(parent, &path->steps[i]);
    last = &path->steps[path->count - 1];
    if (!parent || !child(parent, last))
        return purser_error_set(err, PURSER_ENOTFOUND, "nothing at path '%s'", path->text);
    if (last->key)
        json_object_del(parent, last->key);
    else
        json_array_remove(parent, last->index);
    return 0;
}

/* ---- the cache: a chained hash table of compiled paths ---- */

struct entry {
    struct entry *next;
    struct jsonpath *path;
};

struct jsonpath_cache {
    size_t size, count;
    struct entry **buckets;
};

struct jsonpath_cache *jsonpath_cache_new(void)
{
    struct jsonpath_cache *cache = calloc(1, sizeof(*cache));
    if (cache && !(cache->buckets = calloc(cache->size = 64, sizeof(*cache->buckets)))) {
        free(cache);
        cache = NULL;
    }
    return cache;
}

void jsonpath_cache_free(struct jsonpath_cache *cache)
{
    if (!cache)
        return;
    for (size_t i = 0; i < cache->size; i++)
        for (struct entry *e = cache->buckets[i], *next; e; e = next) {
            next = e->next;
            jsonpath_free(e->path);
            free(e);
        }
    free(cache->buckets);
    free(cache);
}

static void grow(struct jsonpath_cache *cache)
{
    size_t size = cache->size * 2;
    struct entry **buckets = calloc(size, sizeof(*buckets));
    if (!buckets)
        return; /* stays correct, only slower */
    for (size_t i = 0; i < cache->size; i++)
        for (struct entry *e = cache->buckets[i], *next; e; e = next) {
            size_t slot = hash_fnv1a(e->path->text, strlen(e->path->text)) % size;
            next = e->next;
            e->next = buckets[slot];
            buckets[slot] = e;
        }
    free(cache->buckets);
    cache->buckets = buckets;
    cache->size = size;
}

const struct jsonpath *jsonpath_cached(struct jsonpath_cache *cache, const char *text,
                                       struct purser_error *err)
{
    size_t slot = hash_fnv1a(text, strlen(text)) % cache->size;
    struct entry *e;
    for (e = cache->buckets[slot]; e; e = e->next)
        if (strcmp(e->path->text, text) == 0)
            return e->path;
    if (!(e = calloc(1, sizeof(*e)))) {
        purser_error_set(err, PURSER_EINTERNAL, "out of memory");
        return NULL;
    }
    if (jsonpath_compile(&e->path, text, err)) {
        free(e);
        return NULL;
    }
    e->next = cache->buckets[slot];
    cache->buckets[slot] = e;
    if (++cache->count > cache->size)
        grow(cache);
    return e->path;
}
