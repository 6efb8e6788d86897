/* 0050-lru: the per-worker cache: hits, recency, eviction at capacity, expiry, replacement. */
#include "base/lru.h"
#include "tap.h"

#include <stdio.h>

int main(int argc, char **argv)
{
    struct lru *c;
    struct lru_stats st;
    size_t len = 0;
    const char *v;
    time_t now = 1000;
    tap_init(argc, argv);

    c = lru_new(3, 60);
    tap_ok(c != NULL, "a cache of 3 entries living 60 s");
    tap_ok(lru_get(c, "a", &len, now) == NULL, "empty: a miss");
    lru_put(c, "a", "alpha", 5, now);
    lru_put(c, "b", "beta", 4, now);
    lru_put(c, "c", "gamma", 5, now);
    v = lru_get(c, "a", &len, now);
    tap_is_str(v, "alpha", "a hit returns the value");
    tap_is_int(len, 5, "and its length");
    lru_put(c, "d", "delta", 5, now); /* evicts b: a was used more recently */
    tap_ok(lru_get(c, "b", NULL, now) == NULL, "the least recently used entry was evicted");
    tap_is_str(lru_get(c, "a", NULL, now), "alpha", "the recently used one stayed");
    tap_is_int(lru_count(c), 3, "never more than the capacity");
    lru_put(c, "a", "ALPHA", 5, now);
    tap_is_str(lru_get(c, "a", NULL, now), "ALPHA", "put replaces");
    tap_is_int(lru_count(c), 3, "without growing");
    tap_is_str(lru_get(c, "c", NULL, now + 59), "gamma", "alive just before its expiry");
    tap_ok(lru_get(c, "c", NULL, now + 60) == NULL, "gone at its expiry");
    tap_is_int(lru_count(c), 2, "an expired entry is removed when found");
    lru_get_stats(c, &st);
    tap_is_int(st.evictions, 1, "one eviction counted");
    tap_is_int(st.expirations, 1, "one expiry counted");
    tap_ok(st.hits >= 4 && st.misses >= 3, "hits and misses counted");
    {
        char key[32], value[32];
        int all = 1;
        for (int i = 0; i < 1000; i++) {
            snprintf(key, sizeof(key), "k%d", i);
            snprintf(value, sizeof(value), "v%d", i);
            lru_put(c, key, value, strlen(value), now);
        }
        for (int i = 997; i < 1000; i++) {
            snprintf(key, sizeof(key), "k%d", i);
            snprintf(value, sizeof(value), "v%d", i);
            all &= lru_get(c, key, NULL, now) && strcmp(lru_get(c, key, NULL, now), value) == 0;
        }
        tap_ok(all, "after 1000 puts the newest 3 are there");
        tap_is_int(lru_count(c), 3, "and only they");
    }
    {
        static const char bytes[] = {'x', '\0', 'y'};
        lru_put(c, "bin", bytes, 3, now);
        v = lru_get(c, "bin", &len, now);
        tap_ok(v && len == 3 && v[1] == '\0' && v[2] == 'y', "values may hold NUL bytes");
    }
    lru_free(c);
    {
        struct lru *b = lru_new(10, 60);
        lru_set_max_bytes(b, 10);
        lru_put(b, "a", "aaaa", 4, now);
        lru_put(b, "b", "bbbb", 4, now);
        tap_is_int(lru_bytes(b), 8, "the bytes of the values kept are counted");
        lru_get(b, "a", NULL, now);
        lru_put(b, "c", "cccc", 4, now); /* 12 > 10: b, the least recently used, goes */
        tap_ok(lru_get(b, "b", NULL, now) == NULL, "past its bytes the least recently used goes");
        tap_ok(lru_get(b, "a", NULL, now) && lru_get(b, "c", NULL, now), "  and only it");
        tap_is_int(lru_bytes(b), 8, "  the bytes within the bound");
        lru_put(b, "a", "0123456789x", 11, now);
        tap_ok(lru_get(b, "a", NULL, now) == NULL,
               "a value larger than the bound alone is not kept, nor what its key held");
        tap_is_str(lru_get(b, "c", NULL, now), "cccc", "  and the others stay");
        tap_is_int(lru_bytes(b), 4, "  their bytes counted");
        lru_put(b, "d", "dddddddddd", 10, now);
        tap_ok(lru_get(b, "c", NULL, now) == NULL && lru_get(b, "d", NULL, now),
               "a value of the bound's size takes the whole of it");
        lru_put(b, "e", "ee", 2, now);
        lru_put(b, "f", "ff", 2, now);
        lru_set_max_bytes(b, 3);
        tap_ok(lru_count(b) == 1 && lru_get(b, "f", NULL, now), "a smaller bound evicts at once");
        lru_clear(b);
        tap_is_int(lru_bytes(b), 0, "cleared, no bytes");
        lru_free(b);
    }
    lru_free(NULL);
    return tap_done();
}
