/* events.c: the organization's event feed (issue 13): what changed after a given seq. */
#include "handlers.h"

#include "auth/identity.h"
#include "resource/resource.h"
#include "store/events.h"

#include <stdlib.h>
#include <string.h>

int events_list(struct request *req)
{
    long long org_id, gone = 0;
    long long since = request_query_count(req, "since", 0);
    long size = since < 0 ? -1 : resource_page_size(request_query(req, "page_size"), &req->err);
    const char *kinds = request_query(req, "kinds");
    json_t *out = NULL;
    int rc;
    if (since < 0 || size < 0)
        return req->err.code;
    rc = identity_org_id(req->svc->store, req->arena, request_param(req, "org"), &org_id,
                         &req->err);
    if (!rc)
        rc = events_read(req->svc->store, req->arena, org_id, since, kinds && *kinds ? kinds : NULL,
                         size, &out, &gone, &req->err);
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
