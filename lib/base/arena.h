/* arena.h: a per-request memory region with cleanup callbacks.
 *
 * A request creates one arena when it is accepted and frees it after the response. Everything
 * request-scoped is allocated from it and never freed piecewise; resources that are not arena
 * memory (jansson trees, database results, libyaml parsers) register a cleanup that runs when
 * the arena is freed, last registered first.
 *
 * In debug mode every allocation is its own malloc(), so that ASan and valgrind see each one:
 * it is on when built with -fsanitize=address, or when PURSER_ARENA_MALLOC=1 is in the
 * environment at the first arena_new().
 */
#ifndef PURSER_ARENA_H
#define PURSER_ARENA_H

#include <stdarg.h>
#include <stddef.h>

struct arena;

/* A new empty arena, or NULL when out of memory. Free it with arena_free(). */
struct arena *arena_new(void);

/* Runs the cleanups (last registered first), then releases all memory. Accepts NULL. */
void arena_free(struct arena *arena);

/* size bytes aligned for any type, or NULL when out of memory (or size is absurd). The memory
 * lives until arena_free(). arena_alloc(a, 0) returns a valid unique pointer. */
void *arena_alloc(struct arena *arena, size_t size);

/* Like arena_alloc, zeroed, with overflow checking of count * size. */
void *arena_calloc(struct arena *arena, size_t count, size_t size);

/* Copies of strings, NUL-terminated; NULL when out of memory (arena_strdup(a, NULL) is NULL). */
char *arena_strdup(struct arena *arena, const char *s);
char *arena_strndup(struct arena *arena, const char *s, size_t n);
char *arena_sprintf(struct arena *arena, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The concatenation of the strings given, up to a NULL, in arena memory (no formatting: for
 * paths that run on every request). NULL when out of memory. */
char *arena_concat(struct arena *arena, ...) __attribute__((sentinel));

/* Registers fn(data) to run at arena_free(). Returns 0, or PURSER_EINTERNAL when out of memory,
 * in which case fn(data) has already run: the resource never leaks either way. */
int arena_add_cleanup(struct arena *arena, void (*fn)(void *data), void *data);

/* Bytes handed out so far (for limits and tests). */
size_t arena_used(const struct arena *arena);

/* Test hook: make the Nth allocation from now fail (0 turns it off). Process-wide. Arena
 * allocations and the growth of a struct buf (buf.h) count. */
void arena_fail_after(unsigned long n);

/* The hook's other half, for allocators outside the arena: 1 when the allocation about to be
 * made is the one arena_fail_after named (it then fails as if out of memory). */
int arena_injected_failure(void);

#endif
