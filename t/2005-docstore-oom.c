/* 2005-docstore-oom: a revisions list whose query cannot be built tells why: out of memory is
 * PURSER_EINTERNAL "out of memory" (a 500), too many tags PURSER_EINVAL "too many tags" (a
 * 400). Both fail before the query is sent, so no database is needed; the out of memory comes
 * from the failing-allocator hook (arena_fail_after, which a buf's growth counts too).
 */
#include "base/arena.h"
#include "docs/docstore.h"
#include "tap.h"

#include <string.h>

static int revisions(struct docstore_ctx *ctx, const char **tags, size_t tag_count, long limit,
                     struct purser_error *err)
{
    struct docstore_revision_query q = {
        .tags = tags, .tag_count = tag_count, .limit = limit, .with_total = limit > 0};
    json_t *out = NULL;
    int rc;
    purser_error_clear(err);
    rc = docstore_revisions(ctx, &q, &out, err);
    json_decref(out);
    return rc;
}

int main(int argc, char **argv)
{
    static const char *tags[300];
    struct docstore_ctx ctx = {.arena = arena_new(), .org_id = 1};
    struct purser_error err;
    int rc;

    tap_init(argc, argv);
    for (size_t i = 0; i < sizeof(tags) / sizeof(tags[0]); i++)
        tags[i] = "t";

    /* the first allocation of the list is its query's text */
    arena_fail_after(1);
    rc = revisions(&ctx, tags, 1, 0, &err);
    tap_is_int(rc, PURSER_EINTERNAL, "out of memory building the list's query: internal (500)");
    tap_is_str(err.message, "out of memory", "and says so");

    arena_fail_after(1);
    rc = revisions(&ctx, tags, 1, 10, &err);
    tap_is_int(rc, PURSER_EINTERNAL, "out of memory building the total's query: internal (500)");
    tap_is_str(err.message, "out of memory", "and says so");

    arena_fail_after(0);
    rc = revisions(&ctx, tags, sizeof(tags) / sizeof(tags[0]), 0, &err);
    tap_is_int(rc, PURSER_EINVAL, "more tags than a query binds: bad request (400)");
    tap_is_str(err.message, "too many tags", "and says so");

    rc = revisions(&ctx, tags, sizeof(tags) / sizeof(tags[0]), 10, &err);
    tap_is_int(rc, PURSER_EINVAL, "the same for the total's query");
    tap_is_str(err.message, "too many tags", "and says so");

    arena_free(ctx.arena);
    return tap_done();
}
