/* events.c: the organization's event feed (issue 13): what changed after a given seq. */
#include "handlers.h"

#include "auth/identity.h"
#include "store/events.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* A non-negative integer query parameter (fallback when absent), or -1 with req->err set. */
static long long number_param(struct request *req, const char *name, long long fallback)
{
    const char *text = request_query(req, name);
    char *end;
    long long n;
    if (!text)
        return fallback;
    errno = 0;
    n = strtoll(text, &end, 10);
    if (!*text || *end || n < 0 || errno == ERANGE) {
        purser_error_set(&req->err, PURSER_EINVAL, "%s must be a non-negative integer, not '%.40s'",
                         name, text);
        return -1;
    }
    return n;
}

int events_list(struct request *req)
{
    long long org_id, gone = 0;
    long long since = number_param(req, "since", 0);
    long long size = since < 0 ? -1 : number_param(req, "page_size", 100);
    const char *kinds = request_query(req, "kinds");
    json_t *out = NULL;
    int rc;
    if (since < 0 || size < 0)
        return req->err.code;
    size = size < 1 ? 1 : size > 1000 ? 1000 : size;
    rc = identity_org_id(req->svc->store, req->arena, request_param(req, "org"), &org_id,
                         &req->err);
    if (!rc)
        rc = events_read(req->svc->store, req->arena, org_id, since, kinds && *kinds ? kinds : NULL,
                         (long)size, &out, &gone, &req->err);
    if (!rc && gone) { /* Teleport's "init" and "unreliable" as one rule: re-list, then follow */
        json_t *body = json_pack("{s:{s:s, s:s}, s:I}", "error", "code", "gone", "message",
                                 "events after that seq are no longer kept (events.retention): "
                                 "re-read what you follow, then ask from oldest_seq",
                                 "oldest_seq", (json_int_t)gone);
        rc = respond_json(req, 410, body, NULL);
        json_decref(body);
        return rc;
    }
    return respond_owned(req, rc, 200, out);
}
