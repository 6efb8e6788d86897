/* events.c: the organization's event feed (issue 13): what changed after a given seq, and
 * with wait= the same answer held until something arrives. A reader with nothing to read is
 * not held by a worker: the answer names nchan's channel for the next commit
 * (X-Accel-Redirect), and nginx holds the connection (nginx/purser.conf.in). */
#include "auth.h"
#include "handlers.h"

#include "auth/identity.h"
#include "resource/resource.h"
#include "store/events.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define EVENTS_MAX_WAIT 60
/* What a wait leaves before its credential's end, for nginx to take the reader over and answer */
#define EVENTS_WAIT_MARGIN_MS 500

/* The seconds a wait may last: no longer than the credential that asked for it is taken (issue
 * 49), so that nothing committed after its end reaches the reader; 0: answer at once. */
static long long wait_within_credential(const struct request *req, long long wait)
{
    struct timespec now;
    long long left;
    if (!req->who.expires_ms)
        return wait;
    clock_gettime(CLOCK_REALTIME, &now);
    left = req->who.expires_ms - ((long long)now.tv_sec * 1000 + now.tv_nsec / 1000000) -
           EVENTS_WAIT_MARGIN_MS;
    return left <= 0 ? 0 : left / 1000 < wait ? left / 1000 : wait;
}

/* A reader whose read_policy_group is limited to some policy groups sees no event of the
 * others' pointers (a pointer event is named "group/policy", a group's "group"). */
static void readable_events(const struct group_reach *reach, json_t *events)
{
    for (size_t i = json_array_size(events); i-- > 0;) {
        const json_t *e = json_array_get(events, i);
        const char *kind = json_string_value(json_object_get(e, "kind"));
        const char *name = json_string_value(json_object_get(e, "name"));
        char group[256];
        if (!kind || !name ||
            (strcmp(kind, "policy_group_pointer") && strcmp(kind, "policy_group")))
            continue;
        snprintf(group, sizeof(group), "%.*s", (int)strcspn(name, "/"), name);
        if (!auth_group_reaches(reach, group))
            json_array_remove(events, i);
    }
}

/* kinds= naming a kind there is none of (rc, in req->err): the error, and every kind there is. */
static int unknown_kinds(struct request *req, int rc)
{
    json_t *known = json_array();
    const struct event_kind *k;
    for (size_t i = 0; (k = event_kind_at(i)); i++)
        json_array_append_new(known, json_string(k->name));
    req->error_fields = json_pack("{s:o}", "known", known);
    return rc;
}

int events_list(struct request *req)
{
    long long org_id, gone = 0, last = 0;
    long long since = request_query_count(req, "since", 0);
    long long wait = since < 0 ? -1 : request_query_count(req, "wait", 0);
    long long latest = wait < 0 ? -1 : request_query_count(req, "last", 0);
    long size = latest < 0 ? -1 : resource_page_size(request_query(req, "page_size"), &req->err);
    const char *kinds = request_query(req, "kinds"), *actor = request_query(req, "actor");
    struct events_query q;
    struct group_reach reach;
    int limited;
    json_t *out = NULL;
    int rc;
    if (kinds && !*kinds) /* kinds= with nothing in it filters nothing, as it always did */
        kinds = NULL;
    if (actor && !*actor)
        actor = NULL;
    if (since < 0 || wait < 0 || latest < 0 || size < 0)
        return req->err.code;
    if (latest && (request_query(req, "since") || wait))
        return purser_error_set(&req->err, PURSER_EINVAL,
                                "last: the newest events, without since or wait (follow them "
                                "from the answer's next)");
    if (latest > 1000)
        return purser_error_set(&req->err, PURSER_EINVAL, "last: at most 1000 (got %lld)", latest);
    q = (struct events_query){since, kinds, actor, latest ? (long)latest : size, latest > 0};
    if (wait > EVENTS_MAX_WAIT)
        return purser_error_set(&req->err, PURSER_EINVAL, "wait: at most %d seconds (got %lld)",
                                EVENTS_MAX_WAIT, wait);
    wait = wait_within_credential(req, wait);
    /* before the organization, and long before a wait is handed to nginx */
    if ((rc = events_kinds_check(kinds, &req->err)))
        return unknown_kinds(req, rc);
    if (!rc)
        rc = identity_org_id(req->svc->store, req->arena, request_param(req, "org"), &org_id,
                             &req->err);
    if (!rc)
        rc = events_read(req->svc->store, req->arena, org_id, &q, &out, &gone, &last, &req->err);
    if (!rc && gone) { /* Teleport's "init" and "unreliable" as one rule: re-list, then follow */
        req->error_fields = json_pack("{s:I}", "oldest_seq", (json_int_t)gone);
        return purser_error_set(&req->err, PURSER_EGONE,
                                "events after that seq are no longer kept (events.retention): "
                                "re-read what you follow, then ask from oldest_seq");
    }
    auth_group_reach(req, "read_policy_group", &reach);
    limited = reach.patterns != NULL;
    if (!rc && limited)
        readable_events(&reach, json_object_get(out, "events"));
    if (!rc && wait > 0 && *req->svc->config->events_publish_socket &&
        json_array_size(json_object_get(out, "events")) == 0) {
        /* Nothing yet: nginx waits on the channel of the commit after `last` ("e": its events;
         * "w": a wake-up to read again, for a kinds filter or a reader limited to some policy
         * groups), and answers {events: [], next: last} at the timeout; either answer carries
         * this request's X-Request-Id, which the path ends with. */
        char headers[180];
        snprintf(headers, sizeof(headers),
                 "X-Accel-Redirect: /_purser/watch/%lld/%c%lld.%lld/%lld/%s\r\n", wait,
                 kinds || actor || limited ? 'w' : 'e', org_id, last, last, req->request_id);
        json_decref(out);
        return respond_text(req, 200, "application/json", "", 0, headers);
    }
    return respond_owned(req, rc, 200, out);
}
