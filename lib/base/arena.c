/* arena.c: chunked bump allocation with a cleanup list; malloc-per-allocation in debug mode. */
#include "base/arena.h"

#include "base/err.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ARENA_CHUNK_SIZE 16384
#define ARENA_ALIGN (_Alignof(max_align_t))
#define ARENA_MAX_ALLOC ((size_t)1 << 40)

struct arena_chunk {
    struct arena_chunk *next;
    size_t size; /* usable bytes after the header */
    size_t used;
    max_align_t data[]; /* aligned start of the usable bytes */
};

struct arena_cleanup {
    struct arena_cleanup *next;
    void (*fn)(void *data);
    void *data;
};

struct arena {
    struct arena_chunk *chunks; /* newest first; in debug mode one chunk per allocation */
    struct arena_cleanup *cleanups;
    size_t used;
    int debug;
};

static int debug_mode = -1;
static unsigned long fail_countdown;

static int arena_debug_mode(void)
{
    if (debug_mode < 0) {
#if defined(__SANITIZE_ADDRESS__)
        debug_mode = 1;
#else
        const char *env = getenv("PURSER_ARENA_MALLOC");
        debug_mode = env && strcmp(env, "1") == 0;
#endif
    }
    return debug_mode;
}

void arena_fail_after(unsigned long n)
{
    fail_countdown = n;
}

int arena_injected_failure(void)
{
    if (fail_countdown == 0)
        return 0;
    return --fail_countdown == 0;
}

struct arena *arena_new(void)
{
    struct arena *arena;
    if (arena_injected_failure())
        return NULL;
    arena = calloc(1, sizeof(*arena));
    if (arena)
        arena->debug = arena_debug_mode();
    return arena;
}

void arena_free(struct arena *arena)
{
    if (!arena)
        return;
    while (arena->cleanups) {
        struct arena_cleanup *c = arena->cleanups;
        arena->cleanups = c->next;
        c->fn(c->data);
        if (arena->debug)
            free(c);
    }
    while (arena->chunks) {
        struct arena_chunk *chunk = arena->chunks;
        arena->chunks = chunk->next;
        free(chunk);
    }
    free(arena);
}

static struct arena_chunk *chunk_new(size_t size)
{
    struct arena_chunk *chunk = malloc(sizeof(*chunk) + size);
    if (!chunk)
        return NULL;
    chunk->next = NULL;
    chunk->size = size;
    chunk->used = 0;
    return chunk;
}

void *arena_alloc(struct arena *arena, size_t size)
{
    size_t rounded = (size + ARENA_ALIGN - 1) & ~(ARENA_ALIGN - 1);
    struct arena_chunk *chunk = arena->chunks;

    if (size > ARENA_MAX_ALLOC || arena_injected_failure())
        return NULL;
    if (rounded == 0)
        rounded = ARENA_ALIGN;
    if (arena->debug || !chunk || chunk->size - chunk->used < rounded) {
        size_t chunk_size = arena->debug                     ? rounded
                            : rounded > ARENA_CHUNK_SIZE / 4 ? rounded
                                                             : ARENA_CHUNK_SIZE;
        struct arena_chunk *fresh = chunk_new(chunk_size);
        if (!fresh)
            return NULL;
        /* A large allocation gets its own chunk behind the current one, so the current
         * chunk's free space stays usable. */
        if (chunk && !arena->debug && chunk_size == rounded && chunk_size > ARENA_CHUNK_SIZE / 4) {
            fresh->next = chunk->next;
            chunk->next = fresh;
        } else {
            fresh->next = chunk;
            arena->chunks = fresh;
        }
        chunk = fresh;
    }
    void *p = (char *)chunk->data + chunk->used;
    chunk->used += rounded;
    arena->used += size;
    return p;
}

void *arena_calloc(struct arena *arena, size_t count, size_t size)
{
    void *p;
    if (size && count > SIZE_MAX / size)
        return NULL;
    p = arena_alloc(arena, count * size);
    if (p)
        memset(p, 0, count * size);
    return p;
}

char *arena_strndup(struct arena *arena, const char *s, size_t n)
{
    char *copy;
    if (!s)
        return NULL;
    copy = arena_alloc(arena, n + 1);
    if (!copy)
        return NULL;
    memcpy(copy, s, n);
    copy[n] = '\0';
    return copy;
}

char *arena_strdup(struct arena *arena, const char *s)
{
    return s ? arena_strndup(arena, s, strlen(s)) : NULL;
}

char *arena_sprintf(struct arena *arena, const char *fmt, ...)
{
    char small[256];
    va_list ap;
    int n;
    char *out;

    /* one formatting pass for the common short string; a second only for a long one */
    va_start(ap, fmt);
    n = vsnprintf(small, sizeof(small), fmt, ap);
    va_end(ap);
    if (n < 0 || !(out = arena_alloc(arena, (size_t)n + 1)))
        return NULL;
    if ((size_t)n < sizeof(small)) {
        memcpy(out, small, (size_t)n + 1);
        return out;
    }
    va_start(ap, fmt);
    vsnprintf(out, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return out;
}

char *arena_concat(struct arena *arena, ...)
{
    size_t total = 0, at = 0;
    const char *part;
    va_list ap;
    char *out;

    va_start(ap, arena);
    while ((part = va_arg(ap, const char *)))
        total += strlen(part);
    va_end(ap);
    if (!(out = arena_alloc(arena, total + 1)))
        return NULL;
    va_start(ap, arena);
    while ((part = va_arg(ap, const char *))) {
        size_t n = strlen(part);
        memcpy(out + at, part, n);
        at += n;
    }
    va_end(ap);
    out[at] = '\0';
    return out;
}

int arena_add_cleanup(struct arena *arena, void (*fn)(void *data), void *data)
{
    struct arena_cleanup *c;
    /* In debug mode the record is malloc'd and freed at once in arena_free, so a leak of the
     * resource itself is what the tools report, not arena bookkeeping. */
    c = arena->debug ? (arena_injected_failure() ? NULL : malloc(sizeof(*c)))
                     : arena_alloc(arena, sizeof(*c));
    if (!c) {
        fn(data);
        return PURSER_EINTERNAL;
    }
    c->fn = fn;
    c->data = data;
    c->next = arena->cleanups;
    arena->cleanups = c;
    return 0;
}

size_t arena_used(const struct arena *arena)
{
    return arena->used;
}
