/* lru.h: a fixed-capacity cache of byte strings by string key, least recently used first out,
 * each entry expiring a set time after it was stored (the expiry is kept with the entry; no
 * timer). Per worker process: not shared, not locked. Values are copied in; lru_get returns a
 * borrowed pointer valid until the next lru_put or lru_free.
 */
#ifndef PURSER_LRU_H
#define PURSER_LRU_H

#include <stddef.h>
#include <time.h>

struct lru;

struct lru_stats {
    unsigned long hits, misses, evictions, expirations;
};

/* A cache of at most capacity entries (>= 1), each living ttl seconds. NULL when out of memory. */
struct lru *lru_new(size_t capacity, unsigned ttl);
void lru_free(struct lru *cache); /* accepts NULL */

/* Bounds the bytes of the values kept as well (0: no bound): a put evicts the least recently
 * used entries until its value fits, and a value larger than the bound alone is not kept. */
void lru_set_max_bytes(struct lru *cache, size_t max_bytes);
size_t lru_bytes(const struct lru *cache); /* the bytes of the values kept */

/* The value stored under key and not expired at now, or NULL. */
const char *lru_get(struct lru *cache, const char *key, size_t *len, time_t now);

/* Stores a copy of value under key (replacing any), evicting the least recently used entry
 * when full (or past its bytes). 0 (also when the value alone is past the bound of bytes, and
 * is not kept), or PURSER_EINTERNAL when out of memory (the cache is unchanged then). */
int lru_put(struct lru *cache, const char *key, const char *value, size_t len, time_t now);

/* Removes every entry. */
void lru_clear(struct lru *cache);

size_t lru_count(const struct lru *cache);
void lru_get_stats(const struct lru *cache, struct lru_stats *out);

/* Counts the cache's hits in base/metrics.h's counter hit_metric and its misses in the one
 * after it (METRIC_CACHE_*_HIT); accepts NULL. */
void lru_count_as(struct lru *cache, int hit_metric);

#endif
