/* lru.c: a hash table (separate chaining) threaded on a doubly linked recency list. */
#include "base/lru.h"
#include "base/hash.h"

#include "base/err.h"
#include "base/metrics.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct entry {
    struct entry *chain; /* next in the bucket */
    struct entry *newer, *older;
    char *key, *value;
    size_t len;
    time_t expires;
};

struct lru {
    struct entry **buckets;
    size_t bucket_count, count, capacity;
    size_t bytes, max_bytes; /* of the values kept; their bound (0: none) */
    unsigned ttl;
    struct entry *newest, *oldest;
    struct lru_stats stats;
    int metric; /* the hit counter of base/metrics.h (the miss is the next one); -1: none */
};

struct lru *lru_new(size_t capacity, unsigned ttl)
{
    struct lru *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    c->capacity = capacity ? capacity : 1;
    c->bucket_count = 2 * c->capacity + 1;
    c->ttl = ttl;
    c->metric = -1;
    if (!(c->buckets = calloc(c->bucket_count, sizeof(*c->buckets)))) {
        free(c);
        return NULL;
    }
    return c;
}

static void unlink_recency(struct lru *c, struct entry *e)
{
    if (e->newer)
        e->newer->older = e->older;
    else
        c->newest = e->older;
    if (e->older)
        e->older->newer = e->newer;
    else
        c->oldest = e->newer;
    e->newer = e->older = NULL;
}

static void push_newest(struct lru *c, struct entry *e)
{
    e->older = c->newest;
    e->newer = NULL;
    if (c->newest)
        c->newest->newer = e;
    c->newest = e;
    if (!c->oldest)
        c->oldest = e;
}

static struct entry **slot_of(struct lru *c, const char *key)
{
    struct entry **slot = &c->buckets[hash_fnv1a(key, strlen(key)) % c->bucket_count];
    while (*slot && strcmp((*slot)->key, key) != 0)
        slot = &(*slot)->chain;
    return slot;
}

static void remove_entry(struct lru *c, struct entry **slot)
{
    struct entry *e = *slot;
    *slot = e->chain;
    unlink_recency(c, e);
    free(e->key);
    free(e->value);
    c->bytes -= e->len;
    free(e);
    c->count--;
}

void lru_clear(struct lru *c)
{
    while (c->oldest)
        remove_entry(c, slot_of(c, c->oldest->key));
}

void lru_free(struct lru *c)
{
    if (!c)
        return;
    lru_clear(c);
    free(c->buckets);
    free(c);
}

const char *lru_get(struct lru *c, const char *key, size_t *len, time_t now)
{
    struct entry **slot = slot_of(c, key);
    struct entry *e = *slot;
    if (!e || now >= e->expires) {
        c->stats.misses++;
        if (c->metric >= 0)
            metrics_add((enum metric)(c->metric + 1), 1);
        if (e) {
            c->stats.expirations++;
            remove_entry(c, slot);
        }
        return NULL;
    }
    c->stats.hits++;
    if (c->metric >= 0)
        metrics_add((enum metric)c->metric, 1);
    unlink_recency(c, e);
    push_newest(c, e);
    if (len)
        *len = e->len;
    return e->value;
}

static void evict_oldest(struct lru *c)
{
    remove_entry(c, slot_of(c, c->oldest->key));
    c->stats.evictions++;
}

void lru_set_max_bytes(struct lru *c, size_t max_bytes)
{
    c->max_bytes = max_bytes;
    while (max_bytes && c->bytes > max_bytes)
        evict_oldest(c);
}

size_t lru_bytes(const struct lru *c)
{
    return c->bytes;
}

int lru_put(struct lru *c, const char *key, const char *value, size_t len, time_t now)
{
    struct entry *e;
    struct entry **slot;
    if (c->max_bytes && len > c->max_bytes) { /* never kept; nor is what the key held */
        if (*(slot = slot_of(c, key)))
            remove_entry(c, slot);
        return 0;
    }
    e = calloc(1, sizeof(*e));
    if (!e || !(e->key = strdup(key)) || !(e->value = malloc(len + 1))) {
        if (e)
            free(e->key);
        free(e);
        return PURSER_EINTERNAL;
    }
    memcpy(e->value, value, len);
    e->value[len] = '\0';
    e->len = len;
    e->expires = now + (time_t)c->ttl;
    if (*(slot = slot_of(c, key)))
        remove_entry(c, slot);
    while (c->oldest &&
           (c->count >= c->capacity || (c->max_bytes && c->bytes + len > c->max_bytes)))
        evict_oldest(c);
    slot = slot_of(c, key);
    *slot = e;
    push_newest(c, e);
    c->count++;
    c->bytes += len;
    return 0;
}

size_t lru_count(const struct lru *c)
{
    return c->count;
}

void lru_get_stats(const struct lru *c, struct lru_stats *out)
{
    *out = c->stats;
}

void lru_count_as(struct lru *c, int hit_metric)
{
    if (c)
        c->metric = hit_metric;
}
