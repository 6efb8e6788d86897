/* health.c: GET /healthz (the process answers), GET /healthz/deep (database and schema) and
 * GET /metrics (Prometheus). */
#include "auth/key_expiry.h"
#include "base/metrics.h"
#include "config/config.h"
#include "handlers.h"
#include "router.h"
#include "store/migrate.h"

#include <stdlib.h>
#include <string.h>

int health_live(struct request *req)
{
    return respond_text(req, 200, "text/plain", "ok\n", 3, "Cache-Control: no-store\r\n");
}

int health_deep(struct request *req)
{
    int current = 0, contract = 0;
    int expected = migrate_latest(purser_migrations, purser_migration_count);
    int rc = migrate_schema_state(req->svc->store, expected, &current, &contract, &req->err);
    json_t *body;

    if (rc)
        return rc == PURSER_EUNAVAIL
                   ? rc
                   : purser_error_set(&req->err, PURSER_EUNAVAIL, "database check failed");
    /* (a newer schema that only expanded: this host serves during a rolling upgrade) */
    if ((rc = migrate_serves(expected, current, contract, &req->err)))
        return rc;
    /* build_schema: the schema this purser-fcgi was made for (an older host's, during a roll) */
    body = json_pack("{s:s, s:s, s:i, s:i}", "status", "ok", "database", "ok", "schema_version",
                     current, "build_schema", expected);
    rc = respond_json(req, 200, body, "Cache-Control: no-store\r\n");
    json_decref(body);
    return rc;
}

/* The gauges read from the database when scraped; none when it does not answer (the counters
 * still do: an unreachable database is what they are asked about). */
static int metrics_from_store(struct request *req, struct buf *text)
{
    struct purser_error ignored = {0};
    long long next = 0;
    if (key_expiry_next(req->svc->store, &next, &ignored))
        return 0;
    return metrics_gauge_text(text, "purser_key_next_expiry_timestamp_seconds",
                              "When the first live Chef key with an expiration date expires (Unix "
                              "time; 0: none will)",
                              next);
}

int metrics_answer(struct request *req)
{
    static struct metrics_route *names; /* the route table's patterns and methods, made once */
    struct buf text = BUF_INIT;
    int rc;
    if (!names && (names = calloc(route_count, sizeof(*names))))
        for (size_t i = 0; i < route_count; i++)
            names[i] = (struct metrics_route){routes[i].pattern, routes[i].method};
    rc = names ? metrics_text(&text, names, route_count, PURSER_VERSION) : -1;
    if (!rc)
        rc = metrics_from_store(req, &text);
    if (rc)
        rc = purser_error_set(&req->err, PURSER_EINTERNAL, "out of memory");
    else
        rc = respond_text(req, 200, "text/plain; version=0.0.4; charset=utf-8", buf_cstr(&text),
                          text.len, "Cache-Control: no-store\r\n");
    buf_release(&text);
    return rc;
}
