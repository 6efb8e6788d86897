/* worker.h: a FastCGI worker process: accept, route, handle, respond, log; repeat. */
#ifndef PURSER_WORKER_H
#define PURSER_WORKER_H

#include "config/config.h"
#include "base/lru.h"
#include "auth/rbac.h"
#include "store/store.h"

struct worker;

/* The configuration the worker was started with (borrowed). */
const struct purser_config *worker_config(const struct worker *worker);

/* The worker's database connection (borrowed; connects lazily). */
struct store *worker_store(struct worker *worker);

/* Serves requests from listen_fd (non-blocking) until SIGTERM, SIGHUP or SIGINT, or until
 * cfg->max_requests have been served; finishes the request in flight first. Returns the
 * process exit status. */
int worker_run(const struct purser_config *cfg, const struct rbac_policy *policy, int listen_fd);

/* The worker's cache of policy revision bodies (borrowed). */
struct lru *worker_revision_cache(struct worker *worker);

/* The worker's cache of rendered document revisions (borrowed; NULL when cache.rendered is 0). */
struct lru *worker_render_cache(struct worker *worker);

/* The worker's authentication cache (token and key owners, roles; borrowed). */
struct lru *worker_auth_cache(struct worker *worker);

struct keyring;

/* The keyring that seals encrypted documents (borrowed), or NULL when none is configured or
 * it could not be read (logged at start). */
const struct keyring *worker_keyring(const struct worker *worker);

/* The RBAC policy the worker was started with (borrowed). */
const struct rbac_policy *worker_policy(const struct worker *worker);

#endif
