/* json_pool.c: jansson's allocator for a request: size classes in a reserved region, dropped
 * whole at the request's end (json_pool.h). */
#include "base/json_pool.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define POOL_PAGE ((size_t)16 << 10) /* one size class per page */
#define SMALL_MAX 1024               /* larger values (long strings, big tables) use malloc */
#define CLASSES (SMALL_MAX / 8 + 1)  /* class c holds objects of c * 8 bytes */
#define CHECK_RESERVE ((size_t)64 << 30)
#define HUGE_PAGE ((size_t)2 << 20) /* the system's transparent huge page */

static struct {
    char *base, *limit;        /* the reserved region */
    unsigned char *page_class; /* the size class of each page of the region */
    char *start, *next;        /* this request's first page; the next unused page */
    char *high;                /* the end of the pages touched since the last release */
    size_t keep; /* at most what a release keeps: it keeps stats.warm, the most pages a
                    request that stayed within keep has used (the worker's idle working set) */
    void *free_list[CLASSES];
    char *bump[CLASSES], *bump_end[CLASSES];
    int installed, active, check;
    struct json_pool_stats stats;
} P;

/* The pool is the installing thread's (the worker's); values other threads make (a document
 * write's store thread) come from malloc. */
static __thread int pool_thread;

static void *pool_malloc(size_t size)
{
    size_t c;
    char *p;
    if (!P.active || size > SMALL_MAX || !pool_thread)
        return malloc(size);
    c = size ? (size + 7) >> 3 : 1;
    if ((p = P.free_list[c])) {
        P.free_list[c] = *(void **)p;
    } else {
        if ((size_t)(P.bump_end[c] - P.bump[c]) < c << 3) {
            if ((size_t)(P.limit - P.next) < POOL_PAGE)
                return malloc(size); /* the region is full: malloc's, freed by free() */
            P.bump[c] = P.next;
            P.bump_end[c] = P.next + POOL_PAGE;
            P.next += POOL_PAGE;
            P.page_class[(size_t)(P.bump[c] - P.base) / POOL_PAGE] = (unsigned char)c;
        }
        p = P.bump[c];
        P.bump[c] += c << 3;
    }
    P.stats.in_use += c << 3;
    return p;
}

static void pool_free(void *ptr)
{
    char *p = ptr;
    size_t c;
    if (p < P.base || p >= P.limit) {
        free(ptr);
        return;
    }
    if (!P.active) {
        if (P.check) {
            static const char msg[] = "json_pool: a request's jansson value was freed after "
                                      "the request ended\n";
            (void)!write(2, msg, sizeof(msg) - 1);
            abort();
        }
        return; /* its page was dropped with the request: nothing to give back */
    }
    if (!pool_thread)
        return; /* the free lists are the pool thread's: the page goes with the request */
    c = P.page_class[(size_t)(p - P.base) / POOL_PAGE];
    *(void **)p = P.free_list[c];
    P.free_list[c] = p;
    P.stats.in_use -= c << 3;
}

int json_pool_install(size_t reserve, size_t keep)
{
    const char *debug = getenv("PURSER_ARENA_MALLOC"), *check = getenv("PURSER_POOL_CHECK");
    size_t pages, huge_from;
    uintptr_t kept_end;
#if defined(__SANITIZE_ADDRESS__)
    return -1;
#endif
    if (P.installed || (debug && strcmp(debug, "1") == 0))
        return -1;
    P.check = check && strcmp(check, "1") == 0;
    if (P.check && reserve < CHECK_RESERVE)
        reserve = CHECK_RESERVE; /* fresh addresses for many requests before wrapping */
    pages = reserve / POOL_PAGE;
    if (pages < 64)
        return -1;
    P.base = mmap(NULL, pages * POOL_PAGE, PROT_READ | PROT_WRITE,
                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (P.base == MAP_FAILED) {
        P.base = NULL;
        return -1;
    }
    P.page_class = mmap(NULL, pages, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (P.page_class == MAP_FAILED) {
        munmap(P.base, pages * POOL_PAGE);
        P.base = NULL;
        return -1;
    }
    P.limit = P.base + pages * POOL_PAGE;
    P.start = P.next = P.high = P.base;
    P.keep = keep - keep % POOL_PAGE;
    /* 2 MiB pages where the system has them past the kept pages: a large request faults in
     * hundreds of pages, not tens of thousands, each time after the pages went back. Not on
     * the kept ones, which a release cuts at any page: the system would put the rest of their
     * 2 MiB back by itself (khugepaged), and the worker would not return to its idle size.
     * Nowhere with the check on, which drops each request's pages where they end: the rest of
     * the 2 MiB page around that end would stay. */
    kept_end = (uintptr_t)P.base + P.keep;
    huge_from =
        P.check ? pages * POOL_PAGE
                : ((kept_end + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1)) - (uintptr_t)P.base;
    madvise(P.base, huge_from, MADV_NOHUGEPAGE);
    if (huge_from < pages * POOL_PAGE)
        madvise(P.base + huge_from, pages * POOL_PAGE - huge_from, MADV_HUGEPAGE);
    P.installed = 1;
    pool_thread = 1;
    json_set_alloc_funcs(pool_malloc, pool_free);
    return 0;
}

void json_pool_begin(void)
{
    if (!P.installed || P.active)
        return;
    if (P.check && (size_t)(P.limit - P.next) < P.keep + ((size_t)1 << 30)) {
        /* wrap around: every earlier request's pages become usable (and zero) again */
        mprotect(P.base, (size_t)(P.high - P.base), PROT_READ | PROT_WRITE);
        madvise(P.base, (size_t)(P.high - P.base), MADV_DONTNEED);
        P.next = P.high = P.base;
    }
    P.start = P.check ? P.next : P.base;
    P.next = P.start;
    P.active = 1;
}

void json_pool_end(void)
{
    size_t used;
    if (!P.installed || !P.active)
        return;
    P.active = 0;
    P.stats.in_use = 0;
    memset(P.free_list, 0, sizeof(P.free_list));
    memset(P.bump, 0, sizeof(P.bump));
    memset(P.bump_end, 0, sizeof(P.bump_end));
    if (P.next > P.high)
        P.high = P.next;
    used = (size_t)(P.next - P.start);
    P.stats.last = used;
    if (!P.check && used <= P.keep && used > P.stats.warm)
        P.stats.warm = used;
    if (P.check) { /* this request's values become unreadable: a kept one crashes at once */
        madvise(P.start, used, MADV_DONTNEED);
        mprotect(P.start, used, PROT_NONE);
    }
}

int json_pool_release(void)
{
    uintptr_t end;
    if (!P.installed || P.active || P.check || P.high <= P.base + P.stats.warm)
        return 0;
    /* to the end of the last 2 MiB page touched: the system faulted it in whole, past high */
    end = ((uintptr_t)P.high + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
    if (end > (uintptr_t)P.limit)
        end = (uintptr_t)P.limit;
    madvise(P.base + P.stats.warm, end - (uintptr_t)(P.base + P.stats.warm), MADV_DONTNEED);
    P.high = P.base + P.stats.warm;
    return 1;
}

int json_pool_active(void)
{
    return P.active;
}

struct json_pool_stats json_pool_stats(void)
{
    return P.stats;
}
