/* expiry.h: the background sweep of what has expired, a worker's timer (README, "Resources":
 * sub-kind and expiry). */
#ifndef PURSER_EXPIRY_H
#define PURSER_EXPIRY_H

#include "config/config.h"
#include "store/store.h"

#include <time.h>

/* A worker's timer: when it next looks, and the name its lease is held under. */
struct expiry_timer {
    time_t next;
    char holder[128]; /* "host:pid" */
};

/* Sets the timer's first look one interval (expiry.interval) from now. */
void expiry_timer_init(struct expiry_timer *t, const struct purser_config *cfg);

/* When the interval has passed (at once otherwise, with no round trip): takes or renews the
 * "expiry" lease (store/lease.h; held for three intervals, so that one holder across every
 * host of the database sweeps while it lives) and, holding it, deletes one bounded batch (up
 * to 100, longest expired first) of each: expired users, clients, tokens and resources with
 * their events, and bootstrap tokens an interval past their expiry. Failures are logged; the
 * next interval tries again. expiry.interval 0: never. */
void expiry_tick(struct expiry_timer *t, struct store *store, const struct purser_config *cfg);

#endif
