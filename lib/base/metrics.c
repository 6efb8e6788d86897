/* metrics.c: counters in shared memory, written as Prometheus text. */
#include "base/metrics.h"

#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

/* Latency bucket bounds in seconds (Prometheus' defaults); +Inf is the count. */
static const double bounds[] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
#define BUCKETS (sizeof(bounds) / sizeof(bounds[0]))
#define STATUSES 500 /* 100 to 599 */

/* A route's row: a count per status, then the buckets (each counting its own range), the sum
 * of durations in microseconds, and the count. */
#define ROW_STATUS 0
#define ROW_BUCKET STATUSES
#define ROW_SUM (ROW_BUCKET + BUCKETS)
#define ROW_COUNT (ROW_SUM + 1)
#define ROW_LEN (ROW_COUNT + 1)

struct shared {
    long long counters[METRIC_COUNT];
    long long rows[]; /* (routes + 1) * ROW_LEN */
};

static struct shared *S;
static size_t routes;

/* Each counter as one series of its family; a family's series are consecutive. */
static const struct {
    enum metric m;
    const char *family, *type, *help, *label;
} series[] = {
    {METRIC_DB_ERROR_DEADLOCK, "purser_db_errors_total", "counter",
     "Database errors, by kind (a Galera certification conflict is a deadlock)",
     "kind=\"deadlock\""},
    {METRIC_DB_ERROR_LOCK_WAIT, NULL, NULL, NULL, "kind=\"lock_wait\""},
    {METRIC_DB_ERROR_CONNECTION, NULL, NULL, NULL, "kind=\"connection\""},
    {METRIC_DB_ERROR_OTHER, NULL, NULL, NULL, "kind=\"other\""},
    {METRIC_DB_RETRY_DEADLOCK, "purser_db_retries_total", "counter",
     "Transactions run again, by the error that ended the attempt before", "cause=\"deadlock\""},
    {METRIC_DB_RETRY_LOCK_WAIT, NULL, NULL, NULL, "cause=\"lock_wait\""},
    {METRIC_DB_RETRY_CONNECTION, NULL, NULL, NULL, "cause=\"connection\""},
    {METRIC_DB_RECONNECT, "purser_db_reconnects_total", "counter",
     "Database connections made again after one was lost", NULL},
    {METRIC_DB_CAUSAL_WAIT, "purser_db_causal_waits_total", "counter",
     "Requests that waited for their Galera node to apply the cluster's writes first "
     "(database.causal_reads)",
     NULL},
    {METRIC_CACHE_AUTH_HIT, "purser_cache_hits_total", "counter",
     "Lookups answered from a worker's cache, by cache", "cache=\"auth\""},
    {METRIC_CACHE_CHEF_KEY_HIT, NULL, NULL, NULL, "cache=\"chef_key\""},
    {METRIC_CACHE_REVISION_HIT, NULL, NULL, NULL, "cache=\"revision\""},
    {METRIC_CACHE_RENDERED_HIT, NULL, NULL, NULL, "cache=\"rendered\""},
    {METRIC_CACHE_AUTH_MISS, "purser_cache_misses_total", "counter",
     "Lookups a worker's cache could not answer, by cache", "cache=\"auth\""},
    {METRIC_CACHE_CHEF_KEY_MISS, NULL, NULL, NULL, "cache=\"chef_key\""},
    {METRIC_CACHE_REVISION_MISS, NULL, NULL, NULL, "cache=\"revision\""},
    {METRIC_CACHE_RENDERED_MISS, NULL, NULL, NULL, "cache=\"rendered\""},
    {METRIC_AUTH_MISSING, "purser_auth_failures_total", "counter",
     "Requests refused with 401, by reason", "reason=\"missing\""},
    {METRIC_AUTH_TOKEN, NULL, NULL, NULL, "reason=\"token\""},
    {METRIC_AUTH_CHEF_HEADERS, NULL, NULL, NULL, "reason=\"chef_headers\""},
    {METRIC_AUTH_UNKNOWN_PRINCIPAL, NULL, NULL, NULL, "reason=\"unknown_principal\""},
    {METRIC_AUTH_SIGNATURE, NULL, NULL, NULL, "reason=\"signature\""},
    {METRIC_AUTH_OTHER, NULL, NULL, NULL, "reason=\"bootstrap_token\""},
    {METRIC_RBAC_DENIED, "purser_rbac_denials_total", "counter",
     "Requests refused as not allowed (403): by the RBAC policy or a handler's own check", NULL},
    {METRIC_CATALOG_RENDER_FAILED, "purser_catalog_render_failures_total", "counter",
     "Revisions a cluster's catalog could not render (skipped: its fetches serve the last good "
     "rendering; the cluster's status.catalog names the revision)",
     NULL},
    {METRIC_AUTH_CHANGES, "purser_auth_changes_total", "counter",
     "Writes that changed credentials, memberships or grants (each empties every worker's "
     "authentication cache)",
     NULL},
    {METRIC_WORKERS_ALIVE, "purser_workers", "gauge", "Worker processes alive", NULL},
    {METRIC_WORKER_RESTART_RETIRED, "purser_worker_restarts_total", "counter",
     "Workers replaced, by cause", "cause=\"retired\""},
    {METRIC_WORKER_RESTART_CRASHED, NULL, NULL, NULL, "cause=\"crashed\""},
    {METRIC_WORKER_RESTART_RELOAD, NULL, NULL, NULL, "cause=\"reload\""},
    {METRIC_SIGN_IN, "purser_sign_ins_total", "counter",
     "Sign-ins through an identity provider that ended in a session", NULL},
    {METRIC_SIGN_IN_REFUSED_STATE, "purser_sign_in_refusals_total", "counter",
     "Sign-ins through an identity provider refused, by what failed", "reason=\"state\""},
    {METRIC_SIGN_IN_REFUSED_CODE, NULL, NULL, NULL, "reason=\"code\""},
    {METRIC_SIGN_IN_REFUSED_EXPIRED, NULL, NULL, NULL, "reason=\"expired\""},
    {METRIC_SIGN_IN_REFUSED_SIGNATURE, NULL, NULL, NULL, "reason=\"signature\""},
    {METRIC_SIGN_IN_REFUSED_ISSUER, NULL, NULL, NULL, "reason=\"issuer\""},
    {METRIC_SIGN_IN_REFUSED_AUDIENCE, NULL, NULL, NULL, "reason=\"audience\""},
    {METRIC_SIGN_IN_REFUSED_NONCE, NULL, NULL, NULL, "reason=\"nonce\""},
    {METRIC_SIGN_IN_REFUSED_TOKEN, NULL, NULL, NULL, "reason=\"token\""},
    {METRIC_SIGN_IN_REFUSED_PROVIDER, NULL, NULL, NULL, "reason=\"provider\""},
    {METRIC_SIGN_IN_REFUSED_REDIRECT, NULL, NULL, NULL, "reason=\"redirect\""},
    {METRIC_SIGN_IN_REFUSED_USER, NULL, NULL, NULL, "reason=\"user\""},
    {METRIC_SIGN_IN_REFUSED_HANDOFF, NULL, NULL, NULL, "reason=\"handoff\""},
    {METRIC_SIGN_IN_REFUSED_OTHER, NULL, NULL, NULL, "reason=\"other\""},
};

int metrics_init(size_t route_count)
{
    size_t size = sizeof(struct shared) + (route_count + 1) * ROW_LEN * sizeof(long long);
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return -1;
    S = p; /* zeroed by the kernel; pages are touched only where counted */
    routes = route_count;
    return 0;
}

void metrics_add(enum metric m, long long n)
{
    if (S && (unsigned)m < METRIC_COUNT)
        __atomic_fetch_add(&S->counters[m], n, __ATOMIC_RELAXED);
}

void metrics_set(enum metric m, long long value)
{
    if (S && (unsigned)m < METRIC_COUNT)
        __atomic_store_n(&S->counters[m], value, __ATOMIC_RELAXED);
}

long long metrics_get(enum metric m)
{
    return S && (unsigned)m < METRIC_COUNT ? __atomic_load_n(&S->counters[m], __ATOMIC_RELAXED) : 0;
}

static long long *row_of(size_t route)
{
    return S->rows + (route < routes ? route : routes) * ROW_LEN;
}

void metrics_request(size_t route, int status, double seconds)
{
    long long *row;
    size_t b = 0;
    if (!S)
        return;
    row = row_of(route);
    if (status >= 100 && status < 100 + STATUSES)
        __atomic_fetch_add(&row[ROW_STATUS + (size_t)(status - 100)], 1, __ATOMIC_RELAXED);
    while (b < BUCKETS && seconds > bounds[b])
        b++;
    if (b < BUCKETS)
        __atomic_fetch_add(&row[ROW_BUCKET + b], 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&row[ROW_SUM], (long long)(seconds * 1e6 + 0.5), __ATOMIC_RELAXED);
    __atomic_fetch_add(&row[ROW_COUNT], 1, __ATOMIC_RELAXED);
}

/* A label value: backslash, double quote and newline escaped. */
static int put_label(struct buf *out, const char *name, const char *value)
{
    int rc = buf_adds(out, name);
    if (!rc)
        rc = buf_adds(out, "=\"");
    for (const char *p = value; !rc && *p; p++)
        rc = *p == '\\'   ? buf_adds(out, "\\\\")
             : *p == '"'  ? buf_adds(out, "\\\"")
             : *p == '\n' ? buf_adds(out, "\\n")
                          : buf_addc(out, *p);
    if (!rc)
        rc = buf_addc(out, '"');
    return rc;
}

/* {route="...",method="..." (without the closing brace) */
static int put_route(struct buf *out, const struct metrics_route *r)
{
    int rc = buf_addc(out, '{');
    if (!rc)
        rc = put_label(out, "route", r->pattern);
    if (!rc)
        rc = buf_addc(out, ',');
    if (!rc)
        rc = put_label(out, "method", r->method);
    return rc;
}

static int put_head(struct buf *out, const char *family, const char *type, const char *help)
{
    return buf_printf(out, "# HELP %s %s.\n# TYPE %s %s\n", family, help, family, type);
}

static int put_requests(struct buf *out, const struct metrics_route *names, size_t count)
{
    static const struct metrics_route none = {"none", "-"};
    int rc = put_head(out, "purser_http_requests_total", "counter",
                      "Requests answered, by route template, method and status");
    for (size_t r = 0; !rc && r <= routes; r++) {
        const long long *row = row_of(r);
        const struct metrics_route *name = r < count && r < routes ? &names[r] : &none;
        for (size_t s = 0; !rc && s < STATUSES; s++) {
            long long n = __atomic_load_n(&row[ROW_STATUS + s], __ATOMIC_RELAXED);
            if (n) {
                rc = buf_adds(out, "purser_http_requests_total");
                if (!rc)
                    rc = put_route(out, name);
                if (!rc)
                    rc = buf_printf(out, ",status=\"%zu\"} %lld\n", s + 100, n);
            }
        }
    }
    if (!rc)
        rc = put_head(out, "purser_http_request_duration_seconds", "histogram",
                      "Time from a request's arrival to its answer, by route template and "
                      "method");
    for (size_t r = 0; !rc && r <= routes; r++) {
        const long long *row = row_of(r);
        const struct metrics_route *name = r < count && r < routes ? &names[r] : &none;
        long long total = __atomic_load_n(&row[ROW_COUNT], __ATOMIC_RELAXED), below = 0;
        long long us = __atomic_load_n(&row[ROW_SUM], __ATOMIC_RELAXED);
        if (!total)
            continue;
        for (size_t b = 0; !rc && b < BUCKETS; b++) {
            below += __atomic_load_n(&row[ROW_BUCKET + b], __ATOMIC_RELAXED);
            rc = buf_adds(out, "purser_http_request_duration_seconds_bucket");
            if (!rc)
                rc = put_route(out, name);
            if (!rc)
                rc = buf_printf(out, ",le=\"%g\"} %lld\n", bounds[b], below);
        }
        /* the count is read after the buckets: a request counted in between lands in +Inf,
         * so the buckets never exceed +Inf */
        if (!rc)
            rc = buf_adds(out, "purser_http_request_duration_seconds_bucket");
        if (!rc)
            rc = put_route(out, name);
        if (!rc)
            rc = buf_printf(out, ",le=\"+Inf\"} %lld\n", total);
        if (!rc)
            rc = buf_adds(out, "purser_http_request_duration_seconds_sum");
        if (!rc)
            rc = put_route(out, name);
        if (!rc)
            rc = buf_printf(out, "} %lld.%06lld\n", us / 1000000, us % 1000000);
        if (!rc)
            rc = buf_adds(out, "purser_http_request_duration_seconds_count");
        if (!rc)
            rc = put_route(out, name);
        if (!rc)
            rc = buf_printf(out, "} %lld\n", total);
    }
    return rc;
}

int metrics_text(struct buf *out, const struct metrics_route *names, size_t count,
                 const char *version)
{
    const char *family = NULL;
    int rc = 0;
    if (!S)
        return buf_adds(out, "") ? -1 : 0;
    rc = put_requests(out, names, count);
    for (size_t i = 0; !rc && i < sizeof(series) / sizeof(series[0]); i++) {
        if (series[i].family) {
            family = series[i].family;
            rc = put_head(out, family, series[i].type, series[i].help);
        }
        if (!rc)
            rc = buf_adds(out, family);
        if (!rc && series[i].label)
            rc = buf_printf(out, "{%s}", series[i].label);
        if (!rc)
            rc = buf_printf(out, " %lld\n", metrics_get(series[i].m));
    }
    if (!rc)
        rc = put_head(out, "purser_build_info", "gauge", "The running build, by version");
    if (!rc)
        rc = buf_adds(out, "purser_build_info{");
    if (!rc)
        rc = put_label(out, "version", version);
    if (!rc)
        rc = buf_adds(out, "} 1\n");
    return rc ? -1 : 0;
}

int metrics_gauge_text(struct buf *out, const char *family, const char *help, long long value)
{
    int rc = put_head(out, family, "gauge", help);
    if (!rc)
        rc = buf_printf(out, "%s %lld\n", family, value);
    return rc ? -1 : 0;
}
