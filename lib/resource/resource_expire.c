/* resource_expire.c: the envelope's sub_kind and expires (Teleport's RFD 153), the deletion of
 * expired resources with their events, and the one precondition rule of every kind's writes
 * (resource.h). */
#include "resource/resource_private.h"

#include "base/log.h"
#include "store/events.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int resource_sub_kind_check(const char *where, const json_t *v, struct purser_error *err)
{
    const char *text = json_string_value(v);
    size_t n = text ? strlen(text) : 0;
    int ok =
        n >= 1 && n <= 63 && isalnum((unsigned char)text[0]) && isalnum((unsigned char)text[n - 1]);
    for (size_t i = 0; ok && i < n; i++)
        ok = islower((unsigned char)text[i]) || isdigit((unsigned char)text[i]) ||
             strchr("._-", text[i]);
    if (ok)
        return 0;
    return purser_error_set(err, PURSER_EINVAL,
                            "%s must be 1 to 63 of a-z, 0-9, '.', '_' and '-', starting and ending "
                            "with a letter or digit",
                            where);
}

/* "+HH:MM", "-HH:MM", "Z" or "z": the offset east of UTC in seconds, or ZONE_BAD. */
#define ZONE_BAD 1000000
static long zone_offset(const char *z)
{
    if ((z[0] == 'Z' || z[0] == 'z') && !z[1])
        return 0;
    if ((z[0] == '+' || z[0] == '-') && isdigit((unsigned char)z[1]) &&
        isdigit((unsigned char)z[2]) && z[3] == ':' && isdigit((unsigned char)z[4]) &&
        isdigit((unsigned char)z[5]) && !z[6]) {
        long hours = (z[1] - '0') * 10 + (z[2] - '0'), minutes = (z[4] - '0') * 10 + (z[5] - '0');
        if (hours > 23 || minutes > 59)
            return ZONE_BAD;
        return (z[0] == '-' ? -1 : 1) * (hours * 3600 + minutes * 60);
    }
    return ZONE_BAD;
}

/* "YYYY-MM-DDTHH:MM:SS" at text (digits where digits go): its fields in tm, else 0. */
static int rfc3339_fields(const char *text, struct tm *tm)
{
    static const char shape[] = "dddd-dd-ddTdd:dd:dd";
    for (size_t i = 0; shape[i]; i++) {
        char c = text[i];
        if (shape[i] == 'd'   ? !isdigit((unsigned char)c)
            : shape[i] == 'T' ? c != 'T' && c != 't'
                              : c != shape[i])
            return 0;
    }
    memset(tm, 0, sizeof(*tm));
    tm->tm_year = atoi(text) - 1900;
    tm->tm_mon = atoi(text + 5) - 1;
    tm->tm_mday = atoi(text + 8);
    tm->tm_hour = atoi(text + 11);
    tm->tm_min = atoi(text + 14);
    tm->tm_sec = atoi(text + 17);
    return tm->tm_year >= 70 && tm->tm_mon >= 0 && tm->tm_mon < 12 && tm->tm_mday >= 1 &&
           tm->tm_mday <= 31 && tm->tm_hour < 24 && tm->tm_min < 60 && tm->tm_sec < 60;
}

int resource_expires_parse(const char *where, const char *text, char out[20], long long *when,
                           struct purser_error *err)
{
    struct tm tm;
    const char *rest = NULL;
    long offset = ZONE_BAD;
    time_t t;

    if (text && strlen(text) >= 20 && rfc3339_fields(text, &tm))
        rest = text + 19;
    if (rest && *rest == '.') /* a fraction of a second: kept to the second */
        for (rest++; isdigit((unsigned char)*rest); rest++)
            ;
    if (rest)
        offset = zone_offset(rest);
    if (offset == ZONE_BAD)
        return purser_error_set(err, PURSER_EINVAL,
                                "%s must be an RFC 3339 time such as 2030-01-02T03:04:05Z, not "
                                "'%.40s'",
                                where, text ? text : "(not a string)");
    t = timegm(&tm) - offset;
    if (!gmtime_r(&t, &tm) || tm.tm_year > 9999 - 1900)
        return purser_error_set(err, PURSER_EINVAL, "%s: '%.40s' is past the year 9999", where,
                                text);
    strftime(out, 20, "%Y-%m-%d %H:%M:%S", &tm);
    if (when)
        *when = (long long)t;
    return 0;
}

int resource_precondition(struct arena *arena, const char *kind, const char *name,
                          const char *given, const char *current, int required,
                          struct purser_error *err)
{
    const char *bare = given;
    size_t n;
    if (!given && !required)
        return 0;
    if (!given)
        return purser_error_set(err, PURSER_ECOMPARE,
                                "%s '%s': a write needs the revision it was read at (If-Match or "
                                "metadata.revision); re-read it and retry",
                                kind, name);
    if (strcmp(given, "*") == 0)
        return 0;
    if (strncmp(bare, "W/", 2) == 0)
        bare += 2;
    n = strlen(bare);
    if (n >= 2 && bare[0] == '"' && bare[n - 1] == '"')
        bare = arena_strndup(arena, bare + 1, n - 2);
    if (bare && strcmp(bare, current) == 0)
        return 0;
    return purser_error_set(err, PURSER_ECOMPARE,
                            "%s '%s' has changed since it was read (revision %.40s, now %s); "
                            "re-read it and retry",
                            kind, name, bare ? bare : "", current);
}

/* ---- expired resources ---- */

struct expiry {
    const struct resource_kind *k;
    const struct resource_scope *s;
    const char *name; /* NULL: any */
};

/* Deletes one expired row (id, name, revision, expiry in rows' row i) with its event. */
static int expire_row(struct store *store, const struct expiry *e, const struct store_rows *rows,
                      size_t i, struct purser_error *err)
{
    long long id = strtoll(store_cell(rows, i, 0), NULL, 10);
    struct store_value p = STORE_INT(id);
    json_t *detail =
        json_pack("{s:s, s:s}", "reason", "expired", "expires", store_cell(rows, i, 3));
    int rc = detail ? 0 : purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    if (!rc && e->k->on_delete)
        rc = e->k->on_delete(store, id, e->s, err);
    if (!rc)
        rc = store_exec(store, "DELETE FROM resources WHERE id = ?", &p, 1, NULL, NULL, err);
    if (!rc)
        rc = event_append(store, e->s->actor, e->s->org_id, e->k->stored, store_cell(rows, i, 1),
                          "delete", store_cell(rows, i, 2), detail, err);
    json_decref(detail);
    return rc;
}

static const char expired_sql[] = "SELECT r.id, r.name, r.revision, " STORE_ISO_TIME(
    "r.expires_at") " FROM resources r WHERE "
                    "r.org_id = ? AND r.kind = ? AND r.expires_at <= NOW(6) AND (? = 0 OR r.name = "
                    "?) ORDER BY "
                    "r.expires_at LIMIT 100"; /* EXPIRE_BATCH */

static int expire_txn(struct store *store, void *ctx, struct purser_error *err)
{
    const struct expiry *e = ctx;
    struct store_rows rows;
    struct store_value p[] = {STORE_INT(e->s->org_id), STORE_STR(e->k->stored),
                              STORE_INT(e->name != NULL), STORE_STR(e->name ? e->name : "")};
    struct buf sql = BUF_INIT;
    int rc = buf_adds(&sql, expired_sql) || buf_adds(&sql, " FOR UPDATE")
                 ? purser_error_set(err, PURSER_EINTERNAL, "out of memory")
                 : store_query(store, e->s->arena, &rows, buf_cstr(&sql), p, 4, err);
    buf_release(&sql);
    for (size_t i = 0; !rc && i < rows.count; i++)
        rc = expire_row(store, e, &rows, i, err);
    return rc;
}

int resource_expire(const struct resource_kind *k, const struct resource_scope *s, const char *name,
                    struct purser_error *err)
{
    /* the server expires it, whoever's request found it */
    struct resource_scope server = *s;
    struct expiry e = {k, &server, name};
    struct store_rows rows;
    struct store_value p[] = {STORE_INT(s->org_id), STORE_STR(k->stored), STORE_INT(name != NULL),
                              STORE_STR(name ? name : "")};
    int rc;
    if (k->table) /* such a kind expires its own rows (lib/auth/identity_resource.c) */
        return 0;
    rc = store_query(s->store, s->arena, &rows, expired_sql, p, 4, err);
    if (!rc && rows.count > 0) {
        server.actor = "purser";
        rc = store_txn(s->store, 0, expire_txn, &e, err);
        if (rc) {
            json_t *fields = json_pack("{s:s, s:s}", "kind", k->kind, "error", err->message);
            log_message("warning", "expired resources could not be deleted", fields);
            json_decref(fields);
        }
    }
    return rc;
}

/* ---- the background sweep: every organization, every kind ---- */

struct due {
    const struct resource_kind *const *kinds;
    size_t count;
    unsigned long long deleted;
};

/* The oldest expired rows of every organization and kind (the join lets each organization's
 * (org_id, kind, expires_at) index range be read, not the whole table). */
static const char due_sql[] = "SELECT r.id, r.name, r.revision, " STORE_ISO_TIME(
    "r.expires_at") ", r.org_id, r.kind FROM organizations o JOIN resources r ON r.org_id = "
                    "o.id WHERE r.expires_at <= NOW(6) ORDER BY r.expires_at LIMIT 100";

static const struct resource_kind *kind_stored(const struct due *d, const char *stored)
{
    for (size_t i = 0; i < d->count; i++)
        if (!d->kinds[i]->table && !strcmp(d->kinds[i]->stored, stored))
            return d->kinds[i];
    return NULL;
}

static int due_txn(struct store *store, void *ctx, struct purser_error *err)
{
    struct due *d = ctx;
    struct arena *arena = arena_new();
    const char *sql =
        arena ? arena_concat(arena, due_sql, " FOR UPDATE", (const char *)NULL) : NULL;
    struct store_rows rows;
    int rc = sql ? store_query(store, arena, &rows, sql, NULL, 0, err)
                 : purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    d->deleted = 0;
    for (size_t i = 0; !rc && i < rows.count; i++) {
        struct resource_scope s = {.store = store,
                                   .arena = arena,
                                   .org_id = strtoll(store_cell(&rows, i, 4), NULL, 10),
                                   .actor = "purser"};
        struct expiry e = {kind_stored(d, store_cell(&rows, i, 5)), &s, NULL};
        if (!e.k) /* a kind this binary does not know (a newer one's): left to it */
            continue;
        rc = expire_row(store, &e, &rows, i, err);
        d->deleted++;
    }
    arena_free(arena);
    return rc;
}

int resource_expire_due(const struct resource_kind *const *kinds, size_t count, struct store *store,
                        unsigned long long *deleted, struct purser_error *err)
{
    struct due d = {kinds, count, 0};
    struct arena *arena = arena_new();
    struct store_rows rows;
    int rc = arena ? store_query(store, arena, &rows, due_sql, NULL, 0, err)
                   : purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    size_t found = rc ? 0 : rows.count;
    arena_free(arena);
    *deleted = 0;
    if (!rc && found > 0) /* (a cheap read: nothing expired, nothing written) */
        rc = store_txn(store, 0, due_txn, &d, err); /* each row's scope names the actor, purser */
    if (!rc)
        *deleted = d.deleted;
    return rc;
}

#define SWEEP_SLOTS 64 /* organizations and kinds a worker remembers its last look at */

void resource_expire_sweep(const struct resource_kind *k, const struct resource_scope *s)
{
    static struct {
        const struct resource_kind *k;
        long long org;
        time_t at;
    } seen[SWEEP_SLOTS];
    time_t now = time(NULL);
    size_t slot =
        (size_t)(((uint64_t)s->org_id * 0x9E3779B97F4A7C15u) ^ (uintptr_t)k) % SWEEP_SLOTS;
    if (seen[slot].k == k && seen[slot].org == s->org_id && seen[slot].at == now)
        return;
    seen[slot].k = k;
    seen[slot].org = s->org_id;
    seen[slot].at = now;
    resource_expire(k, s, NULL, &(struct purser_error){0});
}

/* Inside a create's transaction: an expired resource of the name goes first (with its event),
 * so that the name is free. */
int resource_expire_in(struct store *store, const struct resource_kind *k,
                       const struct resource_scope *s, const char *name, struct purser_error *err)
{
    struct resource_scope server = *s; /* the server expires it, as above */
    struct expiry e = {k, &server, name};
    server.actor = "purser";
    return expire_txn(store, &e, err);
}
