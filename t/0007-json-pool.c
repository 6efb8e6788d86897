/* 0007-json-pool: jansson's per-request pool: values come from it between begin and end and
 * are reused when freed; values made before are freed by malloc's free; json_text gives
 * malloc'd text; a large request's pages stay warm until released, then resident size
 * returns near where it was; with the check on, a value kept past its request crashes at its first
 * use. */
#include "base/json_pool.h"
#include "base/json_text.h"
#include "tap.h"

#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static long resident_kib(void)
{
    long pages = 0, rss = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f && fscanf(f, "%ld %ld", &pages, &rss) != 2)
        rss = 0;
    if (f)
        fclose(f);
    return rss * (sysconf(_SC_PAGESIZE) / 1024);
}

/* A tree of about n small values. */
static json_t *build(int n)
{
    json_t *list = json_array();
    for (int i = 0; i < n / 4; i++)
        json_array_append_new(
            list, json_pack("{s:i, s:s, s:[s]}", "n", i, "name", "component", "flags", "alpha"));
    return list;
}

/* Runs in a child with PURSER_POOL_CHECK=1: keeps a request's value and reads it after the
 * request ended. Exits 0 only if that read did not crash. */
static int kept_value_child(void)
{
    json_t *kept;
    setenv("PURSER_POOL_CHECK", "1", 1);
    if (json_pool_install((size_t)64 << 20, 0))
        return 3;
    json_pool_begin();
    kept = json_pack("{s:s}", "k", "v");
    json_pool_end();
    {
        const json_t *volatile got = json_object_get(kept, "k"); /* this read must fault */
        return got ? 0 : 0;
    }
}

/* Another thread, during a request: makes a value, and frees its own and the pool thread's. */
struct other {
    json_t *pool_value; /* made by the pool thread, freed here */
    size_t in_use_before, in_use_after;
    int ok;
};

static void *other_thread(void *arg)
{
    struct other *o = arg;
    json_t *mine;
    o->in_use_before = json_pool_stats().in_use;
    mine = json_pack("{s:s, s:[i, i]}", "made", "by another thread", "list", 1, 2);
    o->in_use_after = json_pool_stats().in_use;
    o->ok = mine && json_is_string(json_object_get(mine, "made"));
    json_decref(mine);
    json_decref(o->pool_value);
    return NULL;
}

int main(int argc, char **argv)
{
    json_t *before, *v, *again;
    struct json_pool_stats st;
    char *text;
    long idle, grown, after;
    if (argc > 1 && strcmp(argv[1], "--kept") == 0)
        return kept_value_child();
    tap_init(argc, argv);

    before = json_string("made before the pool"); /* malloc'd: freed by free() later */
#if defined(__SANITIZE_ADDRESS__)
    tap_ok(json_pool_install((size_t)1 << 30, 0) == -1, "off under AddressSanitizer");
    json_decref(before);
    return tap_done();
#endif
    if (getenv("PURSER_ARENA_MALLOC") && strcmp(getenv("PURSER_ARENA_MALLOC"), "1") == 0) {
        tap_ok(json_pool_install((size_t)1 << 30, 0) == -1, "off with PURSER_ARENA_MALLOC=1");
        json_decref(before);
        return tap_done();
    }
    unsetenv("PURSER_POOL_CHECK");
    tap_ok(json_pool_install((size_t)1 << 30, (size_t)256 << 10) == 0,
           "installed with 1 GiB reserved, 256 KiB kept");
    tap_ok(json_pool_install((size_t)1 << 30, 0) == -1, "only once");

    json_pool_begin();
    tap_ok(json_pool_active(), "active between begin and end");
    v = json_pack("{s:s, s:i}", "a", "b", "c", 1);
    st = json_pool_stats();
    tap_ok(st.in_use > 0, "a request's values are pool memory (%zu bytes)", st.in_use);
    json_decref(v);
    tap_is_int(json_pool_stats().in_use, 0, "freeing them gives the bytes back to the pool");
    v = json_pack("{s:s, s:i}", "a", "b", "c", 1);
    again = v;
    json_decref(v);
    v = json_pack("{s:s, s:i}", "a", "b", "c", 1);
    tap_ok(v == again, "a freed value's place is used again by the same size");
    json_decref(v);
    /* A value made before the pool is freed by free() inside a request, and json_text's text
     * is malloc'd: either one handed to the wrong free aborts, and the plan is never printed. */
    json_decref(before);
    v = json_pack("{s:s}", "key", "value");
    text = json_text(v, JSON_COMPACT);
    tap_is_str(text, "{\"key\":\"value\"}", "json_text dumps, into text that free() takes");
    free(text);
    json_decref(v);
    json_pool_end();
    tap_ok(!json_pool_active(), "not active after end");
    st = json_pool_stats();
    tap_ok(st.warm > 0 && st.warm == st.last && st.warm <= (size_t)256 << 10,
           "a small request's pages are the ones a release keeps (%zu KiB)", st.warm >> 10);

    /* the pool is its thread's: another thread's values are malloc's, and a pool value it
     * frees stays out of the free lists (which only the pool thread touches) */
    {
        struct other o = {0};
        pthread_t t;
        json_t *next;
        json_pool_begin();
        o.pool_value = json_pack("{s:s}", "made", "by the pool thread");
        again = o.pool_value;
        tap_ok(pthread_create(&t, NULL, other_thread, &o) == 0 && pthread_join(t, NULL) == 0 &&
                   o.ok,
               "another thread made values during the request");
        tap_ok(o.in_use_after == o.in_use_before,
               "its values are not pool memory (%zu bytes in use before, %zu after)",
               o.in_use_before, o.in_use_after);
        next = json_pack("{s:s}", "made", "by the pool thread");
        tap_ok(next != again, "a pool value another thread freed is not handed out again");
        json_decref(next);
        json_pool_end();
    }

    /* a large request, then back */
    json_pool_begin();
    v = build(20000);
    json_decref(v);
    json_pool_end();
    json_pool_release();
    tap_ok(json_pool_release() == 0, "releasing twice: nothing more to give back");
    malloc_trim(0); /* as the worker does beside the release (jansson's big tables are malloc's) */
    idle = resident_kib();
    json_pool_begin();
    v = build(400000);
    grown = resident_kib();
    st = json_pool_stats();
    tap_ok(st.in_use > ((size_t)20 << 20), "a large request: %zu MiB of values", st.in_use >> 20);
    json_decref(v);
    json_pool_end();
    tap_ok(resident_kib() > idle + 20 * 1024, "the pages stay warm after the request");
    tap_ok(json_pool_release() == 1, "until the pool is released");
    malloc_trim(0);
    after = resident_kib();
    tap_ok(grown - idle > 20 * 1024, "resident size grew by %ld KiB", grown - idle);
    tap_ok(after <= idle + 256,
           "and returned near its idle size after the request: %ld KiB, idle %ld KiB", after, idle);
    tap_ok(json_pool_stats().last > ((size_t)20 << 20), "stats: the last request's pages");
    tap_ok(json_pool_stats().warm <= (size_t)256 << 10,
           "a request past keep does not add to the pages a release keeps (%zu KiB)",
           json_pool_stats().warm >> 10);

    /* the check: a value kept past its request crashes at its first use */
    {
        pid_t pid = fork();
        int status = 0;
        if (pid == 0) {
            execl("/proc/self/exe", argv[0], "--kept", (char *)NULL);
            _exit(4);
        }
        waitpid(pid, &status, 0);
        tap_ok(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV,
               "with PURSER_POOL_CHECK=1 a value read after its request faults (status %d)",
               status);
    }
    return tap_done();
}
