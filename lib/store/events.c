/* events.c: appending to and reading the event log (events.h). */
#include "store/events.h"

#include "base/json_text.h"
#include "base/utf8.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The kinds registered: the registry's rows' (registry_events_register, lib/registry), then the
 * resource kinds' (resource_kinds_register); each a {NULL}-ended array, kept by pointer.
 * docs/automation.md's Events section lists them all: t/6005 holds it to the feed's list. */
#define EVENT_KIND_SETS 16
static const struct event_kind *registered[EVENT_KIND_SETS];
static size_t registered_count;

int event_kinds_register(const struct event_kind *kinds)
{
    for (size_t i = 0; i < registered_count; i++)
        if (registered[i] == kinds)
            return 0;
    if (registered_count == EVENT_KIND_SETS)
        return PURSER_EINTERNAL;
    registered[registered_count++] = kinds;
    return 0;
}

const struct event_kind *event_kind_at(size_t i)
{
    for (size_t s = 0; s < registered_count; s++) {
        size_t n = 0;
        while (registered[s][n].name)
            n++;
        if (i < n)
            return &registered[s][i];
        i -= n;
    }
    return NULL;
}

/* The longest part of an unknown kind its 400 quotes (the rest lists the known ones). */
#define EVENTS_KIND_SHOWN 40

static int kind_in(const struct event_kind *kinds, size_t count, const char *name, size_t len)
{
    for (size_t i = 0; i < count && kinds[i].name; i++)
        if (strlen(kinds[i].name) == len && !memcmp(kinds[i].name, name, len))
            return 1;
    return 0;
}

/* Every append asks: each registered array, walked once. */
static int kind_known(const char *name, size_t len)
{
    for (size_t s = 0; s < registered_count; s++)
        if (kind_in(registered[s], (size_t)-1, name, len))
            return 1;
    return 0;
}

int event_kind_known(const char *name)
{
    return kind_known(name, strlen(name));
}

/* "a, b, c": the kinds of the table into out (size bytes), ending in "..." where the rest
 * does not fit (an error message is PURSER_ERROR_MESSAGE_SIZE bytes). */
static void kind_list(char *out, size_t size)
{
    size_t len = 0;
    const struct event_kind *k;
    out[0] = '\0';
    for (size_t i = 0; (k = event_kind_at(i)); i++) {
        const char *sep = i ? ", " : "";
        /* room after each kind but the last for a ", ..." that may have to follow it */
        size_t reserve = event_kind_at(i + 1) ? strlen(", ...") : 0;
        if (len + strlen(sep) + strlen(k->name) + reserve >= size) {
            snprintf(out + len, size - len, "%s...", sep);
            return;
        }
        len += (size_t)snprintf(out + len, size - len, "%s%s", sep, k->name);
    }
}

static int unknown_kind(const char *name, size_t len, struct purser_error *err)
{
    char message[PURSER_ERROR_MESSAGE_SIZE];
    size_t shown = utf8_prefix(name, len, EVENTS_KIND_SHOWN);
    int n = snprintf(message, sizeof(message),
                     "kinds: unknown event kind '%.*s' (known: ", (int)shown, name);
    kind_list(message + n, sizeof(message) - (size_t)n - 1); /* and ")" */
    return purser_error_set(err, PURSER_EINVAL, "%s)", message);
}

int events_kinds_check(const char *kinds, struct purser_error *err)
{
    size_t item = 1, len;
    for (const char *p = kinds; p; p = p[len] ? p + len + 1 : NULL, item++) {
        len = strcspn(p, ",");
        if (len == 0)
            return purser_error_set(err, PURSER_EINVAL,
                                    "kinds: item %zu is empty (a comma-separated list of event "
                                    "kinds)",
                                    item);
        if (!kind_known(p, len))
            return unknown_kind(p, len, err);
    }
    return 0;
}

/* An event as readers see it: its fields, then the detail's (borrowed). */
static json_t *event_object(long long seq, const char *kind, const char *name, const char *op,
                            const char *revision, const char *actor, const char *at,
                            const json_t *detail)
{
    json_t *e =
        json_pack("{s:I, s:s, s:s, s:s, s:s?, s:s, s:s}", "seq", (json_int_t)seq, "kind", kind,
                  "name", name, "op", op, "revision", revision, "actor", actor, "at", at);
    if (e && detail)
        json_object_update(e, (json_t *)detail);
    return e;
}

int event_append(struct store *store, const char *actor, long long org_id, const char *kind,
                 const char *name, const char *op, const char *revision, const json_t *detail,
                 struct purser_error *err)
{
    struct store_value id = STORE_INT(org_id);
    char *text;
    unsigned long long seq = 0;
    char at_sql[40], at_iso[32];
    struct timespec now;
    struct tm tm;
    int rc;
    if (!actor || !*actor)
        actor = "-";
    if (!event_kind_known(kind))
        return purser_error_set(err, PURSER_EINTERNAL,
                                "event kind '%s' is registered neither by a registry row "
                                "(lib/registry) nor by a resource kind",
                                kind);
    text = detail ? json_text(detail, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    clock_gettime(CLOCK_REALTIME, &now);
    gmtime_r(&now.tv_sec, &tm);
    strftime(at_iso, sizeof(at_iso), "%Y-%m-%dT%H:%M:%SZ", &tm);
    strftime(at_sql, 20, "%Y-%m-%d %H:%M:%S", &tm);
    snprintf(at_sql + 19, sizeof(at_sql) - 19, ".%06ld", now.tv_nsec / 1000);
    /* one upsert: an organization's first racing events wait on the same row like the rest;
     * LAST_INSERT_ID(expr) hands the new number back without another read */
    rc = store_exec(store,
                    "INSERT INTO event_counters (org_id, last_seq) VALUES (?, LAST_INSERT_ID(1)) "
                    "ON DUPLICATE KEY UPDATE last_seq = LAST_INSERT_ID(last_seq + 1)",
                    &id, 1, NULL, &seq, err);
    if (!rc) {
        struct store_value p[] = {STORE_INT(org_id),
                                  STORE_INT((long long)seq),
                                  STORE_STR(kind),
                                  STORE_STR(name),
                                  STORE_STR(op),
                                  revision ? STORE_STR(revision) : STORE_NULLV,
                                  STORE_STR(actor),
                                  STORE_STR(at_sql),
                                  text ? STORE_STR(text) : STORE_NULLV};
        rc = store_exec(store,
                        "INSERT INTO events (org_id, seq, kind, name, op, revision, actor, at, "
                        "detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        p, 9, NULL, NULL, err);
        if (rc == PURSER_EEXISTS) /* a number the counter's lock should have made ours */
            rc = store_conflict(store, "an event number was taken already", err);
    }
    if (!rc) /* handed to the commit hook once the transaction commits */
        store_notice(store, json_pack("{s:I, s:I, s:o}", "org", (json_int_t)org_id, "seq",
                                      (json_int_t)seq, "event",
                                      event_object((long long)seq, kind, name, op, revision, actor,
                                                   at_iso, detail)));
    free(text);
    return rc;
}

int event_append_named(struct store *store, const char *actor, const char *org, const char *kind,
                       const char *name, const char *op, const char *revision, const json_t *detail,
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
        rc = event_append(store, actor, strtoll(store_cell(&rows, 0, 0), NULL, 10), kind, name, op,
                          revision, detail, err);
    arena_free(arena);
    return rc;
}

struct exec_event {
    long long org_id;
    const char *actor, *org, *sql, *kind, *name, *op;
    const struct store_value *params;
    size_t n;
    unsigned long long affected;
};

static int exec_event_txn(struct store *store, void *arg, struct purser_error *err)
{
    struct exec_event *e = arg;
    int rc = store_exec(store, e->sql, e->params, e->n, &e->affected, NULL, err);
    if (!rc && e->affected && e->org_id)
        rc = event_append(store, e->actor, e->org_id, e->kind, e->name, e->op, NULL, NULL, err);
    else if (!rc && e->affected)
        rc = event_append_named(store, e->actor, e->org, e->kind, e->name, e->op, NULL, NULL, err);
    return rc;
}

int event_exec(struct store *store, const char *actor, long long org_id, const char *org,
               const char *sql, const struct store_value *params, size_t n,
               unsigned long long *affected, const char *kind, const char *name, const char *op,
               struct purser_error *err)
{
    struct exec_event e = {.actor = actor,
                           .org_id = org_id,
                           .org = org,
                           .sql = sql,
                           .kind = kind,
                           .name = name,
                           .op = op,
                           .params = params,
                           .n = n};
    int rc = store_txn(store, 0, exec_event_txn, &e, err);
    if (affected)
        *affected = e.affected;
    return rc;
}

int events_read(struct store *store, struct arena *arena, long long org_id,
                const struct events_query *q, json_t **out, long long *gone, long long *last,
                struct purser_error *err)
{
    struct store_rows rows, head;
    struct store_value id = STORE_INT(org_id);
    json_t *list;
    long long since = q->latest ? 0 : q->since, next = since, newest = 0, oldest;
    int rc = events_kinds_check(q->kinds, err);
    *out = NULL;
    *gone = 0;
    /* the newest committed seq first: a transaction that commits after this read numbers
     * its events above it, so "nothing in (since, newest]" is a place a waiter can resume */
    if (!rc)
        rc = store_query(store, arena, &head,
                         "SELECT (SELECT last_seq FROM event_counters WHERE org_id = ?), (SELECT "
                         "MIN(seq) FROM events WHERE org_id = ?)",
                         (struct store_value[]){id, id}, 2, err);
    if (!rc) {
        if (store_cell(&head, 0, 0))
            newest = strtoll(store_cell(&head, 0, 0), NULL, 10);
        oldest = store_cell(&head, 0, 1) ? strtoll(store_cell(&head, 0, 1), NULL, 10) : newest + 1;
        if (!q->latest && since < oldest - 1) {
            *gone = oldest;
            return 0;
        }
        {
            /* the latest: read backwards from the newest (the primary key's order), then turned */
            struct store_value p[] = {STORE_INT(org_id),
                                      STORE_INT(since),
                                      STORE_INT(newest),
                                      STORE_INT(q->kinds != NULL),
                                      STORE_STR(q->kinds ? q->kinds : ""),
                                      STORE_INT(q->actor != NULL),
                                      STORE_STR(q->actor ? q->actor : ""),
                                      STORE_INT(q->limit)};
            rc = store_query(store, arena, &rows,
                             q->latest
                                 ? "SELECT * FROM (SELECT seq, kind, name, op, revision, actor, "
                                   "" STORE_ISO_TIME("at") ", detail FROM events WHERE org_id = "
                                                           "? AND seq > ? AND seq <= ? AND (? = "
                                                           "0 OR FIND_IN_SET(kind, ?)) AND (? = "
                                                           "0 OR actor = ?) ORDER BY seq DESC "
                                                           "LIMIT ?) e ORDER BY seq"
                                 : "SELECT seq, kind, name, op, revision, actor, " STORE_ISO_TIME(
                                       "at") ", detail FROM events WHERE org_id = ? AND seq > ? "
                                             "AND seq <= ? AND (? = 0 OR FIND_IN_SET(kind, ?)) "
                                             "AND (? = 0 OR actor = ?) ORDER BY seq LIMIT ?",
                             p, 8, err);
        }
    }
    if (!rc) {
        list = json_array();
        for (size_t i = 0; i < rows.count; i++) {
            const char *detail = store_cell(&rows, i, 7);
            json_t *d = detail ? json_loads(detail, 0, NULL) : NULL;
            next = strtoll(store_cell(&rows, i, 0), NULL, 10);
            json_array_append_new(
                list, event_object(next, store_cell(&rows, i, 1), store_cell(&rows, i, 2),
                                   store_cell(&rows, i, 3), store_cell(&rows, i, 4),
                                   store_cell(&rows, i, 5), store_cell(&rows, i, 6), d));
            json_decref(d);
        }
        /* a short page read all of (since, newest]: the next ask starts past what the filters
         * left out; the latest page always reads up to the newest */
        if ((q->latest || (long)rows.count < q->limit) && newest > next)
            next = newest;
        *last = newest;
        *out = json_pack("{s:o, s:I}", "events", list, "next", (json_int_t)next);
    }
    return rc;
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
