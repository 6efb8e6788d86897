/* events.c: appending to and reading the event log (events.h). */
#include "store/events.h"

#include <stdlib.h>
#include <string.h>

int event_append(struct store *store, long long org_id, const char *kind, const char *name,
                 const char *op, const char *revision, const json_t *detail,
                 struct purser_error *err)
{
    struct store_value id = STORE_INT(org_id);
    char *text = detail ? json_dumps(detail, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    /* one upsert: an organization's first events, racing, wait on the same row like the rest */
    int rc = store_exec(store,
                        "INSERT INTO event_counters (org_id, last_seq) VALUES (?, 1) ON DUPLICATE "
                        "KEY UPDATE last_seq = last_seq + 1",
                        &id, 1, NULL, NULL, err);
    if (!rc) {
        struct store_value p[] = {STORE_STR(kind),
                                  STORE_STR(name),
                                  STORE_STR(op),
                                  revision ? STORE_STR(revision) : STORE_NULLV,
                                  STORE_STR(store_actor(store)),
                                  text ? STORE_STR(text) : STORE_NULLV,
                                  STORE_INT(org_id)};
        rc = store_exec(store,
                        "INSERT INTO events (org_id, seq, kind, name, op, revision, actor, at, "
                        "detail) SELECT c.org_id, c.last_seq, ?, ?, ?, ?, ?, NOW(6), ? FROM "
                        "event_counters c WHERE c.org_id = ?",
                        p, 7, NULL, NULL, err);
    }
    free(text);
    return rc;
}

int event_append_named(struct store *store, const char *org, const char *kind, const char *name,
                       const char *op, const char *revision, const json_t *detail,
                       struct purser_error *err)
{
    struct arena *arena = arena_new();
    struct store_rows rows;
    struct store_value p = STORE_STR(org);
    int rc = arena ? store_query(store, arena, &rows, "SELECT id FROM organizations WHERE name = ?",
                                 &p, 1, err)
                   : purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    if (!rc && rows.count == 0)
        rc = purser_error_set(err, PURSER_ENOTFOUND, "organization '%s' does not exist", org);
    if (!rc)
        rc = event_append(store, strtoll(store_cell(&rows, 0, 0), NULL, 10), kind, name, op,
                          revision, detail, err);
    arena_free(arena);
    return rc;
}

struct exec_event {
    long long org_id;
    const char *org, *sql, *kind, *name, *op;
    const struct store_value *params;
    size_t n;
    unsigned long long affected;
};

static int exec_event_txn(struct store *store, void *arg, struct purser_error *err)
{
    struct exec_event *e = arg;
    int rc = store_exec(store, e->sql, e->params, e->n, &e->affected, NULL, err);
    if (rc || !e->affected)
        return rc;
    return e->org_id ? event_append(store, e->org_id, e->kind, e->name, e->op, NULL, NULL, err)
                     : event_append_named(store, e->org, e->kind, e->name, e->op, NULL, NULL, err);
}

int event_exec(struct store *store, long long org_id, const char *org, const char *sql,
               const struct store_value *params, size_t n, unsigned long long *affected,
               const char *kind, const char *name, const char *op, struct purser_error *err)
{
    struct exec_event e = {.org_id = org_id, .org = org, .sql = sql, .kind = kind, .name = name,
                           .op = op, .params = params, .n = n};
    int rc = store_txn(store, 0, exec_event_txn, &e, err);
    if (affected)
        *affected = e.affected;
    return rc;
}

int events_read(struct store *store, struct arena *arena, long long org_id, long long since,
                const char *kinds, long limit, json_t **out, long long *gone,
                struct purser_error *err)
{
    struct store_rows rows, first;
    struct store_value id = STORE_INT(org_id);
    json_t *list;
    long long next = since;
    int rc = store_query(store, arena, &first, "SELECT MIN(seq) FROM events WHERE org_id = ?", &id,
                         1, err);
    *out = NULL;
    *gone = 0;
    if (rc)
        return rc;
    if (store_cell(&first, 0, 0) && since < strtoll(store_cell(&first, 0, 0), NULL, 10) - 1) {
        *gone = strtoll(store_cell(&first, 0, 0), NULL, 10);
        return 0;
    }
    {
        struct store_value p[] = {STORE_INT(org_id), STORE_INT(since), STORE_INT(kinds != NULL),
                                  STORE_STR(kinds ? kinds : ""), STORE_INT(limit)};
        rc = store_query(store, arena, &rows,
                         "SELECT seq, kind, name, op, revision, actor, " STORE_ISO_TIME("at")
                         ", detail FROM events WHERE org_id = ? AND seq > ? AND (? = 0 OR "
                         "FIND_IN_SET(kind, ?)) ORDER BY seq LIMIT ?",
                         p, 5, err);
    }
    if (rc)
        return rc;
    list = json_array();
    for (size_t i = 0; i < rows.count; i++) {
        const char *detail = store_cell(&rows, i, 7);
        json_t *e = json_pack("{s:I, s:s, s:s, s:s, s:s?, s:s, s:s}", "seq",
                              (json_int_t)strtoll(store_cell(&rows, i, 0), NULL, 10), "kind",
                              store_cell(&rows, i, 1), "name", store_cell(&rows, i, 2), "op",
                              store_cell(&rows, i, 3), "revision", store_cell(&rows, i, 4),
                              "actor", store_cell(&rows, i, 5), "at", store_cell(&rows, i, 6));
        json_t *d = detail ? json_loads(detail, 0, NULL) : NULL;
        if (d)
            json_object_update(e, d);
        json_decref(d);
        json_array_append_new(list, e);
        next = strtoll(store_cell(&rows, i, 0), NULL, 10);
    }
    *out = json_pack("{s:o, s:I}", "events", list, "next", (json_int_t)next);
    return 0;
}

int events_prune(struct store *store, long days, unsigned long long *deleted,
                 struct purser_error *err)
{
    struct store_value p = STORE_INT(days);
    return store_exec(store,
                      "DELETE e FROM events e JOIN event_counters c ON c.org_id = e.org_id WHERE "
                      "e.at < NOW(6) - INTERVAL ? DAY AND e.seq < c.last_seq",
                      &p, 1, deleted, NULL, err);
}
