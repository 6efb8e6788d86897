/* metrics.h: counters for Prometheus, shared by the master and its workers.
 *
 * metrics_init() maps one region of shared memory in the master before it starts workers;
 * every worker inherits it and adds to it with atomic operations, so a scrape through any
 * worker sees the whole process, and a worker that is replaced leaves its counts behind.
 * Without metrics_init() (the purser command, unit tests) every call does nothing.
 *
 * Requests are counted by route (an index the caller gives; the route table stays in the web
 * layer), method and status, with a latency histogram per route. The rest are single
 * counters (enum metric), each one series of a family that metrics_text() writes. */
#ifndef PURSER_METRICS_H
#define PURSER_METRICS_H

#include "base/buf.h"

#include <stddef.h>

enum metric {
    /* database errors, by kind, and transactions run again after one (both in the order
     * deadlock, lock wait, connection: the store adds its error's kind to the first) */
    METRIC_DB_ERROR_DEADLOCK,
    METRIC_DB_ERROR_LOCK_WAIT,
    METRIC_DB_ERROR_CONNECTION,
    METRIC_DB_ERROR_OTHER,
    METRIC_DB_RETRY_DEADLOCK,
    METRIC_DB_RETRY_LOCK_WAIT,
    METRIC_DB_RETRY_CONNECTION,
    METRIC_DB_RECONNECT,   /* a connection made again after one was lost */
    METRIC_DB_CAUSAL_WAIT, /* a request's causality wait on a Galera node */
    /* caches: a hit and a miss for each */
    METRIC_CACHE_AUTH_HIT,
    METRIC_CACHE_AUTH_MISS,
    METRIC_CACHE_CHEF_KEY_HIT,
    METRIC_CACHE_CHEF_KEY_MISS,
    METRIC_CACHE_REVISION_HIT,
    METRIC_CACHE_REVISION_MISS,
    METRIC_CACHE_RENDERED_HIT,
    METRIC_CACHE_RENDERED_MISS,
    /* authentication failures, by reason */
    METRIC_AUTH_MISSING,           /* no credentials */
    METRIC_AUTH_TOKEN,             /* a bearer token unknown, expired or revoked */
    METRIC_AUTH_CHEF_HEADERS,      /* signed headers missing, malformed or out of time */
    METRIC_AUTH_UNKNOWN_PRINCIPAL, /* signed as a name that does not exist */
    METRIC_AUTH_SIGNATURE,         /* a signature that no key of the principal verifies */
    METRIC_AUTH_OTHER,             /* another 401: a bootstrap token unknown, used or expired */
    METRIC_RBAC_DENIED,
    /* revisions a cluster's catalog could not render (skipped: fetches serve the last good) */
    METRIC_CATALOG_RENDER_FAILED,
    /* writes that changed who is who or who may do what: a worker that sees this move
     * empties its authentication cache before its next request (fcgi/worker.c) */
    METRIC_AUTH_CHANGES,
    /* workers: the gauge the master keeps, and replacements by cause */
    METRIC_WORKERS_ALIVE,
    METRIC_WORKER_RESTART_RETIRED, /* served fcgi.max_requests */
    METRIC_WORKER_RESTART_CRASHED, /* died of a signal or exited with an error */
    METRIC_WORKER_RESTART_RELOAD,  /* replaced by a reload (SIGHUP) */
    /* sign-ins through an identity provider, and those refused by what failed (oidc_login.h) */
    METRIC_SIGN_IN,
    METRIC_SIGN_IN_REFUSED_STATE,     /* state unknown, used or late */
    METRIC_SIGN_IN_REFUSED_CODE,      /* the provider would not trade the code (replayed) */
    METRIC_SIGN_IN_REFUSED_EXPIRED,   /* the ID token's exp past, or iat ahead */
    METRIC_SIGN_IN_REFUSED_SIGNATURE, /* no key of the JWKS verifies it, or an algorithm refused */
    METRIC_SIGN_IN_REFUSED_ISSUER,    /* iss, or the discovery document's issuer, not the one */
    METRIC_SIGN_IN_REFUSED_AUDIENCE,  /* aud or azp another client */
    METRIC_SIGN_IN_REFUSED_NONCE,
    METRIC_SIGN_IN_REFUSED_TOKEN,    /* an ID token malformed, without sub, or none */
    METRIC_SIGN_IN_REFUSED_PROVIDER, /* no such provider, or deleted meanwhile */
    METRIC_SIGN_IN_REFUSED_REDIRECT, /* a return address of another origin */
    METRIC_SIGN_IN_REFUSED_USER,     /* the user deactivated, its name unusable or taken */
    METRIC_SIGN_IN_REFUSED_HANDOFF,  /* a handoff code unknown, used or late */
    METRIC_SIGN_IN_REFUSED_OTHER,    /* the provider unreachable or wrong */
    METRIC_COUNT
};

/* Maps the shared region for route_count routes (plus one row for requests no route
 * matched). 0, or -1 when the mapping failed (metrics are then off). Call once, in the
 * master, before the first fork. */
int metrics_init(size_t route_count);

/* Adds n to a counter (or a gauge). */
void metrics_add(enum metric m, long long n);

/* Sets a gauge. */
void metrics_set(enum metric m, long long value);

/* The value of a counter (0 when metrics are off). */
long long metrics_get(enum metric m);

/* One answered request: route is its index in the route table, or (size_t)-1 when none
 * matched; status its HTTP status; seconds from its first byte to its answer. */
void metrics_request(size_t route, int status, double seconds);

/* What a route is called in the text: its pattern and method. */
struct metrics_route {
    const char *pattern;
    const char *method;
};

/* The text exposition format (version 0.0.4) of every counter, routes[i] naming route i, and
 * build information (version): 0, or -1 when out of memory. */
int metrics_text(struct buf *out, const struct metrics_route *routes, size_t route_count,
                 const char *version);

/* Appends one gauge family of one unlabelled sample (help without its final period): 0, or -1
 * when out of memory. For values read when scraped rather than counted (GET /metrics). */
int metrics_gauge_text(struct buf *out, const char *family, const char *help, long long value);

#endif
