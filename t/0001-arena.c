/* 0001-arena: the per-request arena: alignment, growth, strings, cleanups, failure. */
#include "base/arena.h"
#include "base/err.h"
#include "tap.h"

#include <stdint.h>

static char order[16];
static int order_len;

static void note(void *data)
{
    order[order_len++] = *(char *)data;
}

int main(int argc, char **argv)
{
    struct arena *a;
    tap_init(argc, argv);

    a = arena_new();
    tap_ok(a != NULL, "arena_new");
    {
        int aligned = 1;
        for (size_t i = 1; i < 100; i++) {
            void *p = arena_alloc(a, i);
            aligned &= p && ((uintptr_t)p % _Alignof(max_align_t)) == 0;
            memset(p, 0xAB, i);
        }
        tap_ok(aligned, "allocations of every small size are aligned for any type");
    }
    {
        char *big = arena_alloc(a, 1 << 20);
        char *after = arena_alloc(a, 16);
        tap_ok(big != NULL && after != NULL, "a 1 MiB allocation and a small one after it");
        memset(big, 1, 1 << 20);
        tap_ok(big[(1 << 20) - 1] == 1, "the large allocation is writable to its end");
    }
    tap_ok(arena_alloc(a, 0) != NULL, "zero-size allocation gives a pointer");
    tap_ok(arena_calloc(a, SIZE_MAX / 2, 4) == NULL, "calloc overflow is refused");
    {
        int *zero = arena_calloc(a, 64, sizeof(int));
        int all = 1;
        for (int i = 0; i < 64; i++)
            all &= zero[i] == 0;
        tap_ok(all, "calloc zeroes");
    }
    tap_is_str(arena_strdup(a, "hello"), "hello", "strdup");
    tap_is_str(arena_strndup(a, "hello world", 5), "hello", "strndup cuts");
    tap_ok(arena_strdup(a, NULL) == NULL, "strdup(NULL) is NULL");
    tap_is_str(arena_sprintf(a, "%s-%d", "x", 42), "x-42", "sprintf");
    tap_ok(arena_used(a) >= (1 << 20), "arena_used counts what was handed out");

    {
        static char first = 'a', second = 'b', third = 'c';
        arena_add_cleanup(a, note, &first);
        arena_add_cleanup(a, note, &second);
        arena_add_cleanup(a, note, &third);
        tap_is_int(order_len, 0, "cleanups wait for arena_free");
        arena_free(a);
        order[order_len] = '\0';
        tap_is_str(order, "cba", "cleanups run last registered first");
    }
    arena_free(NULL);
    tap_ok(1, "arena_free(NULL) is harmless");

    a = arena_new();
    arena_fail_after(1);
    tap_ok(arena_alloc(a, 10) == NULL, "an injected failure makes arena_alloc return NULL");
    tap_ok(arena_alloc(a, 10) != NULL, "the next allocation works again");
    {
        static char marker = 'z';
        int rc;
        order_len = 0;
        arena_fail_after(1);
        rc = arena_add_cleanup(a, note, &marker);
        tap_is_int(rc, PURSER_EINTERNAL, "add_cleanup reports the failure");
        tap_is_int(order_len, 1, "and has already run the cleanup, so nothing leaks");
    }
    arena_free(a);
    arena_fail_after(1);
    tap_ok(arena_new() == NULL, "arena_new fails when its allocation fails");
    arena_fail_after(0);
    return tap_done();
}
