/* health.c: GET /healthz (the process answers) and GET /healthz/deep (database and schema). */
#include "store/migrate.h"
#include "handlers.h"

#include <string.h>

int health_live(struct request *req)
{
    return respond_text(req, 200, "text/plain", "ok\n", 3, "Cache-Control: no-store\r\n");
}

int health_deep(struct request *req)
{
    int current = 0, expected = migrate_latest(purser_migrations, purser_migration_count);
    int rc = migrate_current(req->svc->store, &current, &req->err);
    json_t *body;

    if (rc)
        return rc == PURSER_EUNAVAIL
                   ? rc
                   : purser_error_set(&req->err, PURSER_EUNAVAIL, "database check failed");
    if (current != expected)
        return purser_error_set(&req->err, PURSER_EUNAVAIL,
                                "database schema is at version %d, this build needs %d", current,
                                expected);
    body =
        json_pack("{s:s, s:s, s:i}", "status", "ok", "database", "ok", "schema_version", current);
    rc = respond_json(req, 200, body, "Cache-Control: no-store\r\n");
    json_decref(body);
    return rc;
}
