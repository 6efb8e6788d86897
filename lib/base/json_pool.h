/* json_pool.h: jansson's memory, per request, in a worker.
 *
 * A request builds and drops many small jansson values (a rendered site is hundreds of
 * thousands). With the pool installed, every value of 1 KiB or less that jansson allocates
 * between json_pool_begin() and json_pool_end() comes from a reserved region, carved by size
 * class (8-byte steps) and reused within the request through per-class free lists. At
 * json_pool_end() the whole region is dropped at once, without freeing value by value; once
 * the worker is idle, json_pool_release() gives back to the system the pages past those its
 * small requests use (at most fcgi.pool_keep_bytes), so a worker returns to its idle size
 * after a large request, while small requests (and a burst of large ones) reuse warm pages
 * instead of faulting new ones.
 *
 * The rule this asks of the code: no jansson value made during a request outlives it. What
 * lives across requests (the configuration, the RBAC policy, the keyring) is made before the
 * first request; caches keep text (lru), never jansson values. Text from json_dumps() must be
 * released with free(), so it cannot come from the pool: call json_text() (base/json_text.h),
 * whose text comes from malloc.
 *
 * With check on (PURSER_POOL_CHECK=1 in the environment, as the test stacks run), each request
 * gets fresh addresses and the previous request's pages become unreadable, so a value kept
 * past its request crashes the worker at its first use instead of reading reused memory; a
 * pool value freed after its request aborts with a message.
 *
 * The pool is the installing thread's: values another thread makes come from malloc, and a
 * pool value another thread frees stays in its page until the request ends.
 *
 * Off under AddressSanitizer and with PURSER_ARENA_MALLOC=1, so that those see every value.
 */
#ifndef PURSER_JSON_POOL_H
#define PURSER_JSON_POOL_H

#include <jansson.h>
#include <stddef.h>

struct json_pool_stats {
    size_t in_use; /* pool bytes handed out and not yet freed, this request */
    size_t last;   /* the pool pages the last request ended with, in bytes */
    size_t warm;   /* the pages a release keeps: the most a request within keep has used */
};

/* Installs the pool as jansson's allocator, reserving reserve bytes of address space (no
 * memory until used) and keeping warm between requests up to keep bytes of the pages small
 * requests use. Returns 0, or -1 when the pool is off (debug builds) or the reservation
 * failed; jansson then keeps using malloc, which is always correct. Call once, before the
 * first json_pool_begin(). */
int json_pool_install(size_t reserve, size_t keep);

/* The start and end of a request. Without an installed pool, both do nothing. */
void json_pool_begin(void);
void json_pool_end(void);

/* Gives back to the system the pages past those the requests that stayed within keep have
 * used (the worker's idle working set, at most keep); 1 if there were any. A worker calls it
 * when it falls idle after a large request, not at every request's end: a burst of large
 * requests reuses warm pages instead of faulting them in again each time. Not while a request
 * runs. */
int json_pool_release(void);

/* 1 while a request's values come from the pool. */
int json_pool_active(void);

struct json_pool_stats json_pool_stats(void);

#endif
