/* worker.h: a FastCGI worker process: accept, route, handle, respond, log; repeat. */
#ifndef PURSER_WORKER_H
#define PURSER_WORKER_H

#include "auth/rbac.h"
#include "config/config.h"

/* Serves requests from listen_fd (non-blocking) until SIGTERM, SIGHUP or SIGINT, or until
 * cfg->max_requests have been served; finishes the request in flight first. Returns the
 * process exit status. cfg and policy are borrowed for the worker's life. */
int worker_run(const struct purser_config *cfg, const struct rbac_policy *policy, int listen_fd);

#endif
