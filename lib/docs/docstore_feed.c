/* docstore_feed.c: the write feed, the one interface between the threads of a write: the
 * parser fills and publishes items (the producer), the preparer hashes them and the writer
 * (docstore.c) stores them (the consumers). It calls nothing of the store: docstore_stream.c
 * and docstore.c call it. */
#include "docs/docstore_private.h"

#include <pthread.h>
#include <string.h>

#define FEED_BLOCK 256 /* items per block of a feed */

void docstore_feed_init(struct feed *f, int threaded)
{
    memset(f, 0, sizeof(*f));
    f->threaded = f->synced = threaded;
    if (threaded) {
        pthread_mutex_init(&f->lock, NULL);
        pthread_cond_init(&f->more, NULL);
        pthread_cond_init(&f->done, NULL);
    }
}

void docstore_feed_release(struct feed *f)
{
    if (!f->synced)
        return;
    pthread_cond_destroy(&f->more);
    pthread_cond_destroy(&f->done);
    pthread_mutex_destroy(&f->lock);
}

struct item *docstore_feed_item(struct item *const *blocks, size_t i)
{
    return &blocks[i / FEED_BLOCK][i % FEED_BLOCK];
}

/* Waits until items from `from` on are published or the feed ends (under lock). */
static enum feed_state wait_ready(struct feed *f, size_t from)
{
    while (f->threaded && f->ready == from && f->state == FEED_OPEN)
        pthread_cond_wait(&f->more, &f->lock);
    return f->state;
}

/* Waits until items from `from` on are hashed by the preparer, or the feed ends (under lock):
 * FEED_DONE once every item is, FEED_FAILED if the parser or the preparer failed. */
static enum feed_state wait_hashed(struct feed *f, size_t from)
{
    while (f->hashed == from && f->state != FEED_FAILED && !f->prepared_ended)
        pthread_cond_wait(&f->done, &f->lock);
    if (f->state == FEED_FAILED || (f->prepared_ended && f->hashed < f->ready))
        return FEED_FAILED;
    return f->state == FEED_DONE && f->hashed == f->ready ? FEED_DONE : FEED_OPEN;
}

/* *until: the items published (with a preparer: hashed); *blocks: the block table to read
 * them through. */
enum feed_state docstore_feed_wait(struct feed *f, size_t from, size_t *until,
                                   struct item *const **blocks)
{
    enum feed_state state;
    if (f->threaded)
        pthread_mutex_lock(&f->lock);
    state = f->prepared ? wait_hashed(f, from) : wait_ready(f, from);
    *until = f->prepared ? f->hashed : f->ready;
    *blocks = f->blocks;
    if (f->threaded)
        pthread_mutex_unlock(&f->lock);
    return state;
}

void docstore_feed_publish(struct feed *f, enum feed_state state)
{
    if (f->threaded)
        pthread_mutex_lock(&f->lock);
    f->ready = f->count;
    if (f->state == FEED_OPEN)
        f->state = state;
    if (f->threaded) {
        pthread_cond_signal(&f->more);
        pthread_mutex_unlock(&f->lock);
    }
}

void docstore_feed_hashed(struct feed *f, size_t to)
{
    if (f->threaded)
        pthread_mutex_lock(&f->lock);
    if (to > __atomic_load_n(&f->hashed, __ATOMIC_RELAXED))
        __atomic_store_n(&f->hashed, to, __ATOMIC_RELEASE);
    if (f->threaded) {
        pthread_cond_broadcast(&f->done);
        pthread_mutex_unlock(&f->lock);
    }
}

/* The next item to fill, in a block of its own when needed; NULL when out of memory. */
struct item *docstore_feed_next(struct feed *f, struct arena *arena)
{
    size_t block = f->count / FEED_BLOCK;
    if (block == f->block_cap) {
        size_t cap = f->block_cap ? f->block_cap * 2 : 16;
        struct item **table = arena_alloc(arena, cap * sizeof(*table));
        if (!table)
            return NULL;
        if (f->block_cap)
            memcpy(table, f->blocks, f->block_cap * sizeof(*table));
        if (f->threaded)
            pthread_mutex_lock(&f->lock);
        f->blocks = table;
        f->block_cap = cap;
        if (f->threaded)
            pthread_mutex_unlock(&f->lock);
    }
    if (f->count % FEED_BLOCK == 0 &&
        !(f->blocks[block] = arena_calloc(arena, FEED_BLOCK, sizeof(struct item))))
        return NULL;
    return docstore_feed_item(f->blocks, f->count);
}

void docstore_feed_filled(struct feed *f)
{
    f->count++;
}

size_t docstore_feed_hashed_count(struct feed *f)
{
    return __atomic_load_n(&f->hashed, __ATOMIC_ACQUIRE);
}

enum feed_state docstore_feed_wait_published(struct feed *f, size_t from, size_t *until,
                                             struct item *const **blocks)
{
    enum feed_state state;
    if (f->threaded)
        pthread_mutex_lock(&f->lock);
    state = wait_ready(f, from);
    *until = f->ready;
    *blocks = f->blocks;
    if (f->threaded)
        pthread_mutex_unlock(&f->lock);
    return state;
}

void docstore_feed_set_revision(struct feed *f, long long revision)
{
    if (f->threaded)
        pthread_mutex_lock(&f->lock);
    f->revision = revision;
    if (f->threaded)
        pthread_mutex_unlock(&f->lock);
}

long long docstore_feed_wait_all_hashed(struct feed *f)
{
    long long revision;
    pthread_mutex_lock(&f->lock);
    while (f->hashed < f->count && !f->ended && !(f->prepared && f->prepared_ended))
        pthread_cond_wait(&f->done, &f->lock);
    revision = f->revision && f->hashed >= f->count && !f->ended ? f->revision : -1;
    pthread_mutex_unlock(&f->lock);
    return revision;
}

/* Tells the other threads that one ended (flag: ended or prepared_ended). */
static void thread_ended(struct feed *f, int *flag)
{
    if (f->threaded)
        pthread_mutex_lock(&f->lock);
    *flag = 1;
    if (f->threaded) {
        pthread_cond_broadcast(&f->done);
        pthread_mutex_unlock(&f->lock);
    }
}

void docstore_feed_writer_ended(struct feed *f)
{
    thread_ended(f, &f->ended);
}

void docstore_feed_preparer_ended(struct feed *f)
{
    thread_ended(f, &f->prepared_ended);
}
