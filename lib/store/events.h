/* events.h: the event log (issue 13): every committed write appends one event in its own
 * transaction, {seq, kind, name, op, revision, actor, at} plus a detail (never data, never a
 * secret); seq counts per organization and becomes visible in order. */
#ifndef PURSER_EVENTS_H
#define PURSER_EVENTS_H

#include "store/store.h"

#include <jansson.h>

/* An event kind: the kind field of its events, and what an event of it says. */
struct event_kind {
    const char *name;        /* "cluster" */
    const char *description; /* "a cluster was registered, changed or deleted (name: ...)" */
};

/* The kinds are registered: the registry's rows describe theirs (registry_events_register,
 * lib/registry), a resource kind's descriptor its own (resource_kinds_register). event_append
 * refuses any other kind, and so does the feed's kinds= filter; docs/automation.md's Events
 * section lists them all. */

/* Registers kinds: kinds is an array ended by {NULL}, kept by pointer (registered once
 * per process, before the workers start). PURSER_EINTERNAL past 16 arrays. */
int event_kinds_register(const struct event_kind *kinds);

/* The i-th kind of all (the registered ones in order), or NULL past them. */
const struct event_kind *event_kind_at(size_t i);

/* 1 when name is a registered kind, else 0. */
int event_kind_known(const char *name);

/* 0 when kinds (the feed's kinds=, comma-separated; NULL: no filter) names only registered
 * kinds; else PURSER_EINVAL naming the first item that does not: "kinds: unknown event
 * kind 'x' (known: a, b, ...)", or an empty item ("a,,b"). */
int events_kinds_check(const char *kinds, struct purser_error *err);

/* Appends an event for organization org_id by actor (who writes: the authenticated principal's
 * name, or the server's "purser ..." for its own; NULL or "" is recorded as "-"); must run
 * inside the write's transaction (the counter row stays locked until it commits). revision and
 * detail may be NULL; detail is borrowed. A kind not registered is PURSER_EINTERNAL
 * (a call site with a new kind fails until its registry row or descriptor has it). */
int event_append(struct store *store, const char *actor, long long org_id, const char *kind,
                 const char *name, const char *op, const char *revision, const json_t *detail,
                 struct purser_error *err);

/* The same for an organization by name. */
int event_append_named(struct store *store, const char *actor, const char *org, const char *kind,
                       const char *name, const char *op, const char *revision, const json_t *detail,
                       struct purser_error *err);

/* One statement and its event in one transaction: the event is appended only when the
 * statement affected a row (*affected, may be NULL, gets how many). The organization is
 * org_id, or the one named org when org_id is 0. */
int event_exec(struct store *store, const char *actor, long long org_id, const char *org,
               const char *sql, const struct store_value *params, size_t n,
               unsigned long long *affected, const char *kind, const char *name, const char *op,
               struct purser_error *err);

/* What events_read reads: the events after since (kinds: comma-separated, may be NULL, and
 * PURSER_EINVAL as events_kinds_check says; actor: only that actor's, may be NULL), at most
 * limit of them; latest: the newest limit of them instead (since is not read). */
struct events_query {
    long long since;
    const char *kinds;
    const char *actor;
    long limit;
    int latest;
};

/* A page of events for org_id: {events: [...] (oldest first), next: the seq to ask from next}.
 * Only committed events up to the newest seq at the time of the read are looked at; *last gets
 * that seq, and a page shorter than limit (and a latest page) has next = *last (what the
 * filters left out is passed). When events after since were pruned (since is older than the
 * oldest kept one minus one), *gone is set to the oldest kept seq and *out is NULL (the
 * route's 410). */
int events_read(struct store *store, struct arena *arena, long long org_id,
                const struct events_query *q, json_t **out, long long *gone, long long *last,
                struct purser_error *err);

/* Deletes the events older than `days` days (keeping each organization's newest event, so
 * that seq never starts again); *deleted gets how many. */
int events_prune(struct store *store, long days, unsigned long long *deleted,
                 struct purser_error *err);

#endif
