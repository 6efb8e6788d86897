/* expiry.c: the background sweep of expired users, clients, tokens, bootstrap tokens,
 * resources and unfinished sign-ins, run by whichever worker of the database's hosts holds the
 * "expiry" lease. */
#include "expiry.h"

#include "auth/identity.h"
#include "auth/oidc_login.h"
#include "base/log.h"
#include "inventory/cluster.h"
#include "registry/registry.h"
#include "resource/resource.h"
#include "store/lease.h"

#include <stdio.h>
#include <unistd.h>

void expiry_timer_init(struct expiry_timer *t, const struct purser_config *cfg)
{
    char host[64] = "";
    gethostname(host, sizeof(host) - 1);
    snprintf(t->holder, sizeof(t->holder), "%s:%ld", host, (long)getpid());
    t->next = time(NULL) + cfg->expiry_interval;
}

static void log_failure(const char *what, const struct purser_error *err)
{
    json_t *fields = json_pack("{s:s, s:s}", "sweep", what, "error", err->message);
    log_message("warning", "the expiry sweep failed; the next interval tries again", fields);
    json_decref(fields);
}

/* One bounded batch of each; what was deleted is logged. */
static void sweep(struct store *store, long grace)
{
    const struct resource_kind *kinds[16];
    size_t count = 0;
    /* the registry's kinds of the resource convention (their rows hold resources) */
    for (size_t i = 0; i < registry_kind_count && count < 16; i++)
        if (registry_kinds[i].generic && registry_kinds[i].resource)
            kinds[count++] = registry_kinds[i].resource;
    unsigned long long resources = 0, bootstrap = 0, sign_ins = 0;
    struct purser_error err;
    /* identity_expire logs its own failures */
    identity_expire(store, "user", 0, NULL);
    identity_expire(store, "client", IDENTITY_ANY_SCOPE, NULL);
    identity_expire(store, "token", IDENTITY_ANY_SCOPE, NULL);
    if (resource_expire_due(kinds, count, store, &resources, &err))
        log_failure("resources", &err);
    if (cluster_tokens_expire(store, grace, &bootstrap, &err))
        log_failure("bootstrap tokens", &err);
    if (oidc_expire(store, &sign_ins, &err))
        log_failure("sign-ins", &err);
    if (resources || bootstrap || sign_ins) {
        json_t *fields =
            json_pack("{s:I, s:I, s:I}", "resources", (json_int_t)resources, "bootstrap_tokens",
                      (json_int_t)bootstrap, "unfinished_sign_ins", (json_int_t)sign_ins);
        log_message("info", "expired resources deleted", fields);
        json_decref(fields);
    }
}

void expiry_tick(struct expiry_timer *t, struct store *store, const struct purser_config *cfg)
{
    time_t now;
    struct purser_error err;
    int held = 0;
    if (cfg->expiry_interval <= 0 || (now = time(NULL)) < t->next)
        return;
    t->next = now + cfg->expiry_interval;
    if (lease_take(store, "expiry", t->holder, 3 * cfg->expiry_interval, &held, &err))
        return; /* the database is away, or another host took it in the same instant */
    if (held)
        sweep(store, cfg->expiry_interval);
}
