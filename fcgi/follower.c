/* follower.c: the events follower: the events table polled, what is new posted to this host's
 * nchan (follower.h). */
#include "follower.h"

#include "events_publish.h"

#include "base/arena.h"
#include "base/log.h"
#include "store/events.h"
#include "store/store.h"

#include <jansson.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#define FOLLOW_ORGS 4096       /* organizations it remembers; more are followed in turn */
#define FOLLOW_PAGE 1000       /* events read per organization and look */
#define FOLLOW_AGAIN_SECONDS 5 /* at start, what was committed this long ago is posted again */

struct followed {
    long long org, seq; /* the newest seq posted */
};

struct follower {
    const struct purser_config *cfg;
    struct store *store;
    struct followed orgs[FOLLOW_ORGS];
    size_t count;
};

static volatile sig_atomic_t follower_stop;
static void on_term(int sig)
{
    (void)sig;
    follower_stop = 1;
}

static struct followed *followed_of(struct follower *f, long long org)
{
    for (size_t i = 0; i < f->count; i++)
        if (f->orgs[i].org == org)
            return &f->orgs[i];
    if (f->count == FOLLOW_ORGS)
        return NULL;
    f->orgs[f->count] = (struct followed){org, -1};
    return &f->orgs[f->count++];
}

/* Reads the events of org after *seq (up to a page) and posts them; *seq moves on. */
static int post_new(struct follower *f, struct arena *arena, long long org, long long *seq,
                    struct purser_error *err)
{
    struct events_query q = {.since = *seq, .limit = FOLLOW_PAGE};
    json_t *page = NULL;
    long long gone = 0, last = 0;
    int rc = events_read(f->store, arena, org, &q, &page, &gone, &last, err);
    if (!rc && gone) /* pruned meanwhile: nothing to wake anyone for there */
        *seq = gone - 1;
    if (!rc && page) {
        events_publish_followed(f->cfg->events_publish_socket, org, json_object_get(page, "events"),
                                json_integer_value(json_object_get(page, "next")));
        *seq = json_integer_value(json_object_get(page, "next"));
    }
    json_decref(page);
    return rc;
}

/* One look: each organization's newest seq (a loose scan of the events' primary key), and
 * what is new where it moved. At the first look, an organization starts from what it had
 * FOLLOW_AGAIN_SECONDS ago (again = 1). */
static int look(struct follower *f, int again, struct purser_error *err)
{
    struct arena *arena = arena_new();
    struct store_rows newest, recent = {0};
    struct store_value ago = STORE_INT(FOLLOW_AGAIN_SECONDS);
    int rc = arena
                 ? store_query(f->store, arena, &newest,
                               "SELECT org_id, MAX(seq) FROM events GROUP BY org_id", NULL, 0, err)
                 : purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    if (!rc && again)
        rc = store_query(f->store, arena, &recent,
                         "SELECT org_id, MIN(seq) - 1 FROM events WHERE at >= NOW(6) - "
                         "INTERVAL ? SECOND GROUP BY org_id",
                         &ago, 1, err);
    for (size_t i = 0; !rc && i < newest.count; i++) {
        long long org = atoll(store_cell(&newest, i, 0)), max = atoll(store_cell(&newest, i, 1));
        struct followed *o = followed_of(f, org);
        if (!o)
            break;
        if (o->seq < 0) {
            o->seq = max;
            for (size_t j = 0; j < recent.count; j++)
                if (atoll(store_cell(&recent, j, 0)) == org)
                    o->seq = atoll(store_cell(&recent, j, 1));
        }
        while (!rc && o->seq < max)
            rc = post_new(f, arena, org, &o->seq, err);
    }
    arena_free(arena);
    return rc;
}

int follower_run(const struct purser_config *cfg)
{
    static struct follower f;
    struct purser_error err;
    struct sigaction sa = {.sa_handler = on_term};
    struct timespec pause = {cfg->events_follow_interval / 1000,
                             (cfg->events_follow_interval % 1000) * 1000000L};
    int first = 1, failing = 0;

    sigset_t stops;
    sigemptyset(&stops);
    sigaddset(&stops, SIGTERM);
    sigaddset(&stops, SIGINT);
    sigaddset(&stops, SIGHUP);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    sigprocmask(SIG_UNBLOCK, &stops, NULL); /* (the master blocks them for sigtimedwait) */
    prctl(PR_SET_NAME, "purser-follow");    /* its name in ps and /proc/PID/comm */
    prctl(PR_SET_PDEATHSIG, SIGTERM);       /* never outlive the master */
    if (getppid() == 1)
        return 0;
    f.cfg = cfg;
    if (store_new(&f.store, cfg, &err)) {
        log_message("error", err.message, NULL);
        return 1;
    }
    log_message("info", "events follower started", NULL);
    while (!follower_stop) {
        if (look(&f, first, &err)) {
            if (!failing) { /* said once per outage (the database away, mostly) */
                json_t *fields = json_pack("{s:s}", "error", err.message);
                log_message("warning", "events follower: the events cannot be read", fields);
                json_decref(fields);
            }
            failing = 1;
        } else {
            first = 0;
            failing = 0;
        }
        log_flush();
        nanosleep(&pause, NULL);
    }
    store_free(f.store);
    return 0;
}
