/* worker.c: the worker loop: one arena per request, routing, body limits, the log line. */
#include "worker.h"

#include "auth/chef_auth.h"
#include "auth/keyring.h"
#include "codec/yaml_codec.h"
#include "docs/render.h"
#include "store/events.h"
#include "store/migrate.h"

#include "auth.h"
#include "base/arena.h"
#include "base/buf.h"
#include "base/json_pool.h"
#include "base/log.h"
#include "base/metrics.h"
#include "events_publish.h"
#include "expiry.h"
#include "handlers.h"
#include "request.h"
#include "router.h"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

struct worker {
    struct request_services svc;        /* what its requests use; the worker owns every part */
    struct keyring *keyring;            /* svc.keyring, owned */
    struct yaml_limits document_yaml;   /* svc.document_yaml: from the configuration */
    struct render_limits render_limits; /* svc.render_limits: from the configuration */
    int listen_fd;
    unsigned long served;
    long long auth_changes; /* METRIC_AUTH_CHANGES when the auth cache was last emptied */
    long long auth_noted;   /* the newest auth_changes row seen in the database */
    double auth_checked;    /* when it was read (now_ms) */
    double schema_checked;  /* when the schema's version was last read (now_ms) */
    int schema_version;     /* what it was then; -1 before the first read */
    int schema_contract;    /* the newest contracting migration past this build's (0: none) */
    int change_told;        /* a change of access the handler made was noted and told */

    struct expiry_timer expiry; /* the background sweep of what has expired */
};

static volatile sig_atomic_t stop_requested;
static sigset_t stop_signals; /* each asks the worker to stop (install_handlers) */

/* Reads the keyring named in the configuration; without one, encrypted documents are refused
 * (503) rather than stored in clear. */
static void load_keyring(struct worker *w)
{
    struct purser_error err;
    if (!w->svc.config->keyring_file[0])
        return;
    if (keyring_load(&w->keyring, w->svc.config->keyring_file, &err)) {
        json_t *fields = json_pack("{s:s}", "error", err.message);
        log_message("error", "secrets.keyring cannot be used", fields);
        json_decref(fields);
    }
}

static void on_stop_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

/* Request ids: 8 random bytes drawn once per worker, plus a counter (no syscall per request). */
static void new_request_id(char out[17])
{
    static unsigned long long base, counter;
    if (!base && getrandom(&base, sizeof(base), 0) != (ssize_t)sizeof(base))
        base = (unsigned long long)getpid() << 32;
    unsigned long long id = base + ++counter;
    for (int i = 15; i >= 0; i--, id >>= 4)
        out[i] = "0123456789abcdef"[id & 15];
    out[16] = '\0';
}

/* The request's line, written by hand (no JSON objects to build on the hot path) and held
 * back with the others until the worker goes idle (log.h). */
static void log_request(struct request *req, double ms)
{
    char ts[40];
    long us = (long)(ms * 1000.0);
    struct buf b = BUF_INIT;
    int rc;
    log_timestamp(ts, sizeof(ts));
    rc = buf_printf(&b, "{\"ts\":\"%s\",\"pid\":%ld,\"level\":\"info\",\"method\":", ts,
                    log_process_id());
    if (!rc)
        rc = log_json_string(&b, req->method ? req->method : "-");
    if (!rc)
        rc = buf_adds(&b, ",\"path\":");
    if (!rc)
        rc = log_json_string(&b, req->path ? req->path : "-");
    if (!rc)
        rc = buf_printf(&b,
                        ",\"status\":%d,\"bytes\":%zu,\"ms\":%ld.%03ld,\"principal\":", req->status,
                        req->bytes_sent, us / 1000, us % 1000);
    if (!rc)
        rc = log_json_string(&b, req->principal ? req->principal : "-");
    if (!rc)
        rc = buf_printf(&b, ",\"request_id\":\"%s\"", req->request_id);
    if (!rc && req->route) {
        rc = buf_adds(&b, ",\"route\":");
        if (!rc)
            rc = log_json_string(&b, req->route->pattern);
    }
    if (!rc && req->fcgx && request_env(req, "REMOTE_ADDR")) { /* the client (nginx's real_ip) */
        rc = buf_adds(&b, ",\"remote\":");
        if (!rc)
            rc = log_json_string(&b, request_env(req, "REMOTE_ADDR"));
    }
    if (!rc && !buf_addc(&b, '}'))
        log_buffer_line(b.data, b.len);
    buf_release(&b);
}

/* Splits REQUEST_URI into path and query. */
static int parse_target(struct request *req)
{
    const char *uri = request_env(req, "REQUEST_URI");
    const char *q;
    req->method = request_env(req, "REQUEST_METHOD");
    if (!req->method || !uri || uri[0] != '/')
        return purser_error_set(&req->err, PURSER_EINVAL, "malformed request line");
    q = strchr(uri, '?');
    req->path = q ? arena_strndup(req->arena, uri, (size_t)(q - uri)) : uri;
    req->query = q ? q + 1 : "";
    return req->path ? 0 : purser_error_set(&req->err, PURSER_EINTERNAL, "out of memory");
}

/* PURSER_ETOOLARGE when the declared body is over max (nothing is read). */
static int check_length(struct request *req, size_t max)
{
    const char *text = request_env(req, "CONTENT_LENGTH");
    unsigned long long declared = text && *text ? strtoull(text, NULL, 10) : 0;
    if (declared > max)
        return purser_error_set(&req->err, PURSER_ETOOLARGE,
                                "request body of %llu bytes is larger than the limit of %zu "
                                "(http.max_body_bytes)",
                                declared, max);
    return 0;
}

#define GREW_BY ((size_t)256 << 10) /* new pages past which a request gives memory back */
#define RELEASE_AFTER_MS 500        /* idle this long after a large request: give back */

/* The pages this thread has faulted in so far, in bytes: one system call, no walk of malloc's
 * lists. A read runs on the worker's thread; a write, which may store from a thread of its own,
 * gives memory back whatever it faulted. */
static size_t faulted_bytes(void)
{
    static size_t page;
    struct rusage ru;
    if (!page)
        page = (size_t)sysconf(_SC_PAGESIZE);
    if (getrusage(RUSAGE_THREAD, &ru))
        return 0;
    return (size_t)ru.ru_minflt * page;
}

/* After a request that grew the worker, whatever grew it (a write, a refusal, a big read: the
 * revision list of a long history, a revision's thousands of documents, a render; its arena,
 * the jansson pool, MariaDB's result buffers or malloc's free lists), the worker gives memory
 * back once it has been idle for RELEASE_AFTER_MS: the pool's pages past those its small
 * requests use (at most fcgi.pool_keep_bytes), and what malloc holds free beyond 256 KiB, so
 * that one request does not leave the worker big while a burst of large requests still reuses
 * warm pages. A request grew the worker when it faulted in more than GREW_BY of new pages
 * (a warm worker's small reads, the hot path, fault in none), or was a write or a refusal. */
static void give_back_memory(void)
{
    struct mallinfo2 mi = mallinfo2();
    json_pool_release();
    if (mi.fordblks > ((size_t)256 << 10))
        malloc_trim(0);
}

/* How many requests this worker serves before it is replaced: fcgi.max_requests less up to a
 * fifth, drawn per worker, so that workers started together do not all retire together. */
static unsigned long retirement_after(long max_requests)
{
    unsigned int r = 0;
    if (max_requests <= 0)
        return 0;
    if (getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r))
        r = (unsigned int)getpid();
    return (unsigned long)max_requests - r % ((unsigned long)max_requests / 5 + 1);
}

/* Empties the authentication cache when another worker of this process has changed
 * credentials, memberships or grants since this one last looked (a shared counter: one
 * atomic read per request), or when the database notes a change made through another host or
 * with the purser command (its newest auth_changes row, read at most once a second). A
 * database that cannot be reached leaves the cache to its TTL (cache.auth_ttl). */
static void auth_changes_seen(struct worker *w, struct arena *arena)
{
    long long changes = metrics_get(METRIC_AUTH_CHANGES), noted = w->auth_noted;
    double now = now_ms();
    struct purser_error err;

    if (now - w->auth_checked >= 1000.0) { /* once a second, after a failure too */
        w->auth_checked = now;
        identity_changes_newest(w->svc.store, arena, &noted, &err); /* (failed: noted as was) */
    }
    if (changes != w->auth_changes || noted != w->auth_noted) {
        identity_cache_clear(w->svc.auth_cache);
        w->auth_changes = changes;
        w->auth_noted = noted;
    }
}

/* The end of every transaction of a handler that may change access (ROUTE_AUTH_CHANGE): the
 * change's note for other hosts, written in the same transaction as the change. */
static int change_note(struct store *store, void *ctx, struct purser_error *err)
{
    (void)ctx;
    return identity_changes_note(store, err);
}

/* Once it has committed, before the answer is written: this worker sees the change at once,
 * the others before their next request. */
static void change_committed(void *ctx)
{
    struct worker *w = ctx;
    identity_cache_clear(w->svc.auth_cache);
    metrics_add(METRIC_AUTH_CHANGES, 1);
    w->change_told = 1;
}

/* A change of access a handler made without a transaction: noted and told after it. */
static void change_outside(struct worker *w)
{
    struct purser_error err;
    change_committed(w);
    if (identity_changes_note(w->svc.store, &err)) /* other hosts' within a second */
        log_message("warning", "the change was not noted for other hosts (cache.auth_ttl)", NULL);
}

/* A worker serves on the schema its build was made for, and on a newer one whose migrations
 * since only expanded it (a rolling upgrade: docs/operator/upgrades.md); older, the migrations
 * have not run yet; newer past a contracting migration, this host must be upgraded. Otherwise
 * every request but the health checks and the metrics is refused with 503 and Retry-After,
 * which clients retry. The schema is read again at most once a second, so an upgrade's end is
 * seen within a second. A database that cannot be reached is left to the request, which
 * answers for it. */
static int schema_gate(struct worker *w, struct request *req)
{
    int expected = migrate_latest(purser_migrations, purser_migration_count), version = 0;
    int contract = 0;
    double now = now_ms();
    struct purser_error err;

    if (req->route->handler == health_live || req->route->handler == health_deep ||
        req->route->handler == metrics_answer)
        return 0;
    if (w->schema_version < 0 || now - w->schema_checked >= 1000.0) {
        if (migrate_schema_state(w->svc.store, expected, &version, &contract, &err))
            return 0;
        w->schema_version = version;
        w->schema_contract = contract;
        w->schema_checked = now;
    }
    return migrate_serves(expected, w->schema_version, w->schema_contract, &req->err);
}

/* Serves one request; returns its arena, which the caller frees once the answer is sent
 * (tearing down a large request's memory need not delay its answer), or NULL. *heavy is set
 * for a write or a refusal: what may have built and freed a large structure. */
static struct arena *handle(struct worker *w, FCGX_Request *fcgx, int *heavy)
{
    struct request req;
    double started = now_ms();
    int rc;

    memset(&req, 0, sizeof(req));
    req.fcgx = fcgx;
    req.svc = &w->svc;
    req.principal = "-";
    new_request_id(req.request_id);
    if (!(req.arena = arena_new())) {
        FCGX_PutS("Status: 500 Internal Server Error\r\nContent-Type: text/plain\r\n\r\n"
                  "out of memory\n",
                  fcgx->out);
        *heavy = 1;
        return NULL;
    }
    store_request_begins(w->svc.store); /* (Galera: reads see what the cluster committed) */
    auth_changes_seen(w, req.arena);
    rc = parse_target(&req);
    if (!rc) /* the server-wide body limit comes before routing, as nginx's does */
        rc = check_length(&req, (size_t)w->svc.config->max_body_bytes);
    if (!rc)
        rc = router_match(&req);
    if (!rc)
        rc = schema_gate(w, &req);
    if (!rc)
        rc = auth_api_version(&req);
    if (!rc)
        rc = request_read_body(&req);
    if (!rc && !auth_open_route(&req)) {
        rc = auth_authenticate(&req, w->svc.config->development_mode);
        if (!rc)
            rc = auth_authorize(&req, w->svc.policy);
    }
    w->change_told = 0;
    if (!rc) {
        int changes_access = (req.route->flags & ROUTE_AUTH_CHANGE) != 0;
        if (changes_access) /* noted and told with each transaction, before the answer */
            store_set_txn_end(w->svc.store, change_note, change_committed, w);
        rc = req.route->handler(&req);
        store_set_txn_end(w->svc.store, NULL, NULL, NULL);
        if (!rc && changes_access && !w->change_told) /* (a write outside a transaction) */
            change_outside(w);
    }
    if (!req.responded) { /* a refusal may have answered already (406) */
        if (!rc)
            rc = purser_error_set(&req.err, PURSER_EINTERNAL, "handler sent no response");
        respond_error(&req, rc);
    }
    /* every refusal counted, whatever refused it: an RBAC check, a handler's own (a cluster's
     * facts), a bootstrap token that is used or unknown */
    if (req.status == 403)
        metrics_add(METRIC_RBAC_DENIED, 1);
    if (req.status == 401 && !req.auth_failure_counted)
        metrics_add(METRIC_AUTH_OTHER, 1);
    {
        double ms = now_ms() - started;
        log_request(&req, ms);
        metrics_request(req.route ? (size_t)(req.route - routes) : (size_t)-1, req.status,
                        ms / 1000.0);
    }
    json_decref(req.error_details);
    json_decref(req.error_fields);
    /* With all of the input read, the connection is closed plainly; libfcgi's lingering close
     * (shutdown, wait for nginx's end, read, close) is kept for a request refused before its
     * body was read, whose unread bytes must not turn the close into a reset. */
    if (req.input_read)
        FCGX_Detach(fcgx);
    *heavy = req.status >= 400 ||
             (req.method && strcmp(req.method, "GET") != 0 && strcmp(req.method, "HEAD") != 0);
    return req.arena;
}

static void install_handlers(void)
{
    static const int stops[] = {SIGTERM, SIGHUP, SIGINT};
    struct sigaction sa;
    sigset_t none;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_stop_signal;
    sa.sa_flags = SA_RESTART; /* libfcgi's reads and writes must not see EINTR; poll() still does */
    sigemptyset(&stop_signals);
    for (size_t i = 0; i < sizeof(stops) / sizeof(stops[0]); i++) {
        sigaction(stops[i], &sa, NULL);
        sigaddset(&stop_signals, stops[i]);
    }
    signal(SIGPIPE, SIG_IGN);
    signal(SIGCHLD, SIG_DFL);
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
}

/* FCGX_Accept_r with the stop signals held. Having accepted a unix connection, libfcgi waits
 * (select, up to 2 s) for its first bytes and closes the connection when a signal cuts that
 * wait short: a reload's SIGTERM at that moment made nginx answer 502 (its writev met EPIPE).
 * Held, the signal comes once the request is read, and the worker serves it before it stops;
 * the accept itself does not block (the listening socket is non-blocking). */
static int accept_request(FCGX_Request *fcgx)
{
    sigset_t before;
    int rc;
    pthread_sigmask(SIG_BLOCK, &stop_signals, &before);
    rc = FCGX_Accept_r(fcgx);
    pthread_sigmask(SIG_SETMASK, &before, NULL);
    return rc;
}

int worker_run(const struct purser_config *cfg, const struct rbac_policy *policy, int listen_fd)
{
    struct worker w = {
        .svc.config = cfg, .svc.policy = policy, .listen_fd = listen_fd, .schema_version = -1};
    struct purser_error err;
    FCGX_Request fcgx;
    int epoll_fd = -1, status = 1;

    install_handlers();
    prctl(PR_SET_PDEATHSIG, SIGTERM); /* never outlive the master */
    if (getppid() == 1)
        return 0;
    if (store_new(&w.svc.store, cfg, &err)) {
        log_message("error", err.message, NULL);
        return 1;
    }
    if (*cfg->events_publish_socket) /* committed events to nginx's waiting readers */
        store_set_commit_hook(w.svc.store, events_publish, cfg->events_publish_socket);
    if (!(w.svc.revision_cache = lru_new((size_t)cfg->cache_revisions, (unsigned)cfg->cache_ttl)) ||
        !(w.svc.auth_cache =
              lru_new((size_t)cfg->cache_principals, (unsigned)cfg->cache_auth_ttl)) ||
        !(w.svc.key_cache = chef_key_cache_new((size_t)cfg->cache_principals))) {
        log_message("error", "out of memory for the worker's caches", NULL);
        goto out;
    }
    FCGX_InitRequest(&fcgx, listen_fd, 0);
    epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    {
        struct epoll_event ev = {.events = EPOLLIN | EPOLLEXCLUSIVE, .data.fd = listen_fd};
        if (epoll_fd < 0 || epoll_ctl(epoll_fd, EPOLL_CTL_ADD, listen_fd, &ev) < 0) {
            log_message("error", "epoll on the listening socket failed", NULL);
            goto out;
        }
    }
    load_keyring(&w);
    w.svc.keyring = w.keyring;
    w.document_yaml = yaml_limits_documents;
    w.document_yaml.max_nodes = (size_t)cfg->max_yaml_nodes;
    w.document_yaml.max_alias_nodes = (size_t)cfg->max_yaml_alias_nodes;
    w.document_yaml.nodes_key = "documents.max_yaml_nodes";
    w.document_yaml.alias_key = "documents.max_yaml_alias_nodes";
    w.svc.document_yaml = &w.document_yaml;
    w.render_limits = (struct render_limits){.match_steps = (unsigned long)cfg->render_match_steps,
                                             .max_string = (size_t)cfg->render_max_string,
                                             .max_output = (size_t)cfg->render_max_output};
    w.svc.render_limits = &w.render_limits;
    if (cfg->cache_rendered > 0 &&
        (w.svc.render_cache = lru_new((size_t)cfg->cache_rendered, (unsigned)cfg->cache_ttl)))
        lru_set_max_bytes(w.svc.render_cache, (size_t)cfg->cache_rendered_bytes);
    lru_count_as(w.svc.revision_cache, METRIC_CACHE_REVISION_HIT);
    lru_count_as(w.svc.auth_cache, METRIC_CACHE_AUTH_HIT);
    lru_count_as(w.svc.render_cache, METRIC_CACHE_RENDERED_HIT);
    if (cfg->pool_reserve_bytes > 0) /* made before the first request: see json_pool.h */
        json_pool_install((size_t)cfg->pool_reserve_bytes, (size_t)cfg->pool_keep_bytes);
    /* One malloc arena for the worker's threads too (a document write stores from a thread
     * of its own): a second arena left the worker's big reads on fresh pages afterwards
     * (GET of the 4,000-document revision 36 -> 55 ms in bench/documents) and holds memory
     * of its own. */
    mallopt(M_ARENA_MAX, 1);
    /* The heap keeps what a request freed until the worker is idle (give_back_memory): by
     * default free() gave back the heap's top past 128 KiB at once and a block of 128 KiB or
     * more was mapped and unmapped each time, so every page of 100 clusters moved the break
     * down and up and faulted its pages in again (brk and page faults: 15% of the worker's
     * time on bench/inventory's page). Blocks past 32 MiB (a big render's text) are still
     * mapped, and unmapped when freed. */
    mallopt(M_TRIM_THRESHOLD, 64 << 20);
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    int busy = 0;  /* the last accept succeeded: under load another connection is waiting */
    int grown = 0; /* a request since the worker was last idle may have grown it */
    size_t faulted = faulted_bytes(); /* at the end of the last request */
    unsigned long limit = retirement_after(cfg->max_requests);
    expiry_timer_init(&w.expiry, cfg);
    while (!stop_requested && (limit == 0 || w.served < limit)) {
        struct epoll_event ready;
        expiry_tick(&w.expiry, w.svc.store, cfg); /* when its interval has passed */
        /* EPOLLEXCLUSIVE wakes one worker per connection, not all of them; the listening
         * socket is non-blocking, so a worker that loses the race gets EAGAIN and comes back
         * here, where a stop request is seen within 250 ms. A busy worker tries the next
         * accept at once and waits only when none is there; the held-back request lines are
         * written before it waits. */
        if (!busy) {
            int n;
            log_flush();
            n = epoll_wait(epoll_fd, &ready, 1, grown ? RELEASE_AFTER_MS : 250);
            if (n == 0 && grown) { /* idle after a large request: back to the idle size */
                give_back_memory();
                grown = 0;
            }
            if (n <= 0 || stop_requested)
                continue;
        }
        if (accept_request(&fcgx) < 0) {
            busy = 0;
            continue;
        }
        if (limit && w.served + 1 == limit)
            kill(getppid(), SIGUSR1); /* the last one: the master starts the replacement now */
        int heavy = 0;
        json_pool_begin();
        struct arena *done = handle(&w, &fcgx, &heavy);
        FCGX_Finish_r(&fcgx);
        arena_free(done);
        json_pool_end();
        {
            /* what this request faulted in (nothing faults between requests: the wait, the
             * accept, and a give-back, which only shrinks the worker) */
            size_t now = faulted_bytes();
            grown |= heavy || now - faulted > GREW_BY;
            faulted = now;
        }
        w.served++;
        busy = 1;
    }
    status = 0;
out:
    log_flush();
    if (epoll_fd >= 0)
        close(epoll_fd);
    if (status == 0)
        FCGX_Free(&fcgx, 1);
    lru_free(w.svc.revision_cache);
    lru_free(w.svc.auth_cache);
    lru_free(w.svc.render_cache);
    chef_key_cache_free(w.svc.key_cache);
    keyring_free(w.keyring);
    store_free(w.svc.store);
    return status;
}
