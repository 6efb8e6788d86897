/* identity_events.c: identity writes with their events (issue 13). An organization's feed
 * shows what changes in it: its own settings and members, its clients, and the users who are
 * its members (users belong to no organization: a user's change is an event in each
 * organization the user is a member of when it is written). */
#include "auth/identity_private.h"

#include "store/events.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void identity_batch_add(struct identity_batch *b, const char *sql, const struct store_value *p,
                        size_t n)
{
    if (b->count >= IDENTITY_BATCH_MAX || n > IDENTITY_BATCH_PARAMS)
        abort(); /* a programming error: the batches are fixed lists */
    b->stmt[b->count].sql = sql;
    memcpy(b->stmt[b->count].p, p, n * sizeof(*p));
    b->stmt[b->count].n = n;
    b->count++;
}

/* The organizations a principal's events go to: a client's own, a user's memberships. */
int identity_principal_orgs(struct store *store, struct arena *arena, long long principal_id,
                            struct store_rows *rows, struct purser_error *err)
{
    struct store_value p[] = {STORE_INT(principal_id), STORE_INT(principal_id)};
    return store_query(store, arena, rows,
                       "SELECT org_id FROM principals WHERE id = ? AND org_id IS NOT NULL UNION "
                       "SELECT DISTINCT org_id FROM memberships WHERE principal_id = ? ORDER BY 1",
                       p, 2, err);
}

int identity_append_each(struct store *store, const char *actor, const struct store_rows *orgs,
                         const char *kind, const char *name, const char *op, const json_t *detail,
                         struct purser_error *err)
{
    int rc = 0;
    for (size_t i = 0; !rc && i < orgs->count; i++)
        rc = event_append(store, actor, strtoll(store_cell(orgs, i, 0), NULL, 10), kind, name, op,
                          NULL, detail, err);
    return rc;
}

int identity_principal_events(struct store *store, const char *actor, long long principal_id,
                              const char *kind, const char *name, const char *op,
                              struct purser_error *err)
{
    struct arena *arena = arena_new();
    struct store_rows orgs;
    int rc = arena ? identity_principal_orgs(store, arena, principal_id, &orgs, err)
                   : purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    if (!rc)
        rc = identity_append_each(store, actor, &orgs, kind, name, op, NULL, err);
    arena_free(arena);
    return rc;
}

/* The organizations are read before the statements run: a principal's delete takes its
 * memberships with it. */
static int batch_txn(struct store *store, void *ctx, struct purser_error *err)
{
    struct identity_batch *b = ctx;
    struct arena *arena = arena_new();
    struct store_rows orgs = {0}, who = {0};
    const char *name = b->name;
    int rc = arena ? 0 : purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    b->affected = 0;
    if (!rc && b->principal_id) {
        struct store_value p = STORE_INT(b->principal_id);
        rc = identity_principal_orgs(store, arena, b->principal_id, &orgs, err);
        if (!rc && b->qualify) /* a key: "<user or client>/<key>" */
            rc = store_query(store, arena, &who, "SELECT name FROM principals WHERE id = ?", &p, 1,
                             err);
        if (!rc && b->qualify && store_cell(&who, 0, 0))
            name = arena_concat(arena, store_cell(&who, 0, 0), "/", b->name, (const char *)NULL);
    }
    if (!rc && b->row)
        rc = identity_revision_check(store, arena, b->row, err);
    for (size_t i = 0; !rc && i < b->count; i++) {
        unsigned long long affected = 0;
        rc = store_exec(store, b->stmt[i].sql, b->stmt[i].p, b->stmt[i].n, &affected, NULL, err);
        b->affected += affected;
    }
    if (!rc && b->row && b->affected && strcmp(b->op, "delete") != 0)
        rc = identity_revision_bump(store, b->row, err);
    if (!rc && b->affected && name) {
        if (b->org)
            rc = event_append_named(store, b->actor, b->org, b->kind, name, b->op, NULL, NULL, err);
        if (!rc)
            rc = identity_append_each(store, b->actor, &orgs, b->kind, name, b->op, NULL, err);
    }
    arena_free(arena);
    return rc;
}

int identity_batch_run(struct store *store, struct identity_batch *b, struct purser_error *err)
{
    return store_txn(store, 0, batch_txn, b, err);
}
